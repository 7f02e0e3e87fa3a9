import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ModelDepot
import ModelDepotCore
import ModelDepotHTTP
import ModelDepotMirrorContract
import ModelDepotScreens
import NIOCore

/// The mirror's dashboard as web pages under `/ui` (`modeldepot serve --ui`), over any ``MirrorDashboardSource``.
///
/// Who may do what: a mirror without a client token shows its dashboard to anyone who can reach it; a mirror
/// with one (`--token-file`) only to whoever signs in with that token (or sends it as `Authorization: Bearer`).
/// Pin, unpin and evict need the admin token (`--admin-token-file`), and come only from the dashboard's own
/// page: a JSON body, and `Origin`/`Sec-Fetch-Site` of the same site.
public struct MirrorDashboardApp: Sendable {
    public let source: any MirrorDashboardSource
    let access: DashboardAccess
    let pages: UIPages
    /// The live dashboards' event streams; ended when the mirror drains.
    public let streams = EventStreams()
    /// How often an open dashboard's state is looked at; an event goes out only when what it shows changed.
    public var interval: Duration = .seconds(1)
    /// What the streams sleep on (tests inject their own).
    public var clock: any Clock<Duration> = ContinuousClock()
    /// Where a request that failed inside the dashboard is logged.
    public var logger = Logger(label: "modeldepot.dashboard")
    /// Whether the mirror serves this dashboard over TLS (`serve --tls-cert`): its cookie is then `Secure`, and a
    /// change must come from the `https` page.
    public var servedOverTLS = false

    /// - Parameters:
    ///   - readToken: the mirror's client token, when it has one: reading needs it.
    ///   - adminToken: the token that allows changes; nil makes the dashboard read-only for everyone.
    public init(source: any MirrorDashboardSource, readToken: String?, adminToken: String?) async throws {
        self.source = source
        access = DashboardAccess(readToken: readToken, adminToken: adminToken)
        pages = try await UIPages.load()
    }

