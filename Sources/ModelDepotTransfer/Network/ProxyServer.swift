import Foundation
import ModelDepotCore

/// A proxy a request may go through: an HTTP proxy (`CONNECT`, with Basic credentials when its URL has them) or a
/// SOCKSv5 one without credentials — what async-http-client supports. Parsed from a proxy URL as curl and Python
/// read one: `http://[user:password@]host[:port]`, `host:port` (HTTP), `socks5h://host[:port]` or `socks5://`.
public struct ProxyServer: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case http, socks5
    }

    public let kind: Kind
    public let host: String
    public let port: Int
    /// Percent-decoded credentials from the URL, sent as `Proxy-Authorization: Basic` on `CONNECT`.
    public let username: String?
    public let password: String?

    public init(kind: Kind, host: String, port: Int, username: String? = nil, password: String? = nil) {
        self.kind = kind
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// Parses a proxy URL; `setting` names where it came from (`HTTPS_PROXY`, `--proxy`) in the errors.
    ///
    /// - Throws: `invalidArgument` for a URL that is not one, an `https://` proxy (TLS to the proxy itself is not
    ///   supported), a SOCKS proxy with credentials, or another scheme — each saying what works instead.
    public init(parsing text: String, setting: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        // No scheme: an HTTP proxy, as curl and Python's requests take it.
        let spelled = trimmed.contains("://") ? trimmed : "http://" + trimmed
        guard let components = URLComponents(string: spelled), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty, components.fragment == nil, components.query == nil,
            components.port.map({ (1...65535).contains($0) }) ?? true
        else {
            throw ModelDepotError(
                .invalidArgument,
                "\(setting) is not a proxy URL: '\(Self.redacted(trimmed))'. Give one such as http://proxy.example:3128 (percent-encode '#', '?', '@' and '/' in a user or password)."
            )
        }
        let username = components.percentEncodedUser.map { $0.removingPercentEncoding ?? $0 }
        let password = components.percentEncodedPassword.map { $0.removingPercentEncoding ?? $0 }
        switch scheme {
        case "http":
            kind = .http
        case "socks5", "socks5h":
            guard username == nil, password == nil else {
                throw ModelDepotError(
                    .invalidArgument,
                    "\(setting) names a SOCKS proxy with credentials, which this client cannot send (SOCKSv5 without authentication only). Use an HTTP proxy with credentials, or a SOCKS proxy without."
                )
            }
            kind = .socks5
        case "https":
            throw ModelDepotError(
                .invalidArgument,
                "\(setting) names an https:// proxy (TLS to the proxy itself), which this client does not support; traffic to https hosts is encrypted end to end through an http:// proxy's CONNECT anyway. Use http://\(host)\(components.port.map { ":\($0)" } ?? "")."
            )
        default:
            throw ModelDepotError(
                .invalidArgument,
                "\(setting) has the proxy scheme '\(scheme)', which this client does not support: use http:// (or socks5h:// without credentials)."
            )
        }
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        // Python's defaults (our users come from it): 80 for an HTTP proxy, 1080 for SOCKS.
        port = components.port ?? (kind == .socks5 ? 1080 : 80)
        self.username = username
        self.password = password
    }

    /// `http://proxy.example:3128`, never with the credentials.
    public var description: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return "\(kind == .http ? "http" : "socks5h")://\(username == nil ? "" : "***@")\(shown):\(port)"
    }

    /// A proxy URL with its password (anything between `:` and `@`) replaced, for messages.
    static func redacted(_ text: String) -> String {
        // A password holding '#' or '?' ends the URL early: then nothing after the scheme is shown.
        if text.contains("#") || text.contains("?") {
            let start = text.range(of: "://")?.upperBound ?? text.startIndex
            return String(text[..<start]) + "***"
        }
        guard let at = text.lastIndex(of: "@") else { return text }
        // Everything before the last `@` may be credentials, however the rest was meant.
        let start = text.range(of: "://")?.upperBound ?? text.startIndex
        return String(text[..<start]) + "***" + String(text[at...])
    }
}
