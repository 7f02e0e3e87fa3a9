import HTTPTypes
import Hummingbird
import ModelDepotCore
import ModelDepotHTTP

/// The two routes most of a fleet's requests take — a model file's `resolve` and a repository's info — read
/// straight from the path, without the router's trie: with the mirror's 250 routes the trie's walk was 6 % of a
/// small answer's CPU (issue 63). A path is taken only in the plain shape whose reading cannot differ from the
/// router's; anything else (a `%`, an empty segment, a trailing slash, a name the mirror uses at the top, a
/// repository named `resolve`) goes to the router as before. `HubFastPathTests` sends every path of a small
/// alphabet both ways and compares the answers.
struct HubFastPath: Sendable {
    /// A route the fast path answers. The id's parts are as the path spells them: the answer builds the
    /// ``RepoID``, so a bad name fails inside the route, as it does behind the router.
    enum Route: Equatable, Sendable {
        /// `/{owner}/{name}/resolve/{revision}/{path}`: a model's file.
        case resolve(owner: String, name: String, revision: String, path: String)
        /// `/api/{models|datasets|spaces}/{owner}/{name}`: a repository's info at `main`.
        case info(RepoType, owner: String, name: String)
    }

    /// The literal first segments of the router's routes (`api`, `healthz`, `datasets`, a mounted `ui`…): an owner
    /// spelled like one of them is the router's to read.
    let topLevelNames: Set<Substring>
    /// The literal second segments of routes whose first segment is a capture (`resolve`, for the repository
    /// named `resolve`).
    let secondLevelNames: Set<Substring>

    /// The fast path for a router with these routes; nil when a route's first or second segment is neither a
    /// literal nor a plain capture (a wildcard would make the router's reading of a plain path differ).
    init?(routes: [RouterPath]) {
        var top: Set<Substring> = []
        var second: Set<Substring> = []
        for path in routes {
            let parts = path.components.map(\.description)
            guard let first = parts.first else { continue }
            switch Self.kind(first) {
            case .literal: top.insert(Substring(first))
            case .capture:
                if parts.count > 1 {
                    switch Self.kind(parts[1]) {
                    case .literal: second.insert(Substring(parts[1]))
                    case .capture: break
                    case .other: return nil
                    }
                }
            case .other: return nil
            }
        }
        topLevelNames = top
        secondLevelNames = second
    }

    private enum Kind { case literal, capture, other }

    /// What a router path component's description says it is: `name`, `{name}`, or anything else (`*`, `**`,
    /// `{name}.json`…).
    private static func kind(_ description: String) -> Kind {
        let special: Set<Character> = ["{", "}", "*", "!", ":"]
        if !description.isEmpty, !description.contains(where: special.contains) { return .literal }
        if description.hasPrefix("{"), description.hasSuffix("}"),
            !description.dropFirst().dropLast().contains(where: special.contains)
        {
            return .capture
        }
        return .other
    }

    /// The route `path` takes here, or nil when the router decides.
    func route(_ method: HTTPRequest.Method, _ path: String) -> Route? {
        guard method == .get || method == .head, path.utf8.first == UInt8(ascii: "/"),
            Parameters.isPlainPath(path.utf8.dropFirst())
        else { return nil }
        // Plain: non-empty segments joined by single slashes, no `%`, no trailing slash.
        let segments = path.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard segments.count >= 4 else { return nil }
        let first = Substring(segments[0])
        if first == "api" {
            let kind = Substring(segments[1])
            guard segments.count == 4, let type = RepoType.allCases.first(where: { $0.apiSegment == kind }) else {
                return nil
            }
            return .info(type, owner: Self.text(segments[2]), name: Self.text(segments[3]))
        }
        guard segments.count >= 5, !topLevelNames.contains(first), !secondLevelNames.contains(Substring(segments[1])),
            Substring(segments[2]) == "resolve"
        else { return nil }
        return .resolve(
            owner: String(first), name: Self.text(segments[1]), revision: Self.text(segments[3]),
            path: Self.text(path.utf8[segments[4].startIndex...]))
    }

    private static func text(_ bytes: Substring.UTF8View) -> String { String(Substring(bytes)) }
}
