import Foundation

/// The sidecar next to a partial download: which bytes are on disk and which version of the file they are.
///
/// Written atomically (temporary file, then rename) after the bytes it describes have been written, so after
/// a crash at any instant it never claims bytes that are not in the partial file.
struct ResumeRecord: Codable, Equatable, Sendable {
    static let currentVersion = 1

    var version: Int = ResumeRecord.currentVersion
    var url: String
    var totalSize: Int64
    var validators: ResourceValidators
    var completed: ByteRangeSet
    var expectedSHA256: String?

    /// Reads the sidecar at `path`; nil when it is missing, unreadable or from another format version.
    static func load(from path: String) -> ResumeRecord? {
        guard let data = FileManager.default.contents(atPath: path),
            let record = try? JSONDecoder().decode(ResumeRecord.self, from: data),
            record.version == currentVersion, record.totalSize >= 0
        else { return nil }
        return record
    }

    func save(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(self)
        try AtomicFile.replace(data, atPath: path)
    }
}
