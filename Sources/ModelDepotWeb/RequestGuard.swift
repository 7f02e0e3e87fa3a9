import Foundation

/// Decides, from a request's method and headers alone, whether the web app may answer it: the `Host` must be
/// one of the app's own names (a page on another site that rebinds its DNS name to 127.0.0.1 sends its own
/// name), the session cookie must be there, and a call that changes something must come from the app's own
/// pages (`Sec-Fetch-Site`, `Origin`) with a JSON body (a cross-site form cannot send one).
struct RequestGuard: Sendable {
    /// Why a request is refused.
    enum Refusal: Equatable, Sendable, Error {
        /// 421: the Host header names someone else.
        case foreignHost(String)
        /// 401: no session cookie.
        case noSession
        /// 403: a change requested from another site.
        case crossSite(String)
        /// 415: a change whose body is not JSON.
        case notJSON
    }

    /// The names (without port) that are this app: the host it listens on, and for loopback every loopback
    /// spelling; lowercased.
    let names: Set<String>
    /// `https` when the app serves TLS (`--tls-cert`): what a same-site `Origin` starts with, and which default
    /// port a `Host` without one names.
    let scheme: String

    init(host: String, scheme: String = "http") {
        self.scheme = scheme
        var names = [host]
        if ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) { names += ["127.0.0.1", "localhost", "[::1]"] }
        if host.contains(":"), !host.hasPrefix("[") { names.append("[\(host)]") }
        self.names = Set(names.map { $0.lowercased() })
    }

    /// Whether `host` (a `Host` header) names this app on `port`, the port the request arrived on; a `Host`
    /// without a port names the scheme's default, 80 or 443.
    func admits(host: String, port: Int) -> Bool {
        let host = host.lowercased()
        let defaultPort = scheme == "https" ? 443 : 80
        return names.contains { host == "\($0):\(port)" || (port == defaultPort && host == $0) }
    }

    /// Checks a request that arrived on `port`; `sessionOpen` says whether its cookie is the session's. Nil when it
    /// may be answered.
    func check(
        method: String, path: String, host: String?, port: Int, origin: String?, fetchSite: String?,
        contentType: String?, sessionOpen: Bool
    ) -> Refusal? {
        guard let host, admits(host: host, port: port) else { return .foreignHost(host ?? "") }
        let mutating = Self.isMutating(method)
        if mutating, let refusal = Self.crossSite(host: host, origin: origin, fetchSite: fetchSite, scheme: scheme) {
            return refusal
        }
        // The session link itself is the one page that opens without the cookie.
        if path != "/session" && !path.hasPrefix("/assets/") && !sessionOpen { return .noSession }
        if mutating, !Self.isJSON(contentType) { return .notJSON }
        return nil
    }

    static func isMutating(_ method: String) -> Bool { !["GET", "HEAD", "OPTIONS"].contains(method.uppercased()) }

    /// A change asked for by a page of another site: fetch metadata that is not same-origin, or an `Origin` that
    /// names someone other than `host` on `scheme` (a page served over http is another origin than the app on https).
    static func crossSite(host: String, origin: String?, fetchSite: String?, scheme: String) -> Refusal? {
        if let fetchSite, fetchSite != "same-origin" { return .crossSite("Sec-Fetch-Site: \(fetchSite)") }
        if let origin, origin.lowercased() != "\(scheme)://\(host.lowercased())" {
            return .crossSite("Origin: \(origin.prefix(100))")
        }
        return nil
    }

    static func isJSON(_ contentType: String?) -> Bool {
        contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            == "application/json"
    }
}
