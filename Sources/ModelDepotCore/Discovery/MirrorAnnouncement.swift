import Foundation

/// What a mirror says about itself when it announces itself on the local network with DNS-SD
/// (`modeldepot serve --advertise`): the service type `_hf-mirror._tcp`, and a TXT record with
///
/// - `txtvers=1`: this layout;
/// - `path=/…`: where the Hub's API starts on the server (`/` for a mirror at the root);
/// - `token=required` or `token=none`: whether the mirror wants a token;
/// - `scheme=http` or `scheme=https`.
///
/// Read from the network it is hostile: `init(parsing:)` refuses a path that is not a plain absolute path, an
/// unknown scheme or version, and ``endpoint(address:port:)`` an address no mirror on the LAN could have.
package struct MirrorAnnouncement: Sendable, Hashable {
    /// The DNS-SD service type mirrors announce and clients browse for.
    package static let serviceType = "_hf-mirror._tcp"

    /// Where the Hub API starts: `/`, or a prefix like `/hub`, without a trailing `/` (except the root).
    package var path: String
    /// Whether the mirror answers only with a token. A discovered mirror is never sent one: a token goes only to a
    /// mirror the user named.
    package var tokenRequired: Bool
    /// `http` or `https`.
    package var scheme: String

    package init(path: String = "/", tokenRequired: Bool, scheme: String = "http") {
        self.path = path
        self.tokenRequired = tokenRequired
        self.scheme = scheme
    }

    /// The TXT record announcing it.
    package var text: DNSTextRecord {
        DNSTextRecord([
            ("txtvers", "1"), ("path", path), ("token", tokenRequired ? "required" : "none"), ("scheme", scheme),
        ])
    }

    /// The announcement a TXT record carries; nil when it is not one this client understands or trusts the shape
    /// of (another version, a path with `..`, `%`, `?`, `#`, `\` or a control character, another scheme).
    package init?(parsing text: DNSTextRecord) {
        guard text["txtvers"] ?? "1" == "1" else { return nil }
        let path = text["path"] ?? "/"
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/".utf8)
        guard path.hasPrefix("/"), path.utf8.count <= 200, path.utf8.allSatisfy(allowed.contains),
            !path.split(separator: "/").contains(where: { $0 == ".." || $0 == "." })
        else { return nil }
        var trimmed = path
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        let scheme = (text["scheme"] ?? "http").lowercased()
        guard ["http", "https"].contains(scheme) else { return nil }
        switch text["token"]?.lowercased() {
        case "required": tokenRequired = true
        case "none", nil: tokenRequired = false
        default: return nil
        }
        self.path = trimmed
        self.scheme = scheme
    }

    /// The mirror's base URL at `address` (dotted IPv4) and `port`; nil for port 0, an address that is not
    /// IPv4, or one no other host on the LAN has (unspecified `0.x`, loopback `127.x` — which would point this
    /// client at its own machine's services — link-local `169.254.x` is allowed, multicast and reserved `224.x`
    /// and above are not).
    package func endpoint(address: String, port: UInt16) -> URL? {
        let octets = address.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
        guard port != 0, octets.count == 4, octets.allSatisfy({ $0 != nil }),
            address.split(separator: ".").allSatisfy({ $0 == "0" || !$0.hasPrefix("0") })
        else { return nil }
        let first = octets[0]!
        guard first != 0, first != 127, first < 224 else { return nil }
        return URL(string: "\(scheme)://\(address):\(port)\(path == "/" ? "" : path)")
    }
}
