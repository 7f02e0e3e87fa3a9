import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotPlatform

/// Checks a compiled Core ML model folder (`.mlmodelc`) without Core ML: the parts Core ML needs to load it
/// are there and no file in it is empty (a download cut short leaves empty or missing parts).
package enum CoreMLBundleCheck {
    /// Files (relative) found in the folder.
    package static func check(folder: String) throws -> [String] {
        guard FileStatus(path: folder, followingLinks: true)?.kind == .folder else {
            throw ModelDepotError(
                .invalidModelFile, "\((folder as NSString).lastPathComponent) is missing or not a folder")
        }
        let files = CacheScanner.walkFiles(folder)
        guard files.contains("coremldata.bin") else {
            throw ModelDepotError(.invalidModelFile, "\((folder as NSString).lastPathComponent) lacks coremldata.bin")
        }
        guard files.contains(where: { $0 == "model.mil" || $0.hasPrefix("model.espresso") || $0.hasPrefix("model") })
        else {
            throw ModelDepotError(
                .invalidModelFile, "\((folder as NSString).lastPathComponent) lacks its model description (model.mil)")
        }
        for file in files where (CacheScanner.regularFileSize(folder + "/" + file) ?? 0) == 0 {
            throw ModelDepotError(.invalidModelFile, "\((folder as NSString).lastPathComponent)/\(file) is empty")
        }
        return files
    }
}
