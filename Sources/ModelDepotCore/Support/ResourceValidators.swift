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
    package func conflicts(with other: ResourceValidators) -> Bool {
        if let etag, let otherEtag = other.etag, etag != otherEtag { return true }
        if let lastModified, let otherLast = other.lastModified, lastModified != otherLast { return true }
        return false
    }
}
