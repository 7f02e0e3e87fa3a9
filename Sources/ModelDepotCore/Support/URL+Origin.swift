import Foundation

extension URL {
    /// Scheme, host and port equal (default ports filled in): the only case where credentials may travel along.
    package func hasSameOrigin(as other: URL) -> Bool {
        func port(_ url: URL) -> Int? {
            url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
        }
        return scheme?.lowercased() == other.scheme?.lowercased() && host?.lowercased() == other.host?.lowercased()
            && port(self) == port(other)
    }
}

/// Keeps passwords out of everything people and other programs read: messages, logs, JSON events, sidecars.
package enum URLRedaction {
    /// `url` as text with its password (if any) replaced by `***`: `http://user:***@host/f`.
    package static func redacted(_ url: URL) -> String {
        guard url.password != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return url.absoluteString
        }
        components.percentEncodedPassword = "***"
        return components.string ?? url.absoluteString
    }

    /// `text` (an error message, for a log) with every URL's password replaced by `***` and its query string by
    /// `?…`: a signed URL's signature is as good as a password until it expires.
    package static func redacted(in text: String) -> String {
        var result = ""
        var rest = text[...]
        while let start = rest.range(of: "://") {
            // Back to the scheme's start, then on to the URL's end (white space, a quote or a closing bracket).
            let schemeStart =
                rest[..<start.lowerBound].lastIndex { !($0.isLetter || $0 == "+" || $0 == "-") }
                .map { rest.index(after: $0) } ?? rest.startIndex
            let end =
                rest[start.upperBound...].firstIndex { $0.isWhitespace || "\"'<>)]".contains($0) } ?? rest.endIndex
            result += rest[..<schemeStart]
            let link = String(rest[schemeStart..<end])
            if let url = URL(string: link), url.host != nil {
                var shown = redacted(url)
                if let question = shown.firstIndex(of: "?") { shown = shown[..<question] + "?…" }
                result += shown
            } else {
                result += link
            }
            rest = rest[end...]
        }
        return result + rest
    }
}

extension URL {
    /// The URL without `user:password@`, and the HTTP Basic `Authorization` header they stand for (as curl
    /// sends them: to this URL's origin only). Nil credentials when the URL has none.
    package func splittingCredentials() -> (url: URL, authorization: String?) {
        guard user != nil || password != nil,
            var components = URLComponents(url: self, resolvingAgainstBaseURL: true)
        else { return (self, nil) }
        let user = components.user ?? ""
        let password = components.password ?? ""
        components.user = nil
        components.password = nil
        guard let stripped = components.url else { return (self, nil) }
        return (stripped, "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
    }
}
