/// A DNS-SD TXT record (RFC 6763 §6): a run of strings, each one length byte and up to 255 bytes of `key=value`.
///
/// Read as hostile: the record comes from anyone on the link. A string without `=` is a key with no value; an
/// empty one, or one whose key is empty, is skipped; keys compare without case and the first of a key wins
/// (§6.4); a length that runs past the end ends the record there.
package struct DNSTextRecord: Sendable, Hashable {
    /// The pairs in the order they were written or read; the first of each key only.
    package private(set) var pairs: [(key: String, value: String?)]

    /// A record of `pairs`, written in that order (a later pair with a key already given is dropped).
    ///
    /// - Precondition: every key is 1-9 printable ASCII characters other than `=` (§6.4 advises 9 at most) and
    ///   each `key=value` fits in 255 bytes: the announcer builds them from constants.
    package init(_ pairs: [(key: String, value: String?)]) {
        self.pairs = []
        for pair in pairs where self[pair.key] == nil {
            precondition(Self.isKey(pair.key), "not a DNS-SD TXT key: \(pair.key)")
            precondition(Self.encoded(pair).count <= 255, "a DNS-SD TXT string is 255 bytes at most")
            self.pairs.append(pair)
        }
    }

    /// The record in `bytes`, as far as it is well formed.
    package init(parsing bytes: [UInt8]) {
        pairs = []
        // Keys seen, lower-cased: a record of 65535 one-byte strings stays linear to read.
        var seen: Set<String> = []
        var index = 0
        while index < bytes.count {
            let length = Int(bytes[index])
            index += 1
            guard index + length <= bytes.count else { break }
            let string = bytes[index..<index + length]
            index += length
            let key: String
            let value: String?
            if let equals = string.firstIndex(of: UInt8(ascii: "=")) {
                key = String(decoding: string[string.startIndex..<equals], as: UTF8.self)
                value = String(decoding: string[(equals + 1)...], as: UTF8.self)
            } else {
                key = String(decoding: string, as: UTF8.self)
                value = nil
            }
            guard Self.isKey(key), seen.insert(key.lowercased()).inserted else { continue }
            pairs.append((key, value))
        }
    }

    /// The value of `key` (any case); nil when the key is absent or has no value.
    package subscript(key: String) -> String? {
        pairs.first { $0.key.lowercased() == key.lowercased() }?.value
    }

    /// The record's bytes. An empty record is one empty string (§6.1).
    package var bytes: [UInt8] {
        guard !pairs.isEmpty else { return [0] }
        return pairs.flatMap { pair -> [UInt8] in
            let string = Self.encoded(pair)
            return [UInt8(string.count)] + string
        }
    }

    package static func == (lhs: DNSTextRecord, rhs: DNSTextRecord) -> Bool {
        lhs.pairs.elementsEqual(rhs.pairs) { $0.key == $1.key && $0.value == $1.value }
    }

    package func hash(into hasher: inout Hasher) {
        for pair in pairs {
            hasher.combine(pair.key)
            hasher.combine(pair.value)
        }
    }

    private static func encoded(_ pair: (key: String, value: String?)) -> [UInt8] {
        Array(pair.key.utf8) + (pair.value.map { [UInt8(ascii: "=")] + Array($0.utf8) } ?? [])
    }

    /// Printable US-ASCII other than `=`, at least one character (§6.4).
    static func isKey(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E && $0 != UInt8(ascii: "=") }
    }
}
