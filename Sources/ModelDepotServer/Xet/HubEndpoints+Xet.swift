import Foundation
import HTTPTypes
import Hummingbird
import ModelDepotCore

extension HubEndpoints {
    /// `X-Xet-Hash` and the `xet-auth` link, as the Hub sends them on a resolve, for a file whose Xet index is built
    /// (the first request starts building it and is answered without: a plain download never waits for it).
    func xetHeaders(for file: ServedFile, _ type: RepoType, _ id: RepoID, commit: String, request: Request)
        async -> HTTPFields
    {
        var fields = HTTPFields()
        guard let xet, let index = await xet.index(for: file, repository: "\(type.apiSegment)/\(id)") else {
            return fields
        }
        let host = request.head.authority ?? "127.0.0.1"
        fields[HTTPField.Name("X-Xet-Hash")!] = index.fileHash
        fields[HTTPField.Name("Link")!] =
            "<\(scheme)://\(host)/api/\(type.apiSegment)/\(id)/xet-read-token/\(commit)>; rel=\"xet-auth\""
        return fields
    }

    /// `GET /api/models/{id}/xet-read-token/{revision}`: a short-lived token that reads the repository's files from
    /// the CAS at `/xet`, in the headers the Hub sends (`X-Xet-Cas-Url`, `X-Xet-Access-Token`,
    /// `X-Xet-Token-Expiration`) and as JSON. `xet-write-token` (`writes`) issues one that may upload too, when the
    /// mirror takes uploads (`serve --xet-uploads`). Behind the mirror's own token, as every route is.
    func xetToken(_ type: RepoType, _ id: RepoID, revision: String, writes: Bool, request: Request) async throws
        -> Response
    {
        guard let xet else {
            throw HubServerError(
                status: 404, code: nil, message: "This mirror does not serve Xet (serve --xet).", commit: nil)
        }
        if writes, xet.uploads == nil {
            throw HubServerError(
                status: 403, code: nil, message: "This mirror takes no Xet uploads (serve --xet-uploads).",
                commit: nil)
        }
        _ = try await snapshot(type, id, revision)
        let (token, expires) = await xet.issueToken(for: "\(type.apiSegment)/\(id)", writes: writes)
        let host = request.head.authority ?? "127.0.0.1"
        let casURL = "\(scheme)://\(host)/xet"
        let expiry = Int(expires.timeIntervalSince1970)
        var response = Self.json(["accessToken": token, "exp": expiry, "casUrl": casURL] as [String: Any])
        response.headers[HTTPField.Name("X-Xet-Cas-Url")!] = casURL
        response.headers[HTTPField.Name("X-Xet-Access-Token")!] = token
        response.headers[HTTPField.Name("X-Xet-Token-Expiration")!] = "\(expiry)"
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// `entries` (a tree listing's or paths-info's) with `xetHash` on the files whose Xet index is built, as the
    /// Hub lists them.
    func withXetHashes(_ entries: [[String: Any]], _ snapshot: RepoSnapshot) async -> [[String: Any]] {
        guard let xet else { return entries }
        var listed = entries
        for position in listed.indices where listed[position]["type"] as? String == "file" {
            guard let path = listed[position]["path"] as? String, let file = snapshot.file(at: path),
                let hash = await xet.readyFileHash(
                    etag: file.etag, repository: "\(snapshot.type.apiSegment)/\(snapshot.id)")
            else { continue }
            listed[position]["xetHash"] = hash
        }
        return listed
    }
}
