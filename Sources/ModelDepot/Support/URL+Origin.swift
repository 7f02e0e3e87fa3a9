import Foundation

extension URL {
    /// Scheme, host and port equal (default ports filled in): the only case where credentials may travel along.
    func hasSameOrigin(as other: URL) -> Bool {
        func port(_ url: URL) -> Int? {
            url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
        }
        return scheme?.lowercased() == other.scheme?.lowercased() && host?.lowercased() == other.host?.lowercased()
            && port(self) == port(other)
    }
}
