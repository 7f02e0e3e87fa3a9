import ModelDepotCore

/// An error answered the way the Hub answers it: status, `X-Error-Code`, `X-Error-Message`, JSON body.
struct HubServerError: Error, Sendable {
    let status: Int
    let code: String?
    let message: String
    /// Sent with `EntryNotFound`, so clients can record that the file does not exist at that commit.
    var commit: String?

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

    static func badRequest(_ message: String) -> HubServerError {
        HubServerError(status: 400, code: nil, message: message, commit: nil)
    }

    static let unauthorized = HubServerError(
        status: 401, code: nil, message: "Invalid credentials in Authorization header", commit: nil)
}
