import HTTPTypes
import Hummingbird
import ModelDepotCore
import ModelDepotHTTP

/// The routes most requests take — a model file's `resolve`, a repository's info and a load balancer's
/// `/healthz` — read straight from the path, without the router's trie: with the mirror's 250 routes the trie's
/// walk was 6 % of a small answer's CPU (issue 63). A path is taken only in the plain shape whose reading cannot
/// differ from the router's, read from the router's own routes; anything else (a `%`, a byte past ASCII, an empty
/// segment, a trailing slash, a name the mirror uses at the top, a repository named `resolve`, a name the router
/// tries as a literal such as `xet-read-token`) goes to the router as before. The router is built case-sensitive,
/// as Hummingbird's default is; a ``RouterOptions`` that changes how it reads paths would need the fast path to
/// follow. `HubFastPathTests` sends every path of a small alphabet both ways and compares the answers.
struct HubFastPath: Sendable {
    /// A route the fast path answers. The id's parts are as the path spells them: the answer builds the
    /// ``RepoID``, so a bad name fails inside the route, as it does behind the router.
    enum Route: Equatable, Sendable {
        /// `/{owner}/{name}/resolve/{revision}/{path}`: a model's file.
        case resolve(owner: String, name: String, revision: String, path: String)
        /// `/api/{models|datasets|spaces}/{owner}/{name}`: a repository's info at `main`.
        case info(RepoType, owner: String, name: String)
        /// `/healthz`.
        case health
    }

    /// The literal first segments of the router's routes (`api`, `healthz`, `datasets`, a mounted `ui`…): an owner
    /// spelled like one of them is the router's to read.
    let topLevelNames: Set<Substring>
    /// The literal second segments of routes whose first segment is a capture (`resolve`, for the repository
    /// named `resolve`): a name spelled like one is the router's to read.
    let secondLevelNames: Set<Substring>
    /// Whether the only routes whose first two segments are captures are `/{a}/{b}/resolve/{revision}/**`: then
    /// a path of that shape whose first segment is no top-level name can be read by no other route.
    let readsResolve: Bool
    /// The repository type of each `/api/{type}/{a}/{b}` route by its `{type}` segment (`models`…), with the
    /// literals the router tries before `{a}` and before `{b}` under it (`xet-read-token` is one:
    /// `/api/models/acme/xet-read-token` is not the repository `acme/xet-read-token` to the router, which tries
    /// that literal and does not come back).
    let infoTypes: [Substring: (type: RepoType, owners: Set<Substring>, names: Set<Substring>)]
    /// Whether the router has the route `/healthz`.
    let readsHealth: Bool

    /// The fast path for a router with these routes; nil when a route's first or second segment is neither a
    /// literal nor a plain capture (a wildcard would make the router's reading of a plain path differ).
    init?(routes: [RouterPath]) {
        var top: Set<Substring> = []
        var second: Set<Substring> = []
        var underCaptures: Set<[Kind]> = []
        var info: [Substring: (type: RepoType, owners: Set<Substring>, names: Set<Substring>)] = [:]
        let parts = routes.map { $0.components.map(\.description) }
        for path in parts {
            let kinds = path.map(Self.kind)
            guard let first = kinds.first else { continue }
            switch first {
            case .literal: top.insert(Substring(path[0]))
            case .capture:
                guard kinds.count > 1 else { continue }
                if kinds[1] == .capture {
                    underCaptures.insert(kinds)
                } else if kinds[1].isLiteral {
                    second.insert(Substring(path[1]))
                } else {
                    return nil
                }
            case .other, .catchAll: return nil
            }
            if path.count == 4, path[0] == "api", kinds[2] == .capture, kinds[3] == .capture,
                let type = RepoType.allCases.first(where: { $0.apiSegment == path[1] })
            {
                info[Substring(path[1])] = (type, [], [])
            }
        }
        // The literals a path under `/api/{type}/` meets before the info route's captures.
        for path in parts where path.count > 2 && path[0] == "api" {
            guard var entry = info[Substring(path[1])] else { continue }
            if Self.kind(path[2]).isLiteral {
                entry.owners.insert(Substring(path[2]))
            } else if path.count > 3, Self.kind(path[3]).isLiteral {
                entry.names.insert(Substring(path[3]))
            }
            info[Substring(path[1])] = entry
        }
        topLevelNames = top
        secondLevelNames = second
        readsResolve = underCaptures == [[.capture, .capture, .literal("resolve"), .capture, .catchAll]]
        infoTypes = info
        readsHealth = parts.contains(["healthz"])
    }

    private enum Kind: Hashable {
        case literal(String), capture, catchAll, other

        var isLiteral: Bool {
            if case .literal = self { return true }
            return false
        }
    }

    /// What a router path component's description says it is: `name`, `{name}`, `**`, or anything else (`*`,
    /// `{name}.json`…).
    private static func kind(_ description: String) -> Kind {
        let special: Set<Character> = ["{", "}", "*", "!", ":"]
        if !description.isEmpty, !description.contains(where: special.contains) { return .literal(description) }
        if description == "**" { return .catchAll }
        if description.hasPrefix("{"), description.hasSuffix("}"),
            !description.dropFirst().dropLast().contains(where: special.contains)
        {
            return .capture
        }
        return .other
    }

    /// The route `path` takes here, or nil when the router decides.
    func route(_ method: HTTPRequest.Method, _ path: String) -> Route? {
        // Plain: non-empty segments joined by single slashes, no `%`, no trailing slash; and ASCII, as the router
        // splits by `Character` (a `/` followed by a combining mark is one character, not a separator).
        guard method == .get || method == .head else { return nil }
        if path == "/healthz" { return readsHealth ? .health : nil }
        guard path.utf8.first == UInt8(ascii: "/"), Parameters.isPlainPath(path.utf8.dropFirst()),
            path.utf8.allSatisfy({ $0 < 0x80 })
        else { return nil }
        let segments = path.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard segments.count >= 4 else { return nil }
        let first = Substring(segments[0])
        if first == "api" {
            guard segments.count == 4, let info = infoTypes[Substring(segments[1])],
                !info.owners.contains(Substring(segments[2])), !info.names.contains(Substring(segments[3]))
            else { return nil }
            return .info(info.type, owner: Self.text(segments[2]), name: Self.text(segments[3]))
        }
        guard readsResolve, segments.count >= 5, !topLevelNames.contains(first),
            !secondLevelNames.contains(Substring(segments[1])), Substring(segments[2]) == "resolve"
        else { return nil }
        return .resolve(
            owner: String(first), name: Self.text(segments[1]), revision: Self.text(segments[3]),
            path: Self.text(path.utf8[segments[4].startIndex...]))
    }

    private static func text(_ bytes: Substring.UTF8View) -> String { String(Substring(bytes)) }
}