    /// Registers the dashboard's routes on `group` (the mirror mounts it at `/ui`): the page, its assets, the state
    /// and its event stream, signing in, and the admin's actions. Bodies are JSON of at most 16 KiB.
    public func addRoutes<Context: RequestContext>(to group: RouterGroup<Context>) {
        group.add(middleware: SecurityHeadersMiddleware<Context>())
        group.add(middleware: UIErrors(pages: pages, logger: logger).middleware() as ErrorAnswering<Context>)
        group.endpoint("", [.get, .head]) { request, _ in
            let role = role(of: request)
            guard role != .none else { return html(401, pages.mirrorSignIn(needsToken: true)) }
            let screen = MirrorScreen.make(
                await source.dashboardState(), admin: role == .admin, adminPossible: access.adminToken != nil)
            return html(200, pages.mirror(screen, canSignIn: role != .admin && access.adminToken != nil))
        }
        group.endpoint("/assets/:name", [.get, .head]) { _, context in
            guard let name = context.parameters.get("name"), ["app.css", "chart.js", "mirror.js"].contains(name),
                let (data, type) = UIAssets.load(name)
            else { throw HTTPError(.notFound) }
            return Response(
                status: .ok, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
        group.endpoint("/api/state", [.get, .head]) { request, _ in
            let role = role(of: request)
            guard role != .none else { return UIResponses.error(401, Self.signInFirst) }
            return try UIResponses.json(
                MirrorScreen.make(
                    await source.dashboardState(), admin: role == .admin, adminPossible: access.adminToken != nil))
        }
        // GET only: a HEAD would start a stream nobody reads.
        group.endpoint("/api/events", [.get]) { request, _ in
            let role = role(of: request)
            guard role != .none else { return UIResponses.error(401, Self.signInFirst) }
            return events(admin: role == .admin)
        }
        let changes = group.group().add(
            middleware: SameSiteChangesMiddleware<Context>(scheme: servedOverTLS ? "https" : "http"))
        changes.endpoint("/api/session", [.post], bodyLimit: Self.bodyLimit) { request, _, body in
            guard
                let token = (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["token"]
                    as? String
            else {
                throw ModelDepotError(.invalidArgument, #"Send {"token": "…"}: the mirror's token or the admin token."#)
            }
            guard let (cookie, signedIn) = access.signIn(token) else {
                return UIResponses.error(
                    403, "That token opens nothing here: use the mirror's token or the admin token.")
            }
            var response = try UIResponses.json(["role": signedIn.rawValue])
            response.headers[.setCookie] =
                "\(DashboardAccess.cookieName(port: Self.port(of: request)))=\(cookie); Path=/ui; HttpOnly; SameSite=Strict\(servedOverTLS ? "; Secure" : "")"
            return response
        }
        changes.endpoint("/api/repositories/:action", [.post], bodyLimit: Self.bodyLimit) { request, context, body in
            guard let action = context.parameters.get("action").flatMap(MirrorScreen.Action.init(rawValue:)) else {
                throw HTTPError(.notFound)
            }
            guard role(of: request) == .admin else {
                return UIResponses.error(
                    403,
                    access.adminToken == nil
                        ? "This dashboard is read-only: start serve with --admin-token-file to allow changes."
                        : "Pinning and evicting need the admin token: sign in with it first.")
            }
            let (id, type) = try StorageForm.repository(Data(buffer: body))
            return try UIResponses.json(["message": try await MirrorScreen.perform(action, on: id, type: type, source)])
        }
    }

    /// Ends the dashboard's event streams (the mirror calls it when it starts to drain).
    public func closeStreams() { streams.closeAll() }

    /// The most a request to the dashboard may carry: a token or a repository's name, in JSON.
    static let bodyLimit = 16 << 10

    private func role(of request: Request) -> DashboardAccess.Role {
        access.role(
            cookieHeader: request.headers[.cookie], authorization: request.headers[.authorization],
            port: Self.port(of: request))
    }

    /// `GET /ui/api/events`: server-sent events, an `update` (what `/ui/api/state` answers) at once and then
    /// whenever what the dashboard shows changed, looked at every ``interval`` (its charts move on every ten
    /// seconds, so an open page gets at least that); nothing else while nothing changes
    /// but the heartbeat that finds closed tabs.
    private func events(admin: Bool) -> Response {
        // At least a tenth of a second between looks: an interval of zero would spin.
        let (source, adminPossible, interval) = (source, access.adminToken != nil, max(interval, .milliseconds(100)))
        let time = EngineClock(clock)
        return Response(
            status: .ok, headers: UIEvents.streamHeaders,
            body: streams.body(clock: clock, latestOnly: true) { send in
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                var last = Data()
                while !Task.isCancelled {
                    let screen = MirrorScreen.make(
                        await source.dashboardState(), admin: admin, adminPossible: adminPossible)
                    let json = try encoder.encode(screen)
                    if json != last {
                        send(ByteBuffer(string: "event: update\ndata: \(String(decoding: json, as: UTF8.self))\n\n"))
                        last = json
                    }
                    try await time.sleep(for: interval)
                }
            })
    }

    /// The port the request was sent to, from its `Host` (which only picks the cookie compared with a random
    /// secret: a forged one signs nobody in).
    static func port(of request: Request) -> Int? {
        guard let authority = request.head.authority, let colon = authority.lastIndex(of: ":"),
            !authority.hasSuffix("]")
        else { return nil }
        return Int(authority[authority.index(after: colon)...])
    }

    static let signInFirst = "Sign in with the mirror's token first (the dashboard's page asks for it)."

    private func html(_ status: Int, _ body: String) -> Response {
        Response(
            status: HTTPResponse.Status(code: status), headers: [.contentType: "text/html; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}

/// Who a dashboard request comes from: the tokens, and the random cookie values signing in with them sets.
struct DashboardAccess: Sendable {
    enum Role: String, Sendable, Equatable {
        case none, reader, admin
    }

    /// The cookie's name for a mirror on `port`: browsers keep cookies per host, not per port, so two mirrors on
    /// one machine would otherwise read (and overwrite) each other's sign-in.
    static func cookieName(port: Int?) -> String { "modeldepot_mirror_\(port ?? 80)" }

    let readToken: String?
    let adminToken: String?
    let readerCookie = UISession.randomHex()
    let adminCookie = UISession.randomHex()

    func role(cookieHeader: String?, authorization: String?, port: Int?) -> Role {
        let cookie = cookieHeader.flatMap { Self.cookie(in: $0, named: Self.cookieName(port: port)) }
        let bearer = authorization.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        if let adminToken {
            if let cookie, UISession.constantTimeEqual(cookie, adminCookie) { return .admin }
            if let bearer, UISession.constantTimeEqual(bearer, adminToken) { return .admin }
        }
        guard let readToken else { return .reader }
        if let cookie, UISession.constantTimeEqual(cookie, readerCookie) { return .reader }
        if let bearer, UISession.constantTimeEqual(bearer, readToken) { return .reader }
        return .none
    }

    /// The cookie value `token` earns, and the role it gives; nil for a token that opens nothing.
    func signIn(_ token: String) -> (String, Role)? {
        if let adminToken, UISession.constantTimeEqual(token, adminToken) { return (adminCookie, .admin) }
        if let readToken, UISession.constantTimeEqual(token, readToken) { return (readerCookie, .reader) }
        return nil
    }

    private static func cookie(in header: String, named name: String) -> String? {
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0] == name { return parts[1] }
        }
        return nil
    }
}
