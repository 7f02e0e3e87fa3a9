import Foundation
import HTTPTypes
import Hummingbird
import ModelDepot
import ModelDepotCore
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

    /// - Parameters:
    ///   - readToken: the mirror's client token, when it has one: reading needs it.
    ///   - adminToken: the token that allows changes; nil makes the dashboard read-only for everyone.
    public init(source: any MirrorDashboardSource, readToken: String?, adminToken: String?) async throws {
        self.source = source
        access = DashboardAccess(readToken: readToken, adminToken: adminToken)
        pages = try await UIPages.load()
    }

    /// What the mirror mounts at `/ui`: the prefix, the responder, and what to do when the mirror drains (end the
    /// event streams).
    public var mounted:
        (prefix: String, respond: @Sendable (Request) async throws -> Response, onDrain: @Sendable () -> Void)
    {
        ("/ui", { request in await self.respond(to: request) }, { [streams] in streams.closeAll() })
    }

    public func respond(to request: Request) async -> Response {
        var request = request
        var response: Response
        do {
            let body = try await request.collectBody(upTo: 16 << 10)
            response = try await answer(request, body: Data(buffer: body))
        } catch let error as ModelDepotError {
            response = UIResponder.error(error.code == .invalidArgument ? 400 : 409, error.message)
        } catch {
            response = UIResponder.error(413, "A request to the dashboard may carry at most 16 KiB.")
        }
        for field in UIResponder.securityHeaders where response.headers[field.name] == nil {
            response.headers.append(field)
        }
        return response
    }

    private func answer(_ request: Request, body: Data) async throws -> Response {
        let path = request.uri.path
        let method = request.method.rawValue
        let role = access.role(
            cookieHeader: request.headers[.cookie], authorization: request.headers[.authorization],
            port: Self.port(of: request))
        let mutating = !["GET", "HEAD"].contains(method)
        if mutating, let refusal = Self.crossSite(request) { return refusal }
        switch (method, path) {
        case ("GET", "/ui"), ("HEAD", "/ui"), ("GET", "/ui/"):
            guard role != .none else { return html(401, pages.mirrorSignIn(needsToken: true)) }
            let screen = MirrorScreen.make(
                await source.dashboardState(), admin: role == .admin, adminPossible: access.adminToken != nil)
            return html(200, pages.mirror(screen, canSignIn: role != .admin && access.adminToken != nil))
        case ("GET", "/ui/assets/app.css"), ("GET", "/ui/assets/mirror.js"):
            guard let (data, type) = UIAssets.load(String(path.dropFirst("/ui/assets/".count))) else {
                return UIResponder.error(404, "No such asset.")
            }
            return Response(
                status: .ok, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        case ("GET", "/ui/api/state"):
            guard role != .none else { return UIResponder.error(401, Self.signInFirst) }
            return try UIResponder.json(
                MirrorScreen.make(
                    await source.dashboardState(), admin: role == .admin, adminPossible: access.adminToken != nil))
        case ("GET", "/ui/api/events"):
            guard role != .none else { return UIResponder.error(401, Self.signInFirst) }
            return events(admin: role == .admin)
        case ("POST", "/ui/api/session"):
            guard let token = (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["token"] as? String
            else {
                throw ModelDepotError(.invalidArgument, #"Send {"token": "…"}: the mirror's token or the admin token."#)
            }
            guard let (cookie, signedIn) = access.signIn(token) else {
                return UIResponder.error(
                    403, "That token opens nothing here: use the mirror's token or the admin token.")
            }
            var response = try UIResponder.json(["role": signedIn.rawValue])
            response.headers[.setCookie] =
                "\(DashboardAccess.cookieName(port: Self.port(of: request)))=\(cookie); Path=/ui; HttpOnly; SameSite=Strict"
            return response
        case ("POST", _) where path.hasPrefix("/ui/api/repositories/"):
            guard let action = MirrorScreen.Action(rawValue: String(path.dropFirst("/ui/api/repositories/".count)))
            else { return UIResponder.error(404, "No such dashboard action: \(path.prefix(200)).") }
            guard role == .admin else {
                return UIResponder.error(
                    403,
                    access.adminToken == nil
                        ? "This dashboard is read-only: start serve with --admin-token-file to allow changes."
                        : "Pinning and evicting need the admin token: sign in with it first.")
            }
            let (id, type) = try StorageForm.repository(body)
            return try UIResponder.json(["message": try await MirrorScreen.perform(action, on: id, type: type, source)])
        default:
            if ["GET", "HEAD", "POST"].contains(method) {
                return path.hasPrefix("/ui/api/")
                    ? UIResponder.error(404, "No such dashboard call: \(path.prefix(200)).")
                    : html(404, pages.notice("Not found", "The mirror's dashboard is at /ui."))
            }
            var response = UIResponder.error(405, "\(method) is not allowed here; use GET or POST.")
            response.headers[.allow] = "GET, HEAD, POST"
            return response
        }
    }

    /// `GET /ui/api/events`: server-sent events, an `update` (what `/ui/api/state` answers) at once and then
    /// whenever what the dashboard shows changed, looked at every ``interval``; nothing while nothing changes
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

    /// A change must come from the dashboard's own page: same-site fetch metadata, an `Origin` naming this host,
    /// and a JSON body (a cross-site form cannot send one).
    static func crossSite(_ request: Request) -> Response? {
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site != "same-origin" {
            return UIResponder.error(403, "Refused a change requested from another site (Sec-Fetch-Site: \(site)).")
        }
        if let origin = request.headers[.origin],
            origin.lowercased() != "http://\((request.head.authority ?? "").lowercased())"
        {
            return UIResponder.error(
                403, "Refused a change requested from another site (Origin: \(origin.prefix(100))).")
        }
        let media = request.headers[.contentType]?.split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces).lowercased()
        if media != "application/json" {
            return UIResponder.error(415, "Send changes as JSON (Content-Type: application/json).")
        }
        return nil
    }

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
