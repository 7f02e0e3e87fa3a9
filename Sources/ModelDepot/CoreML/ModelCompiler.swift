import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotTrust

#if canImport(CoreML)
    import CoreML
#endif

/// Turns a downloaded Core ML model (`.mlmodel` file or `.mlpackage` folder) into the compiled `.mlmodelc` the
/// device loads. A pull given a compiler compiles each such model once per model and OS version, as a
/// `compiling` phase; on Linux there is none and the phase is skipped.
public protocol ModelCompiler: Sendable {
    /// The OS the output is for ("macOS-15.4.1"): a model is compiled again after an OS update.
    var platformKey: String { get }
    /// Compiles `model` and returns the compiled `.mlmodelc` folder, anywhere: the pull moves it into the cache.
    func compile(_ model: URL) async throws -> URL
}

#if canImport(CoreML)
    /// Core ML's own compiler: `MLModel.compileModel(at:)` (async, iOS 16 / macOS 13), which writes the
    /// `.mlmodelc` into a temporary folder. Never compiled here (no Apple SDK on the build machine).
    public struct CoreMLCompiler: ModelCompiler {
        public init() {}

        public var platformKey: String {
            let version = ProcessInfo.processInfo.operatingSystemVersion
            #if os(iOS)
                let system = "iOS"
            #elseif os(macOS)
                let system = "macOS"
            #elseif os(visionOS)
                let system = "visionOS"
            #else
                let system = "apple"
            #endif
            return "\(system)-\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"
        }

        public func compile(_ model: URL) async throws -> URL {
            try await MLModel.compileModel(at: model)
        }
    }
#endif

/// Which selected files are Core ML sources, and where their compiled form lives in the cache:
/// `<repository>/.modeldepot/compiled/<commit>/<platform>/<path without extension>.mlmodelc`, beside the
/// snapshot (never in it: a Hub client walking the snapshot must see only the commit's files).
enum CompiledModels {
    /// The models among `files`: each `.mlmodel` file, and each `.mlpackage` folder (files under it), in order.
    static func sources(in files: [RepoFilePath]) -> [String] {
        var models: [String] = []
        for file in files.map(\.value) {
            let parts = file.split(separator: "/")
            if let index = parts.firstIndex(where: { $0.hasSuffix(".mlpackage") }) {
                let package = parts[...index].joined(separator: "/")
                if !models.contains(package) { models.append(package) }
            } else if file.hasSuffix(".mlmodel") {
                models.append(file)
            }
        }
        return models
    }

    static func location(
        of model: String, in repository: CachedRepository, commit: String, platform: String
    ) -> URL {
        let stem = (model as NSString).deletingPathExtension
        return repository.folder.appendingPathComponent(".modeldepot/compiled/\(commit)/\(platform)/\(stem).mlmodelc")
    }

    /// Compiles what is not compiled yet for this platform; returns every model's compiled folder.
    static func compile(
        _ models: [String], snapshot: URL, repository: CachedRepository, commit: String,
        compiler: any ModelCompiler, progress: (_ done: Int, _ total: Int, _ current: String?) -> Void
    ) async throws -> [String: URL] {
        var compiled: [String: URL] = [:]
        let missing = models.filter {
            !FileManager.default.fileExists(
                atPath: location(of: $0, in: repository, commit: commit, platform: compiler.platformKey).path)
        }
        var done = models.count - missing.count
        for model in models where !missing.contains(model) {
            compiled[model] = location(of: model, in: repository, commit: commit, platform: compiler.platformKey)
        }
        for model in missing {
            progress(done, models.count, model)
            let destination = location(of: model, in: repository, commit: commit, platform: compiler.platformKey)
            let output: URL
            do {
                output = try await compiler.compile(snapshot.appendingPathComponent(model))
            } catch let error as CancellationError {
                throw error
            } catch {
                throw ModelDepotError(
                    .invalidModelFile,
                    "Core ML could not compile \(model): \(error). Its files verified; if it keeps failing, the model needs a newer OS or is not a Core ML model.",
                    underlying: error)
            }
            try HubCache.createFolder(destination.deletingLastPathComponent())
            // Moved in under a temporary name, then renamed: a reader sees a whole compiled model or none.
            let staging = destination.deletingLastPathComponent().appendingPathComponent(
                ".\(destination.lastPathComponent).\(UUID().uuidString.prefix(8))")
            try FileManager.default.moveItem(at: output, to: staging)
            try? FileManager.default.removeItem(at: destination)
            try FileManager.default.moveItem(at: staging, to: destination)
            compiled[model] = destination
            done += 1
        }
        progress(done, models.count, nil)
        return compiled
    }
}
