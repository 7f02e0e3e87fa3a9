import Foundation

/// A fresh folder under the system's temporary directory, removed by ``remove()``.
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public init(prefix: String = "modeldepot-test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func path(_ name: String) -> URL { url.appendingPathComponent(name) }

    public func remove() { try? FileManager.default.removeItem(at: url) }

    /// Writes each file of `files` (paths relative to `folder` below this one) with the folders it needs: a
    /// repository's layout for a mirror to serve. Not synced to disk (a test's files need not survive a crash).
    public func write(_ files: [String: [UInt8]], in folder: String = "") throws {
        for (path, bytes) in files {
            let file = self.path(folder.isEmpty ? path : folder + "/" + path)
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).writeUnsynced(to: file)
        }
    }
}

/// Deterministic pseudo-random bytes, so fixtures need no files and every byte position is distinct enough
/// that misplaced or duplicated data changes the hash.
public enum SampleData {
    public static func bytes(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        // Odd and distinct for every seed (`seed | 1` would give 40 and 41 the same stream).
        var state = (seed &* 0x9E37_79B9_7F4A_7C15) | 1
        result.withUnsafeMutableBytes { raw in
            var index = 0
            while index < count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                var word = state
                let take = min(8, count - index)
                withUnsafeBytes(of: &word) {
                    raw.baseAddress!.advanced(by: index).copyMemory(from: $0.baseAddress!, byteCount: take)
                }
                index += take
            }
        }
        return result
    }
}

/// Waits (with real time only as a safety net) until `condition` holds. The net is wide: the whole suite runs
/// its tests at once on two cores, and a state that takes milliseconds alone can take tens of seconds to come
/// while other tests keep both threads busy (20 s was not enough).
public func waitUntil(
    timeout: Duration = .seconds(90), _ condition: @Sendable () async -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}
