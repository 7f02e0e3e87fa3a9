import Foundation
import ModelDepotCore
import ModelDepotPlatform

/// The resume sidecar of one download run, kept open and rewritten in place.
///
/// A rename per save (temporary file, `rename` over the old one) cost ~8 % of a loopback download's CPU in
/// the file system. A record that fits in one page is instead written with a single `pwrite` at offset 0,
/// padded with spaces (JSON allows trailing whitespace) to at least the length of what it replaces: a
/// one-page write lands whole or not at all when the process dies, so a reader after a crash sees the old
/// record or the new one, never a mix. (A reader racing a live download, such as a status display, can
/// catch a half-copied page; it then fails to parse and counts as no record.) Larger records fall back to
/// `AtomicFile`. Not thread-safe: the run calls it under its checkpoint lock.
final class ResumeRecordFile {
    /// The most a single in-place write may cover: one page on every platform we run on.
    static let inPlaceLimit = 4096

    let path: String
    private var descriptor: Int32 = -1
    /// Bytes the file holds now; a shorter record is padded to cover them.
    private var length = 0

    init(path: String) {
        self.path = path
    }

    deinit { closeDescriptor() }

    func save(_ record: ResumeRecord) throws {
        let json = Array(record.jsonText().utf8)
        if descriptor < 0 { try openDescriptor() }
        var bytes = json
        if bytes.count < length { bytes += repeatElement(UInt8(ascii: " "), count: length - bytes.count) }
        guard bytes.count <= Self.inPlaceLimit else {
            closeDescriptor()
            do {
                try AtomicFile.replace(json, atPath: path, mode: 0o600)
            } catch {
                throw POSIXFailure.error(error.operation, errno: error.code)
            }
            return
        }
        let file = LocalPartialFile(descriptor: descriptor, path: path)
        try bytes.withUnsafeBytes { try file.write($0, at: 0) }
        length = bytes.count
    }

    private func openDescriptor() throws {
        // Owner only: the record names the URL, which may be private (a signed or internal address).
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard opened >= 0 else { throw POSIXFailure.error("Cannot open \(path)", errno: errno) }
        descriptor = opened
        var info = stat()
        length = fstat(opened, &info) == 0 ? Int(info.st_size) : Self.inPlaceLimit + 1
    }

    private func closeDescriptor() {
        guard descriptor >= 0 else { return }
        LocalPartialFile(descriptor: descriptor, path: path).close()
        descriptor = -1
    }
}
