import Crypto
import Foundation

/// A content digest as OCI writes it, `sha256:` and 64 lower-case hex digits: the only algorithm this client
/// checks, so a descriptor naming another is refused by name rather than trusted unchecked.
public struct OCIDigest: Sendable, Hashable, Codable, CustomStringConvertible, Comparable {
    /// The 64 hex digits.
    public let hex: String

    /// Parses `sha256:<64 lower-case hex>`; nil for anything else.
    public init?(_ text: String) {
        guard text.hasPrefix("sha256:") else { return nil }
        let hex = text.dropFirst("sha256:".count)
        guard hex.utf8.count == 64,
            hex.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else { return nil }
        self.hex = String(hex)
    }

    /// The digest of a SHA-256 given as 64 hex digits (a Hub LFS file's name).
    public init?(sha256Hex: String) { self.init("sha256:" + sha256Hex.lowercased()) }

    /// The digest of `bytes`.
    public init(of bytes: some DataProtocol) {
        hex = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    public var description: String { "sha256:" + hex }

    public static func < (lhs: OCIDigest, rhs: OCIDigest) -> Bool { lhs.hex < rhs.hex }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let digest = OCIDigest(text) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "'\(text.prefix(80))' is not a sha256 digest (sha256: and 64 lower-case hex digits); other algorithms are not checked here, so they are refused"
                ))
        }
        self = digest
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
