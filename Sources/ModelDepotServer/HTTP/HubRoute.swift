import Foundation
import ModelDepotCore
import ModelDepotTransfer

/// A request to the mirror, parsed from its raw (still percent-encoded) path: the Hub's URL grammar, with
/// `%2F` decoded inside a single segment (revisions like `refs%2Fpr%2F1`, tree sub-paths like `a%2Fb`).
enum HubRoute: Equatable, Sendable {
    case info(RepoType, RepoID, revision: String?)
    case tree(RepoType, RepoID, revision: String, path: String?)
    case refs(RepoType, RepoID)
    /// `POST …/paths-info/{revision}`: the tree entries of the paths in the body (`get_paths_info`).
    case pathsInfo(RepoType, RepoID, revision: String)
    /// `GET …/commits/{revision}`: the commits that lead to the revision (`list_repo_commits`).
    case commits(RepoType, RepoID, revision: String)
    /// `GET /api/whoami-v2`: who the caller's token belongs to (`hf auth whoami`).
    case whoami
    case search(RepoType)
    case resolve(RepoType, RepoID, revision: String, path: String)
    /// `/<sha256>`: an LFS file's content by its SHA-256, as a CDN serves it (what ``MirrorServer/lfsRedirectBase``
    /// points at, when the mirror is its own CDN).
    case blob(sha256: String)
    /// `/healthz`: whether the mirror is up (open to anyone, for load balancers).
    case health
    /// `/metrics`: counters in Prometheus' text format.
    case metrics

    /// Parses a raw request path; nil when it is not a Hub route. Throws when it is one with a bad repo id.
    static func parse(rawPath: String) throws -> HubRoute? {
        var segments = rawPath.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if segments.first == "" { segments.removeFirst() }
        if segments.last == "" { segments.removeLast() }  // `/tree/main/` is `/tree/main`
        guard !segments.isEmpty else { return nil }
        if segments == ["healthz"] { return .health }
        if segments == ["metrics"] { return .metrics }
        if segments[0] == "api" { return try parseAPI(Array(segments.dropFirst())) }
        if segments.count == 1, HubEncoding.isSHA256(segments[0]) { return .blob(sha256: segments[0]) }
        return try parseResolve(segments)
    }

    private static func parseAPI(_ segments: [String]) throws -> HubRoute? {
        if segments == ["whoami-v2"] { return .whoami }
        guard let first = segments.first, let type = RepoType.allCases.first(where: { $0.apiSegment == first }) else {
            return nil
        }
        let rest = Array(segments.dropFirst())
        if rest.isEmpty { return .search(type) }
        // The repo id is one or two segments; the keywords after it tell which.
        for idLength in [2, 1] where rest.count >= idLength {
            let tail = Array(rest.dropFirst(idLength))
            guard tail.isEmpty || ["revision", "tree", "refs", "paths-info", "commits"].contains(tail[0]) else {
                continue
            }
            let id = try RepoID(rest.prefix(idLength).map(decode).joined(separator: "/"))
            switch tail.first {
            case nil: return .info(type, id, revision: nil)
            case "revision" where tail.count == 2: return .info(type, id, revision: decode(tail[1]))
            case "refs" where tail.count == 1: return .refs(type, id)
            case "paths-info" where tail.count == 2: return .pathsInfo(type, id, revision: decode(tail[1]))
            case "commits" where tail.count == 2: return .commits(type, id, revision: decode(tail[1]))
            case "tree" where tail.count >= 2:
                let path = tail.count > 2 ? tail.dropFirst(2).map(decode).joined(separator: "/") : nil
                return .tree(type, id, revision: decode(tail[1]), path: path)
            default: return nil
            }
        }
        return nil
    }

    private static func parseResolve(_ segments: [String]) throws -> HubRoute? {
        var segments = segments
        var type = RepoType.model
        if let prefix = RepoType.allCases.first(where: { $0 != .model && $0.apiSegment == segments[0] }) {
            type = prefix
            segments.removeFirst()
        }
        for idLength in [2, 1] where segments.count >= idLength + 3 && segments[idLength] == "resolve" {
            let id = try RepoID(segments.prefix(idLength).map(decode).joined(separator: "/"))
            let path = segments.dropFirst(idLength + 2).map(decode).joined(separator: "/")
            return .resolve(type, id, revision: decode(segments[idLength + 1]), path: path)
        }
        return nil
    }

    private static func decode(_ segment: String) -> String {
        // Most segments have nothing to decode, and Foundation's decoding is not free.
        guard segment.utf8.contains(UInt8(ascii: "%")) else { return segment }
        return segment.removingPercentEncoding ?? segment
    }
}
