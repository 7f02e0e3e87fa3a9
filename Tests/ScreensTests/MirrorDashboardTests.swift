import Foundation
import Logging
import ModelDepot
import ModelDepotScreens
import ModelDepotServer
import ModelDepotTesting
import ModelDepotWeb
import Synchronization
import Testing

/// The mirror's dashboard on a real pull-through mirror behind a token, in front of a rate-capped upstream: a
/// pull in flight shows with its progress and the counters move; the dashboard needs the mirror's token;
/// changes need the admin token and come only from the dashboard's own site.
@Suite struct MirrorDashboardTests {
    static let weights = SampleData.bytes(count: 4 << 20, seed: 77)
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    struct Mirror {
        let base: String

        func send(
            _ method: String = "GET", _ path: String, bearer: String? = nil, cookie: String? = nil,
            json: String? = nil, headers: [(String, String)] = []
        ) async throws -> (status: Int, body: String, headers: [(name: String, value: String)]) {
            var all = headers
            if let bearer { all.append(("Authorization", "Bearer \(bearer)")) }
            if let cookie { all.append(("Cookie", cookie)) }
            let reply = try await WebAppTests.request(method, base + path, headers: all, json: json)
            return (reply.status, reply.text, reply.headers)
        }

        func state(bearer: String) async throws -> [String: Any] {
            let reply = try await send("GET", "/ui/api/state", bearer: bearer)
            return (try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any]) ?? [:]
        }

