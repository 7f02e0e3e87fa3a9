import Foundation

/// The hosts a request reaches without a proxy (`NO_PROXY`), with curl's meaning and Python's additions: a comma
/// (or space) separated list; `*` as the whole value matches every host; a name matches itself and every name below it,
/// with or without a leading dot (`example.com` and `.example.com` both match `example.com` and
/// `cdn.example.com`; a name with a wildcard, `*.example.com`, matches nothing, as in curl and Python); an IP
/// address matches itself (dotted decimal without leading zeros), a CIDR range (`10.0.0.0/8`, `fd00::/8`; a prefix
/// of 1 or more) every address in it;
/// and an entry with a port (`example.com:8443`, `[::1]:8080`) matches only requests to that port. Names compare
/// without case and without a trailing dot. Loopback is not special: a mirror on 127.0.0.1 needs an entry, as with
/// curl.
public struct NoProxy: Sendable, Hashable {
    enum Host: Sendable, Hashable {
        case name(String)
        case address([UInt8])
        case range([UInt8], prefix: Int)
    }

    struct Entry: Sendable, Hashable {
        let host: Host
        let port: Int?
    }

    let matchesEverything: Bool
    let entries: [Entry]

    /// Nothing bypasses the proxy.
    public static let none = NoProxy("")

    public init(_ list: String) {
        let items = list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init)
        matchesEverything = list.trimmingCharacters(in: .whitespaces) == "*"
        entries = items.compactMap(Self.entry)
    }

    /// Whether a request to `host` on `port` goes around the proxy.
    public func bypasses(host: String, port: Int) -> Bool {
        if matchesEverything { return true }
        let name = Self.normalized(host)
        let address = IPAddress.parse(name)
        for entry in entries where entry.port == nil || entry.port == port {
            switch entry.host {
            case .name(let suffix):
                if name == suffix || name.hasSuffix("." + suffix) { return true }
            case .address(let bytes):
                if address == bytes { return true }
            case .range(let network, let prefix):
                if let address, IPAddress.contains(network, prefix: prefix, address) { return true }
            }
        }
        return false
    }

    public var isEmpty: Bool { !matchesEverything && entries.isEmpty }

    private static func entry(_ item: String) -> Entry? {
        var text = item
        var port: Int?
        if text.hasPrefix("[") {
            // [v6], [v6]:port or [v6]/prefix
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            if rest.hasPrefix(":") {
                guard let number = Int(rest.dropFirst()) else { return nil }
                port = number
            } else if !rest.isEmpty && !rest.hasPrefix("/") {
                return nil
            }
            text = String(text[text.index(after: text.startIndex)..<close]) + (rest.hasPrefix("/") ? rest : "")
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            // name:port or v4:port (an IPv6 address has more than one colon)
            port = Int(text[text.index(after: colon)...])
            guard port != nil else { return nil }
            text = String(text[..<colon])
        }
        if let slash = text.firstIndex(of: "/") {
            guard let prefix = Int(text[text.index(after: slash)...]),
                let network = IPAddress.parse(String(text[..<slash])),
                prefix >= 1, prefix <= network.count * 8
            else { return nil }
            return Entry(host: .range(network, prefix: prefix), port: port)
        }
        if let address = IPAddress.parse(text) { return Entry(host: .address(address), port: port) }
        var name = normalized(text)
        while name.hasPrefix(".") { name.removeFirst() }
        // A wildcard inside a name matches no host (no host name holds a `*`): kept, and never matching.
        return name.isEmpty ? nil : Entry(host: .name(name), port: port)
    }

    static func normalized(_ host: String) -> String {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        while name.hasSuffix(".") { name.removeLast() }
        return name
    }
}

/// IPv4 and IPv6 addresses as bytes, parsed without the C library (a host from a URL, an entry of `NO_PROXY`).
enum IPAddress {
    /// Four bytes for dotted-quad IPv4, sixteen for IPv6 (an IPv4 tail allowed); nil for anything else.
    static func parse(_ text: String) -> [UInt8]? {
        if let v4 = parseV4(text) { return v4 }
        return parseV6(text)
    }

    static func parseV4(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            // No leading zeros: `010` is octal to the C library (8), and a different host than it looks.
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }),
                part == "0" || !part.hasPrefix("0"), let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    static func parseV6(_ text: String) -> [UInt8]? {
        var text = Substring(text)
        if let zone = text.firstIndex(of: "%") { text = text[..<zone] }
        guard text.contains(":") else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String) -> [UInt8]? {
            if part.isEmpty { return [] }
            var bytes: [UInt8] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, piece.contains("."), let v4 = parseV4(String(piece)) {
                    bytes += v4
                    continue
                }
                guard !piece.isEmpty, piece.count <= 4, piece.allSatisfy(\.isHexDigit),
                    let value = UInt16(piece, radix: 16)
                else { return nil }
                bytes += [UInt8(value >> 8), UInt8(value & 0xff)]
            }
            return bytes
        }
        // An IPv4 tail belongs at the very end: not before `::`.
        guard let head = groups(halves[0]), halves.count == 1 || !halves[0].contains(".") else { return nil }
        if halves.count == 1 { return head.count == 16 ? head : nil }
        guard let tail = groups(halves[1]), head.count + tail.count <= 14 else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }

    /// Whether `address` lies in `network`/`prefix` (both of one family).
    static func contains(_ network: [UInt8], prefix: Int, _ address: [UInt8]) -> Bool {
        guard network.count == address.count else { return false }
        var bits = prefix
        for index in network.indices where bits > 0 {
            let mask: UInt8 = bits >= 8 ? 0xff : ~(0xff >> UInt8(bits))
            if network[index] & mask != address[index] & mask { return false }
            bits -= 8
        }
        return true
    }
}
