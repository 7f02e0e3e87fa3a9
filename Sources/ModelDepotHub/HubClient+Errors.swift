import Foundation
import ModelDepotCore
import ModelDepotTransfer

extension HubClient {
    /// Maps a Hub error response to a ``ModelDepotError`` whose code and message say what to do.
    ///
    /// The Hub classifies by `X-Error-Code` rather than by status: it answers 401 for missing, private and
    /// gated repos alike (the protocol note, §1.8 and §9.8).
    static func hubError(for response: TransportResponse, url: URL, body: [UInt8]) -> ModelDepotError {
        let status = response.status
        let code = response.header("X-Error-Code")
        let serverMessage = message(from: response, body: body)
        let detail = serverMessage.map { " The server said: \($0)" } ?? ""
        let repo = repositoryName(in: url)
        switch code {
        case "RevisionNotFound":
            let name = revisionName(in: url).map { " '\($0)'" } ?? ""
            return ModelDepotError(
                .revisionNotFound,
                "\(repo) has no branch, tag or commit\(name) (HTTP \(status)). Check the revision.\(detail)")
        case "EntryNotFound":
            return ModelDepotError(
                .entryNotFound, "\(url.path) does not exist in \(repo) at that revision (HTTP \(status)).\(detail)")
        case "GatedRepo":
            return ModelDepotError(
                .gatedRepository,
                "\(repo) is gated: accept its terms on the Hub page of the repository, then use a token of that account (HF_TOKEN or the token file).\(detail)"
            )
        case "RepoNotFound":
            return ModelDepotError(
                .repositoryNotFound,
                "\(repo) was not found (HTTP \(status)). Check the id and the repo type; if it is private, use a token with access (HF_TOKEN or the token file).\(detail)"
            )
        default: break
        }
        if serverMessage == "Access to this resource is disabled." {
            return ModelDepotError(.repositoryNotFound, "\(repo) has been disabled on the Hub.\(detail)")
        }
        let retryAfter = response.retryAfter
        switch HTTPExchange.code(for: status) {
        case .unauthorized where status == 401 && serverMessage == "Invalid credentials in Authorization header":
            return ModelDepotError(
                .unauthorized,
                "The Hub refused the token (HTTP 401). Check it (HF_TOKEN or the token file).\(detail)",
                remedy: .provideToken)
        case .unauthorized where status == 401:
            return ModelDepotError(
                .repositoryNotFound,
                "\(repo) was not found or needs access (HTTP 401). Check the id; if it is private or gated, use a token with access (HF_TOKEN or the token file).\(detail)"
            )
        case .unauthorized:
            return ModelDepotError(
                .unauthorized,
                "The Hub refused access to \(url.path) (HTTP \(status)). Make sure your token has the permissions this needs.\(detail)",
                remedy: .provideToken)
        case .notFound:
            return ModelDepotError(
                .notFound, "\(url.path) does not exist on \(url.host ?? "the Hub") (HTTP \(status)).\(detail)")
        case .network:
            return ModelDepotError(.network, "\(url.path) timed out on the server (HTTP \(status)).\(detail)")
        case .rateLimited:
            let wait = retryAfter.map { " Try again in \($0.components.seconds) s." } ?? " Try again later."
            let limit = response.rateLimit.map { ": \($0)" } ?? ""
            return ModelDepotError(
                .rateLimited, "The Hub rate-limited \(url.path) (HTTP 429)\(limit).\(wait)\(detail)",
                retryAfter: retryAfter)
        case .serverError:
            return ModelDepotError(
                .serverError, "The Hub failed on \(url.path) (HTTP \(status)). Try again later.\(detail)",
                retryAfter: retryAfter)
        default:
            return ModelDepotError(.httpStatus, "The Hub answered \(url.path) with HTTP \(status).\(detail)")
        }
    }

    /// `X-Error-Message`, else the JSON `error` / `errors[].message`, else a short plain-text body.
    static func message(from response: TransportResponse, body: [UInt8]) -> String? {
        if let message = response.header("X-Error-Message"), !message.isEmpty { return message }
        if let json = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] {
            if let error = json["error"] as? String { return error }
            if let errors = json["error"] as? [String] { return errors.joined(separator: "; ") }
            if let errors = json["errors"] as? [[String: Any]] {
                return errors.compactMap { $0["message"] as? String }.joined(separator: "; ")
            }
            if let description = json["error_description"] as? String { return description }
        }
        let text = String(decoding: body.prefix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty, !text.hasPrefix("<") else { return nil }
        return text
    }

    /// The revision segment of an API or resolve path, decoded.
    static func revisionName(in url: URL) -> String? {
        let parts = url.absoluteURL.path(percentEncoded: true).split(separator: "/").map(String.init)
        guard let marker = parts.firstIndex(where: { ["revision", "resolve", "tree"].contains($0) }),
            marker + 1 < parts.count
        else { return nil }
        return parts[marker + 1].removingPercentEncoding
    }

    /// `org/name` from an API or resolve path, for messages.
    static func repositoryName(in url: URL) -> String {
        var parts = url.path.split(separator: "/").map(String.init)
        if parts.first == "api" {
            // A CAS or xorb URL a server named may be any path: never trap on a short one.
            parts.removeFirst(min(2, parts.count))
        } else if ["datasets", "spaces", "kernels"].contains(parts.first) {
            parts.removeFirst()
        }
        let end = parts.firstIndex { ["resolve", "revision", "tree", "refs", "commits", "paths-info"].contains($0) }
        let id = parts[..<(end ?? parts.endIndex)].joined(separator: "/")
        return id.isEmpty ? "The repository" : "The repository '\(id.removingPercentEncoding ?? id)'"
    }
}
