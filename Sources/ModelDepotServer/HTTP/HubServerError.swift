import Foundation
import HTTPTypes
import Hummingbird
import ModelDepotCore
import ModelDepotHTTP
import NIOCore

/// An error answered the way the Hub answers it: status, `X-Error-Code`, `X-Error-Message`, JSON body.
struct HubServerError: Error, Sendable {
    let status: Int
    let code: String?
    let message: String
    /// Sent with `EntryNotFound`, so clients can record that the file does not exist at that commit.
    var commit: String?
    /// Sent as `Retry-After` (a 503 while the upstream rate-limits).
    var retryAfter: Duration? = nil
    /// Sent as `Allow` with a 405.
    var allow: [String] = []

    static func repoNotFound(_ id: String) -> HubServerError {
        HubServerError(status: 404, code: "RepoNotFound", message: "Repository not found: \(id).", commit: nil)
    }

    static func revisionNotFound(id: RepoID, revision: String) -> HubServerError {
        HubServerError(
            status: 404, code: "RevisionNotFound", message: "Invalid rev id: \(revision) for \(id).", commit: nil)
    }

    static func entryNotFound(_ path: String, commit: String) -> HubServerError {
        HubServerError(status: 404, code: "EntryNotFound", message: "Entry not found: \(path).", commit: commit)
    }

    /// A path that is none of the Hub routes the mirror answers.
    static func notAHubPath(_ path: String) -> HubServerError {
        HubServerError(
            status: 404, code: "NotFound",
            message:
                "Sorry, this mirror has no page at \(path): it answers the Hub's download API (info, tree, paths-info, commits, refs, resolve, whoami-v2).",
            commit: nil)
    }

    static func methodNotAllowed(_ method: String, allowed: [String]) -> HubServerError {
        var error = HubServerError(
            status: 405, code: "MethodNotAllowed",
            message: "\(method) is not answered here; this path takes \(allowed.joined(separator: " and ")).",
            commit: nil)
        error.allow = allowed
        return error
    }

    static func badRequest(_ message: String) -> HubServerError {
        HubServerError(status: 400, code: nil, message: message, commit: nil)
    }

    /// What the mirror answers when its upstream refused or failed: the Hub's own error codes pass through, so
    /// a client reports a missing or gated repository as it would against the Hub; the upstream's trouble
    /// (unreachable, failing, refusing the operator's token) is the mirror's (502, or 503 while rate-limited).
    static func upstream(_ error: ModelDepotError) -> HubServerError {
        let said = "The upstream said: \(error.message)"
        switch error.code {
        case .repositoryNotFound:
            return HubServerError(status: 401, code: "RepoNotFound", message: said, commit: nil)
        case .gatedRepository:
            return HubServerError(status: 403, code: "GatedRepo", message: said, commit: nil)
        case .revisionNotFound:
            return HubServerError(status: 404, code: "RevisionNotFound", message: said, commit: nil)
        case .entryNotFound:
            return HubServerError(status: 404, code: "EntryNotFound", message: said, commit: nil)
        case .rateLimited:
            var busy = HubServerError(
                status: 503, code: nil, message: "The upstream is rate-limiting this mirror. \(said)", commit: nil)
            busy.retryAfter = error.retryAfter
            return busy
        case .unauthorized:
            return HubServerError(
                status: 502, code: nil,
                message:
                    "The upstream refused this mirror's credentials; its operator must check --upstream-token-file. \(said)",
                commit: nil)
        default:
            return HubServerError(
                status: 502, code: nil, message: "The mirror could not get this from its upstream. \(said)", commit: nil
            )
        }
    }

    static let unauthorized = HubServerError(
        status: 401, code: nil, message: "Invalid credentials in Authorization header", commit: nil)

    /// The answer: the status, the Hub's error headers, and `{"error": message}`.
    var response: Response {
        let error = self
        var body =
            (try? JSONSerialization.data(withJSONObject: ["error": error.message], options: [.sortedKeys])) ?? Data()
        if body.isEmpty { body = Data("{}".utf8) }
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.contentLength] = "\(body.count)"
        if let code = error.code { headers[HTTPField.Name("X-Error-Code")!] = code }
        headers[HTTPField.Name("X-Error-Message")!] = error.message
        if let commit = error.commit { headers[HTTPField.Name("X-Repo-Commit")!] = commit }
        if let wait = error.retryAfter { headers[.retryAfter] = "\(max(1, wait.components.seconds))" }
        if !error.allow.isEmpty { headers[.allow] = error.allow.joined(separator: ", ") }
        headers[.cacheControl] = "no-store"
        if error.status == 401 {
            headers[.wwwAuthenticate] = "Bearer realm=\"Authentication required\", charset=\"UTF-8\""
        }
        return Response(
            status: HTTPResponse.Status(code: error.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension HubServerError {
    /// A ModelDepotError raised while answering (a malformed repo id, a folder that cannot be read), with the status
    /// `ModelDepotHTTP` gives it.
    init(_ error: ModelDepotError) {
        self.init(status: Int(error.httpStatus.code), code: nil, message: error.message, commit: nil)
        retryAfter = error.retryAfter
    }
}
