import Foundation

/// Validators that identify one version of a resource, used with `If-Range` and to detect changes.
package struct ResourceValidators: Equatable, Sendable, Codable {
    package var etag: String?
    package var lastModified: String?

    package init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// The value for `If-Range`: a strong ETag, else Last-Modified (weak ETags are not allowed there).
    package var ifRangeValue: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }

    /// Whether an answer's validators contradict these (a missing validator contradicts nothing).
    ///
    /// Two strong ETags decide alone: they name the bytes (RFC 9110 §8.8.3), while Last-Modified differs between two
    /// servers holding the same file (a mirror dates its copy by when it fetched it), so bytes one of them sent are
    /// resumed from the other.
    package func conflicts(with other: ResourceValidators) -> Bool {
        if let etag, let otherEtag = other.etag, !etag.hasPrefix("W/"), !otherEtag.hasPrefix("W/") {
            return etag != otherEtag
        }
        if let etag, let otherEtag = other.etag, etag != otherEtag { return true }
        if let lastModified, let otherLast = other.lastModified, lastModified != otherLast { return true }
        return false
    }
}
