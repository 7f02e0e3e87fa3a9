/// A file path inside a repository, checked to be safe to join to a folder on disk.
///
/// Hub listings are hostile input: a name can try `../../etc/passwd`, `/abs`, `C:\x`, a NUL or a newline.
/// This is the one place that decides what a repository path may be; every cache write and every file the
/// mirror serves goes through it.
public struct RepoFilePath: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// The path with `/` separators, relative, normalised.
    public let value: String

    /// A checked path: refuses empty, absolute and `..` paths and control characters (`invalidArgument`).
    public init(_ raw: String) throws {
        let refuse = { (reason: String) in
            ModelDepotError(
                .protocolViolation,
                "Refusing the repository path '\(raw.debugDescription.dropFirst().dropLast())': \(reason).")
        }
        guard !raw.isEmpty, raw.utf8.count <= 4096 else { throw refuse("it is empty or too long") }
        guard !raw.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw refuse("it contains a control character")
        }
        guard !raw.hasPrefix("/"), !raw.contains("\\") else { throw refuse("it is absolute or uses '\\'") }
        let components = raw.split(separator: "/", omittingEmptySubsequences: false)
        for component in components {
            guard !component.isEmpty else { throw refuse("it has an empty component") }
            guard component != ".", component != ".." else { throw refuse("it has a '.' or '..' component") }
        }
        if let first = components.first, first.count == 2, first.last == ":" {
            throw refuse("it starts with a drive letter")
        }
        value = raw
    }

    /// The path's components.
    public var components: [String] { value.split(separator: "/").map(String.init) }

    /// Whether any component is hidden (starts with `.`), like `.git/config` or `.cache/x`.
    public var isHidden: Bool { components.contains { $0.hasPrefix(".") } }

    public var description: String { value }

    public static func < (lhs: RepoFilePath, rhs: RepoFilePath) -> Bool { lhs.value < rhs.value }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}
