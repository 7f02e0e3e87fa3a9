import Foundation
import ModelDepotCore
import ModelDepotTransfer
import ModelDepotTrust

// Checking files against a lock hashes them with the engine's hasher, which the lock's own target (below the
// engine) does not link.
extension ModelLock.File {
    /// How the file at `url` differs from this one (`missing`, `12 bytes, the lock says 13`, `sha256:…, the
    /// lock says sha256:…`); nil when its size and digest are the lock's. Hashes the whole file.
    package func mismatch(at url: URL) -> String? {
        guard
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?
                .int64Value
        else { return "missing" }
        guard size == self.size else { return "\(size) bytes, the lock says \(self.size)" }
        do {
            let actual =
                sha256 != nil
                ? "sha256:\(try FileDigests.sha256(ofFileAt: url.path))"
                : "git:\(try FileDigests.gitBlobID(ofFileAt: url.path))"
            return actual == digestText ? nil : "\(actual), the lock says \(digestText)"
        } catch {
            return "cannot be read: \(error)"
        }
    }
}
