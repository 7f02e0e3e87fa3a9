import Foundation

/// How revisions, paths and ETags are spelled on the wire (the protocol note, §1.1 and §9).
package enum HubEncoding {
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// A revision with no safe characters: `refs/pr/1` → `refs%2Fpr%2F1`. Also used for tree sub-paths.
    package static func encodeSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// A file path in a resolve URL: each component encoded, `/` kept (`a b/c#d` → `a%20b/c%23d`).
    package static func encodePath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { encodeSegment(String($0)) }.joined(
            separator: "/")
    }

    /// An ETag as a blob name: `W/"abc"`, `"abc"` and `abc` all give `abc`.
    package static func normalizeETag(_ etag: String) -> String {
        var value = Substring(etag.trimmingCharacters(in: .whitespaces))
        if value.hasPrefix("W/") { value = value.dropFirst(2) }
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
        return String(value)
    }

    /// Whether a normalised ETag is a SHA-256 (an LFS file, checkable by hashing) rather than a git blob id.
    package static func isSHA256(_ etag: String) -> Bool { isLowercaseHex(etag, count: 64) }

    /// Whether `text` is a 40-hex git id: a commit, or the blob id of a regular file.
    package static func isGitID(_ text: String) -> Bool { isLowercaseHex(text, count: 40) }

    /// Whether a normalised ETag can name a file: letters, digits, `.`, `_`, `-`, at most 128 characters, not
    /// starting with `.`. Hub ETags (40- or 64-hex) always pass; anything that could climb out of `blobs/` fails.
    package static func isSafeBlobName(_ name: String) -> Bool {
        guard (1...128).contains(name.utf8.count), !name.hasPrefix(".") else { return false }
        return name.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "-": true
            default: false
            }
        }
    }

    private static func isLowercaseHex(_ text: String, count: Int) -> Bool {
        text.utf8.count == count && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
