/// A validated Hub repository id: `name` or `namespace/name`.
///
/// The rules are the Hub's: 1–96 characters from `[A-Za-z0-9._-]` per the whole id, at most one `/`, no part
/// starting or ending with `.` or `-`, no `--` or `..`, no `.git` suffix. An id that passes can be joined to
/// URLs and cache paths without further escaping, and maps to exactly one cache folder and back.
public struct RepoID: Sendable, Hashable, Codable, CustomStringConvertible, Comparable {
    /// The owner (user or organisation); nil for legacy ids without one.
    public let namespace: String?
    /// The repository's name within its owner.
    public let name: String

    /// Parses `name` or `namespace/name`; throws `invalidArgument` with the rule when it is not a valid id.
    public init(_ text: String) throws {
        // A mirror parses an id on every request: one pass over the bytes for the ids that pass, the rules one by
        // one (to say which failed) for the rest.
        if let slash = Self.validatedSlash(text.utf8) {
            if let slash {
                namespace = String(text[..<slash])
                name = String(text[text.utf8.index(after: slash)...])
            } else {
                namespace = nil
                name = text
            }
            return
        }
        let invalid = { (reason: String) in
            ModelDepotError(
                .invalidArgument,
                "'\(text)' is not a valid repository id: \(reason). Use 'name' or 'namespace/name' with letters, digits, '.', '_' and '-'."
            )
        }
        guard (1...96).contains(text.count) else { throw invalid("it must be 1 to 96 characters long") }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 2 else { throw invalid("it has more than one '/'") }
        for part in parts {
            guard !part.isEmpty else { throw invalid("a part is empty") }
            guard part.unicodeScalars.allSatisfy(Self.isAllowed) else {
                throw invalid("it contains a character other than letters, digits, '.', '_' and '-'")
            }
            guard let first = part.first, let last = part.last, !".-".contains(first), !".-".contains(last) else {
                throw invalid("a part starts or ends with '.' or '-'")
            }
        }
        guard !text.contains("--"), !text.contains("..") else { throw invalid("it contains '--' or '..'") }
        guard !text.hasSuffix(".git") else { throw invalid("it ends with '.git'") }
        namespace = parts.count == 2 ? parts[0] : nil
        name = parts[parts.count - 1]
    }

    public var description: String { namespace.map { "\($0)/\(name)" } ?? name }

    /// The repo's folder in a Hub cache: `models--org--name`, `datasets--name`.
    package func cacheFolderName(type: RepoType) -> String {
        ([type.cacheFolderPrefix] + (namespace.map { [$0] } ?? []) + [name]).joined(separator: "--")
    }

    /// Parses a cache folder name back into its type and id; nil for anything else.
    package static func fromCacheFolderName(_ folder: String) -> (RepoType, RepoID)? {
        guard let (type, text) = cacheFolderParts(folder), let id = try? RepoID(text) else { return nil }
        return (type, id)
    }

    /// The type and the id text of a cache folder name (`models--org--name` → model, `org/name`), the id not
    /// validated: a scan reports what is there, as Python's `scan_cache_dir` does. Nil without a known type.
    package static func cacheFolderParts(_ folder: String) -> (type: RepoType, id: String)? {
        guard let separator = folder.range(of: "--") else { return nil }
        let prefix = String(folder[..<separator.lowerBound])
        guard let type = RepoType.allCases.first(where: { $0.cacheFolderPrefix == prefix }) else { return nil }
        return (type, folder[separator.upperBound...].replacingOccurrences(of: "--", with: "/"))
    }

    public static func < (lhs: RepoID, rhs: RepoID) -> Bool { lhs.description < rhs.description }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// For a valid id, where its `/` is (`.some(nil)` without one); nil for an id that breaks a rule.
    private static func validatedSlash(_ bytes: String.UTF8View) -> String.Index?? {
        var count = 0
        var slash: String.Index?
        var previous: UInt8 = UInt8(ascii: "/")
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            let atPartStart = previous == UInt8(ascii: "/")
            switch byte {
            case UInt8(ascii: "/"):
                guard slash == nil, !atPartStart, previous != UInt8(ascii: "."), previous != UInt8(ascii: "-")
                else { return nil }
                slash = index
            case UInt8(ascii: "."), UInt8(ascii: "-"):
                guard !atPartStart, previous != byte else { return nil }
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                break
            default:
                return nil
            }
            previous = byte
            count += 1
            bytes.formIndex(after: &index)
        }
        guard (1...96).contains(count), previous != UInt8(ascii: "/"), previous != UInt8(ascii: "."),
            previous != UInt8(ascii: "-"), !bytes.reversed().starts(with: "tig.".utf8)
        else { return nil }
        return .some(slash)
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "-": true
        default: false
        }
    }
}
