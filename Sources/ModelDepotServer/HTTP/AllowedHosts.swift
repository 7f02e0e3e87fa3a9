import Foundation

/// The `Host` names a mirror without a token answers to, against DNS rebinding: a page on `evil.example` that
/// re-points its own name at 127.0.0.1 (or a LAN address) can make a visitor's browser talk to the mirror, but the
/// browser still sends `Host: evil.example`. Rebinding needs a name, so IP literals are always accepted, as are
/// `localhost`, this machine's own host name and its `.local` (mDNS) name, and the names the operator adds with
/// `serve --allowed-host` (a reverse proxy's public name, a LAN alias). A mirror that requires a token needs no
/// such check: a rebinding page cannot send the token.
struct AllowedHosts: Sendable {
    /// Lowercased, without a trailing dot.
    let names: Set<String>

    /// - Parameters:
    ///   - extra: names given with `--allowed-host`.
    ///   - machineName: this machine's host name (`gethostname`); its first label and `.local` name count too.
    init(extra: [String], machineName: String = ProcessInfo.processInfo.hostName) {
        var names: Set<String> = ["localhost"]
        let machine = Self.normalized(machineName)
        if !machine.isEmpty {
            names.insert(machine)
            let label = String(machine.prefix { $0 != "." })
            names.insert(label)
            names.insert(label + ".local")
        }
        for name in extra { names.insert(Self.normalized(Self.hostPart(of: name) ?? name)) }
        self.names = names
    }

    /// Whether a request with this `Host` (or HTTP/2 `:authority`) may be answered. A request without one
    /// (HTTP/1.0) names nobody else and is answered.
    func allows(_ authority: String?) -> Bool {
        guard let authority, !authority.isEmpty else { return true }
        // Most requests name the mirror by its IPv4 address: read those from the bytes, allocating nothing.
        if Self.isIPv4Authority(authority.utf8) { return true }
        guard let host = Self.hostPart(of: authority) else { return false }
        if Self.isIPLiteral(host) { return true }
        let name = Self.normalized(host)
        return names.contains(name) || name.hasSuffix(".localhost")
    }

    /// The host of `host[:port]` or `[v6][:port]`; nil when it is malformed (a port that is not a number).
    static func hostPart(of authority: String) -> String? {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || (rest.first == ":" && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else {
                return nil
            }
            return String(authority[...close])
        }
        guard let colon = authority.lastIndex(of: ":") else { return authority }
        let port = authority[authority.index(after: colon)...]
        guard port.allSatisfy(\.isASCIIDigit) else { return nil }
        return String(authority[..<colon])
    }

    /// A bracketed IPv6 address, or a dotted-quad IPv4 address (the only form a browser sends: it rewrites
    /// `127.1` and `2130706433` to `127.0.0.1`, and a name cannot end in a number).
    static func isIPLiteral(_ host: String) -> Bool {
        if host.hasPrefix("[") && host.hasSuffix("]") {
            let inside = host.dropFirst().dropLast()
            return !inside.isEmpty && inside.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." || $0 == "%" }
        }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCIIDigit) && Int(part)! <= 255
            }
    }

    /// `a.b.c.d` or `a.b.c.d:port`, each part 0–255 in at most three digits, the port digits only: what
    /// ``hostPart(of:)`` and ``isIPLiteral(_:)`` accept together for an IPv4 address.
    static func isIPv4Authority(_ bytes: String.UTF8View) -> Bool {
        var parts = 0
        var digits = 0
        var value = 0
        var inPort = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if inPort { continue }
                digits += 1
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                guard digits <= 3, value <= 255 else { return false }
            case UInt8(ascii: "."):
                guard !inPort, digits > 0, parts < 3 else { return false }
                parts += 1
                digits = 0
                value = 0
            case UInt8(ascii: ":"):
                guard !inPort, digits > 0, parts == 3 else { return false }
                inPort = true
            default:
                return false
            }
        }
        return inPort || (parts == 3 && digits > 0)
    }

    private static func normalized(_ name: String) -> String {
        var name = name.lowercased()
        while name.hasSuffix(".") { name.removeLast() }
        return name
    }

    /// The 421 a request for another name gets, saying how to allow the name when it is legitimate.
    static func refusal(_ authority: String) -> HubServerError {
        HubServerError(
            status: 421, code: nil,
            message:
                "This mirror answers requests addressed to localhost, an IP address or this machine's own name, not '\(authority)' (a protection against DNS rebinding). If clients reach it by that name (a reverse proxy, a LAN alias), start it with --allowed-host \(hostPart(of: authority) ?? authority), or require a token (--token-file).",
            commit: nil)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
