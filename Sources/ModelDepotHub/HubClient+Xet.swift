import Foundation
import ModelDepotCore
import ModelDepotTransfer

/// Where and how to read a repository's files through Xet: the CAS's URL and the short-lived token it takes, as the
/// Hub's `xet-read-token` route hands them out (Xet documentation, "Authentication and authorization").
package struct XetAccess: Sendable, Equatable {
    package var casURL: URL
    package var token: String
    package var expires: Date

    package init(casURL: URL, token: String, expires: Date) {
        self.casURL = casURL
        self.token = token
        self.expires = expires
    }
}

extension HubClient {
    /// `GET /api/{type}s/{repo}/xet-read-token/{revision}`, with the Hub's token (to the endpoint only). The CAS URL
    /// must be http or https, and https when the endpoint is: a token is never sent in the clear because an
    /// endpoint said so.
    /// With mirrors, the first place that answers gives its own CAS, as it gives the listing.
    package func xetAccess(_ repo: RepoID, type: RepoType, revision: String) async throws -> XetAccess {
        if !mirrors.isEmpty {
            // Never a discovered mirror's word: the CAS URL it names would be fetched from, whatever it is.
            return try await withoutDiscoveredListings.failingOver {
                try await $0.xetAccess(repo, type: type, revision: revision)
            }
        }
        let url = apiURL(repo, type: type, "/xet-read-token/\(HubEncoding.encodeSegment(revision))")
        let (body, response) = try await getWithRetries(url)
        let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        let cas = response.header("X-Xet-Cas-Url") ?? object["casUrl"] as? String
        let token = response.header("X-Xet-Access-Token") ?? object["accessToken"] as? String
        let expiry =
            response.header("X-Xet-Token-Expiration").flatMap { Int64($0) } ?? (object["exp"] as? NSNumber)?.int64Value
        guard let cas, let casURL = URL(string: cas), let token, !token.isEmpty, let expiry else {
            throw ModelDepotError(
                .protocolViolation,
                "\(endpoint) offered Xet for \(repo) but its xet-read-token answer lacks the CAS URL, token or expiry.")
        }
        let scheme = casURL.scheme?.lowercased()
        guard scheme == "https" || (scheme == "http" && endpoint.scheme?.lowercased() == "http"), casURL.host != nil
        else {
            throw ModelDepotError(
                .protocolViolation,
                "\(endpoint) named \(cas) as its Xet CAS, which is not an https URL; refusing to send it a token.")
        }
        return XetAccess(casURL: casURL, token: token, expires: Date(timeIntervalSince1970: TimeInterval(expiry)))
    }

    /// A GET to a Xet CAS or to a xorb URL it handed out, read whole (at most `limit` bytes), retried on transient
    /// failures, redirects not followed. Never carries the Hub's token; carries `bearer` only to `bearerOrigin`.
    package func xetGet(
        _ url: URL, bearer: String? = nil, bearerOrigin: URL? = nil, range: ClosedRange<Int64>? = nil, limit: Int
    ) async throws -> ([UInt8], TransportResponse) {
        var headers: [(String, String)] = []
        if let bearer, let bearerOrigin, Self.isSameOrigin(url, as: bearerOrigin) {
            headers.append(("Authorization", "Bearer \(bearer)"))
        }
        if let range { headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound)")) }
        return try await withRetries {
            let response = try await send(method: "GET", url: url, extraHeaders: headers, authorizing: false)
            let body = try await Self.collect(response.body, limit: limit, url: url)
            if response.status == 401 || response.status == 403 {
                throw ModelDepotError(
                    .unauthorized,
                    "\(url.host ?? "The Xet CAS") refused a Xet request (HTTP \(response.status)): its token or the xorb URL's signature expired, or does not cover this file.",
                    remedy: .provideToken)
            }
            guard (200..<300).contains(response.status) else {
                throw Self.hubError(for: response, url: url, body: body)
            }
            return (body, response)
        }
    }
}