        static func counter(_ state: [String: Any], _ key: String) -> String? {
            (state["counters"] as? [[String: Any]])?.first { $0["key"] as? String == key }?["value"] as? String
        }
    }

    static func start(_ server: MirrorServer) async throws -> (Task<Void, any Error>, String) {
        let address = Mutex<URL?>(nil)
        let task = Task { try await server.run(host: "127.0.0.1", port: 0) { url in address.withLock { $0 = url } } }
        guard await waitUntil(timeout: .seconds(30), { address.withLock { $0 } != nil }) else {
            task.cancel()
            throw ModelDepotError(.network, "the mirror did not start")
        }
        return (task, address.withLock { $0 }!.absoluteString)
    }

    static func pullInFlight(_ mirror: Mirror) async -> Bool {
        await waitUntil(timeout: .seconds(60)) {
            guard let state = try? await mirror.state(bearer: "reader"),
                let pull = (state["pulls"] as? [[String: Any]])?.first,
                pull["repository"] as? String == "acme/big", pull["path"] as? String == "weights.bin",
                let fraction = pull["fraction"] as? Double, fraction > 0, fraction < 1,
                Mirror.counter(state, "upstreamBytes") != "0 B"
            else { return false }
            return true
        }
    }

    /// The dashboard follows server-sent events instead of polling: the state at once, then only what changed;
    /// the stream needs the token, and a draining mirror ends it (`event: shutdown`) instead of waiting for it.
    @Test func theDashboardStreamsItsStateAndADrainEndsTheStream() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-dashboard-events")
        defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.path("repos/acme/tiny"), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: folder.path("repos/acme/tiny/config.json"))
        var server = MirrorServer(root: folder.path("repos"), token: "reader", logger: Self.quiet)
        server.drainTimeout = .seconds(120)
        var app = try await MirrorDashboardApp(source: server.dashboard, readToken: "reader", adminToken: nil)
        app.interval = .milliseconds(50)
        server.mount("/ui", onDrain: app.closeStreams) { [app] in app.addRoutes(to: $0) }
        let (task, base) = try await Self.start(server)
        let mirror = Mirror(base: base)
        #expect(try await mirror.send("GET", "/ui/api/events").status == 401)

        let response = try await AsyncHTTPTransport.patient.send(
            TransportRequest(
                method: "GET", url: URL(string: base + "/ui/api/events")!,
                headers: [("Authorization", "Bearer reader")]))
        #expect(response.status == 200)
        #expect(response.headers.first { $0.name.lowercased() == "content-type" }?.value == "text/event-stream")
        let received = Mutex("")
        let reading = Task {
            for try await part in response.body {
                received.withLock { $0 += String(decoding: part.bytes, as: UTF8.self) }
            }
        }
        #expect(await waitUntil { received.withLock { $0.contains("event: update\ndata: {") } })
        #expect(received.withLock { $0.contains("\"counters\"") })
        // A request moves the counters: the next update says so; between changes nothing is sent.
        _ = try await mirror.send("GET", "/api/models/acme/tiny", bearer: "reader")
        #expect(await waitUntil { received.withLock { $0.components(separatedBy: "event: update").count > 2 } })

        // The drain ends the open stream at once, so it does not wait out the drain's two minutes.
        let stopping = ContinuousClock.now
        task.cancel()
        #expect(await waitUntil { received.withLock { $0.contains("event: shutdown") } })
        _ = try? await reading.value
        _ = try? await task.value
        #expect(ContinuousClock.now - stopping < .seconds(60), "the drain waited for the stream")
    }

    @Test func showsPullsAndCountersAndGuardsChanges() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-dashboard")
        defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.path("repos/acme/big"), withIntermediateDirectories: true)
        try Data(Self.weights).write(to: folder.path("repos/acme/big/weights.bin"))
        var upstream = MirrorServer(root: folder.path("repos"), logger: Self.quiet)
        upstream.faults = try ServedFaults("rate=2MB")
        let (upstreamTask, upstreamURL) = try await Self.start(upstream)
        defer { upstreamTask.cancel() }

        var server = try MirrorServer(
            upstream: Upstream(endpoint: URL(string: upstreamURL)!), cache: folder.path("cache"), token: "reader",
            logger: Self.quiet)
        let app = try await MirrorDashboardApp(source: server.dashboard, readToken: "reader", adminToken: "admin")
        server.mount("/ui", onDrain: app.closeStreams) { [app] in app.addRoutes(to: $0) }
        let (task, base) = try await Self.start(server)
        defer { task.cancel() }
        let mirror = Mirror(base: base)

        // Without the mirror's token: a sign-in page, no state; the Hub API still needs the token.
        let page = try await mirror.send("GET", "/ui")
        #expect(page.status == 401 && page.body.contains("This mirror needs its token"))
        #expect(try await mirror.send("GET", "/ui/api/state").status == 401)
        #expect(try await mirror.send("GET", "/api/models/acme/big").status == 401)

        // A client pulls through; the dashboard shows the pull with its progress, and the counters move.
        let download = Task {
            try await mirror.send("GET", "/acme/big/resolve/main/weights.bin", bearer: "reader").body.utf8.count
        }
        #expect(await Self.pullInFlight(mirror), "no pull in flight showed")
        let during = try await mirror.state(bearer: "reader")
        #expect(during["readOnly"] as? Bool == true)
        #expect((during["readOnlyText"] as? String)?.contains("sign in with the admin token") == true)
        #expect(((during["clients"] as? [[String: Any]])?.first?["address"] as? String) == "127.0.0.1")
        _ = try await download.value
        let after = try await mirror.state(bearer: "reader")
        #expect((after["pulls"] as? [Any])?.isEmpty == true)
        #expect(
            Mirror.counter(after, "upstreamBytes") == "4.0 MiB" && Mirror.counter(after, "servedBytes") == "4.0 MiB")
        let rows = try #require(after["rows"] as? [[String: Any]])
        #expect(rows.map { $0["id"] as? String } == ["acme/big"])
        #expect((rows[0]["actions"] as? [Any])?.isEmpty == true, "read-only: no buttons")

        // The reader cannot change anything; the admin signs in and can, from the dashboard's own site only.
        let repo = #"{"id": "acme/big"}"#
        #expect(try await mirror.send("POST", "/ui/api/repositories/pin", bearer: "reader", json: repo).status == 403)
        #expect(try await mirror.send("POST", "/ui/api/session", json: #"{"token": "nope"}"#).status == 403)
        let signIn = try await mirror.send("POST", "/ui/api/session", json: #"{"token": "admin"}"#)
        #expect(signIn.status == 200)
        let setCookie = try #require(signIn.headers.first { $0.name.lowercased() == "set-cookie" }?.value)
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
        // Named for the mirror's port: another mirror on this machine keeps its own sign-in.
        #expect(setCookie.hasPrefix("modeldepot_mirror_\(URL(string: base)!.port!)="), "\(setCookie)")
        let cookie = String(setCookie.split(separator: ";")[0])
        let crossSite = try await mirror.send(
            "POST", "/ui/api/repositories/evict", cookie: cookie, json: repo,
            headers: [("Origin", "http://evil.example")])
        #expect(crossSite.status == 403)
        #expect(
            try await mirror.send("POST", "/ui/api/repositories/pin", cookie: cookie, json: nil).status == 415,
            "a change needs a JSON body")
        let pinned = try await mirror.send("POST", "/ui/api/repositories/pin", cookie: cookie, json: repo)
        #expect(pinned.status == 200 && pinned.body.contains("is pinned"), "\(pinned.body)")
        let admin = try await mirror.send("GET", "/ui/api/state", cookie: cookie)
        let adminState = try #require(try JSONSerialization.jsonObject(with: Data(admin.body.utf8)) as? [String: Any])
        let actions = ((adminState["rows"] as? [[String: Any]])?.first?["actions"] as? [[String: Any]])?.compactMap {
            $0["action"] as? String
        }
        #expect(actions == ["unpin", "evict"])
        let evicted = try await mirror.send("POST", "/ui/api/repositories/evict", cookie: cookie, json: repo)
        #expect(evicted.status == 200 && evicted.body.contains("Evicted acme/big: 4.0 MiB freed."), "\(evicted.body)")
        let end = try await mirror.state(bearer: "reader")
        #expect((end["rows"] as? [Any])?.isEmpty == true && Mirror.counter(end, "evictions") == "1")
        let again = try await mirror.send("POST", "/ui/api/repositories/evict", cookie: cookie, json: repo)
        #expect(again.status == 400 && again.body.contains("not in the mirror's cache"))
    }
}
