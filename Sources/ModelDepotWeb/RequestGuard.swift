import Foundation

/// Decides, from a request's method and headers alone, whether the web app may answer it: the `Host` must be
/// one of the app's own names (a page on another site that rebinds its DNS name to 127.0.0.1 sends its own
/// name), the session cookie must be there, and a call that changes something must come from the app's own
/// pages (`Sec-Fetch-Site`, `Origin`) with a JSON body (a cross-site form cannot send one).
struct RequestGuard: Sendable {
    /// Why a request is refused.
    enum Refusal: Equatable, Sendable {
        /// 421: the Host header names someone else.
        case foreignHost(String)
        /// 401: no session cookie.
        case noSession
        /// 403: a change requested from another site.
        case crossSite(String)
        /// 415: a change whose body is not JSON.
        case notJSON
    }

    /// `host:port` spellings that are this app (`127.0.0.1:8123`, `localhost:8123`, …).
    let hosts: Set<String>

    /// The names of an app listening on `host` and `port`: the host as given, and for loopback every loopback
    /// spelling.
    static func hosts(host: String, port: Int) -> Set<String> {
        var names = [host]
        if ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) { names += ["127.0.0.1", "localhost", "[::1]"] }
        if host.contains(":"), !host.hasPrefix("[") { names.append("[\(host)]") }
        return Set(names.map { "\($0.lowercased()):\(port)" })
    }

    /// Checks a request; `sessionOpen` says whether its cookie is the session's. Nil when it may be answered.
    func check(
        method: String, path: String, host: String?, origin: String?, fetchSite: String?, contentType: String?,
        sessionOpen: Bool
    ) -> Refusal? {
        guard let host, hosts.contains(host.lowercased()) else { return .foreignHost(host ?? "") }
        let mutating = !["GET", "HEAD", "OPTIONS"].contains(method.uppercased())
        if mutating {
            if let fetchSite, fetchSite != "same-origin" { return .crossSite("Sec-Fetch-Site: \(fetchSite)") }
            if let origin, origin.lowercased() != "http://\(host.lowercased())" {
                return .crossSite("Origin: \(origin)")
            }
        }
        // The session link itself is the one page that opens without the cookie.
        if path != "/session" && !path.hasPrefix("/assets/") && !sessionOpen { return .noSession }
        if mutating {
            let media = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            if media != "application/json" { return .notJSON }
        }
        return nil
    }
}
