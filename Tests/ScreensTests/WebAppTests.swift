import Foundation
import ModelDepot
import ModelDepotPlatform
import ModelDepotScreens
import ModelDepotTesting
import Synchronization
import Testing

@testable import ModelDepotWeb

/// The web app over HTTP, without a browser: the session link, the guard (cookie, cross-site, Host), pages,
/// the JSON API and its OpenAPI document, live events.
@Suite struct WebAppTests {
    struct Reply {
        let status: Int
        let headers: [(name: String, value: String)]
        let body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: Any? { try? JSONSerialization.jsonObject(with: Data(body)) }
        func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// One request to a server on this machine (a JSON body when `json` is given), its whole answer read.
    static func request(
        _ method: String, _ url: String, headers: [(name: String, value: String)] = [], json: String? = nil
    ) async throws -> Reply {
        let all = headers + (json == nil ? [] : [("Content-Type", "application/json")])
        let response = try await AsyncHTTPTransport.patient.send(
            TransportRequest(method: method, url: URL(string: url)!, headers: all, body: json.map { Array($0.utf8) }))
        var body: [UInt8] = []
        for try await buffer in response.body { body += buffer.bytes }
        return Reply(status: response.status, headers: response.headers, body: body)
    }

    /// The app running over `fixture`'s downloads; `launch` is the one-time link.
    struct Running {
        let launch: URL
        var base: String { "http://127.0.0.1:\(launch.port!)" }

        func send(
            _ method: String = "GET", _ path: String, cookie: String? = nil, json: String? = nil,
            headers: [(name: String, value: String)] = []
        ) async throws -> Reply {
            try await WebAppTests.request(
                method, base + path, headers: headers + (cookie.map { [("Cookie", $0)] } ?? []), json: json)
        }

        /// Opens the session and returns the cookie (`name=value`).
        func openSession() async throws -> String {
            let reply = try await send("GET", "/session?" + (launch.query ?? ""))
            #expect(reply.status == 303 && reply.header("Location") == "/models")
            let cookie = try #require(reply.header("Set-Cookie"))
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "\(cookie)")
            return String(cookie.split(separator: ";")[0])
        }
    }

    static func with(
        streams: EventStreams = EventStreams(), _ body: (ScreensFixture, Running) async throws -> Void
    ) async throws {
        try await ScreensFixture.with { fixture in
            let launch = Mutex<URL?>(nil)
            var app = WebApp(downloads: fixture.downloads)
            app.streams = streams
            app.transcribe = TranscribePlayground(transcriber: PlaygroundTests.FixedTranscriber(), source: "test")
            let task = Task { try await app.run(host: "127.0.0.1", port: 0) { url in launch.withLock { $0 = url } } }
            defer { task.cancel() }
            try #require(await waitUntil { launch.withLock { $0 } != nil }, "the web app did not start")
            try await body(fixture, Running(launch: launch.withLock { $0 }!))
        }
    }

    @Test func theLinkOpensOneSessionAndPagesNeedIt() async throws {
        try await Self.with { _, app in
            let before = try await app.send("GET", "/models")
            #expect(before.status == 401 && before.text.contains("Open the link"))
            let cookie = try await app.openSession()
            let again = try await app.send("GET", "/session?" + (app.launch.query ?? ""))
            #expect(again.status == 403, "the link works once")
            let page = try await app.send("GET", "/models", cookie: cookie)
            #expect(page.status == 200 && page.text.contains(#"data-row="chat""#))
            for header in ["Content-Security-Policy", "Referrer-Policy", "X-Content-Type-Options", "X-Frame-Options"] {
                #expect(page.header(header) != nil, "\(header)")
            }
            #expect(page.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
            #expect(!page.text.contains("<script>"), "no inline script")
            // An icon of its own (a data: URL the CSP's img-src allows): the browser asks for no /favicon.ico, whose
            // 404 was an error in every page's console.
            #expect(page.text.contains(#"<link rel="icon" href="data:image/svg+xml,"#))
            #expect(page.header("Content-Security-Policy")?.contains("img-src 'self' data:") == true)
            let wrongCookie = try await app.send("GET", "/models", cookie: "modeldepot_ui_\(app.launch.port!)=0000")
            #expect(wrongCookie.status == 401)
            let api = try await app.send("GET", "/api/ui/models")
            #expect(api.status == 401 && (api.json as? [String: String])?["error"] != nil)
        }
    }

    @Test func changesFromOtherSitesAndForeignHostsAreRefused() async throws {
        try await Self.with { fixture, app in
            let cookie = try await app.openSession()
            let crossOrigin = try await app.send(
                "POST", "/api/ui/models/embed/download", cookie: cookie, json: "{}",
                headers: [("Origin", "http://evil.example")])
            #expect(crossOrigin.status == 403)
            let crossSite = try await app.send(
                "POST", "/api/ui/models/embed/download", cookie: cookie, json: "{}",
                headers: [("Sec-Fetch-Site", "cross-site")])
            #expect(crossSite.status == 403)
            let form = try await app.send(
                "POST", "/api/ui/models/embed/download", cookie: cookie,
                headers: [("Content-Type", "application/x-www-form-urlencoded")])
            #expect(form.status == 415)
            let noCookie = try await app.send("POST", "/api/ui/models/embed/download", json: "{}")
            #expect(noCookie.status == 401)
            let rebound = try await app.send(
                "GET", "/models", cookie: cookie, headers: [("Host", "attacker.example:\(app.launch.port!)")])
            #expect(rebound.status == 421)
            #expect(await fixture.downloads.entry("embed") == nil, "nothing refused started a download")
            let sameSite = try await app.send(
                "POST", "/api/ui/models/embed/download", cookie: cookie, json: "{}",
                headers: [("Origin", app.base), ("Sec-Fetch-Site", "same-origin")])
            #expect(sameSite.status == 200, "\(sameSite.text)")
            // The download runs to its end before the mirror closes (a server closing while the client pool
            // opens a connection trips over it).
            #expect(await fixture.waitFor("embed") { if case .completed = $0 { true } else { false } })
        }
    }

    /// A page on another site (or any local process) posting a recording-sized body without the session: the
    /// app refused it only after reading up to ~44 MB into memory. Now the headers decide first, and the answer
    /// comes while the body is still unsent.
    @Test func anUnauthenticatedLargeBodyIsRefusedBeforeItIsRead() async throws {
        try await Self.with { _, app in
            let port = app.launch.port!
            let cases: [(headers: String, status: String)] = [
                ("Content-Type: application/json\r\n", "401"),
                ("Content-Type: application/json\r\nOrigin: http://evil.example\r\n", "403"),
                ("Content-Type: text/plain\r\nSec-Fetch-Site: cross-site\r\n", "403"),
            ]
            for (headers, status) in cases {
                let connection = try LoopbackConnection(port: port)
                // The head and the first bytes of a 40 MB body; the rest never comes.
                connection.transmit(
                    "POST /api/ui/transcribe HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(headers)"
                        + "Content-Length: 40000000\r\n\r\n{\"audio\": \"AAAA")
                let reply = await connection.firstBytes().map { String(decoding: $0, as: UTF8.self) }
                #expect(reply?.hasPrefix("HTTP/1.1 \(status)") == true, "\(headers): \(reply ?? "no answer")")
                #expect(reply?.lowercased().contains("connection: close") == true, "\(reply ?? "")")
            }
            // A foreign Host is refused the same way.
            let connection = try LoopbackConnection(port: port)
            connection.transmit(
                "POST /api/ui/transcribe HTTP/1.1\r\nHost: attacker.example:\(port)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 40000000\r\n\r\n{")
            let reply = await connection.firstBytes().map { String(decoding: $0, as: UTF8.self) }
            #expect(reply?.hasPrefix("HTTP/1.1 421") == true, "\(reply ?? "no answer")")
        }
    }

    /// Cookies are not separated by port: the session cookie of one `modeldepot ui` must not be another's.
    @Test func theSessionCookieNameCarriesThePort() async throws {
        try await Self.with { _, app in
            let cookie = try await app.openSession()
            #expect(cookie.hasPrefix("modeldepot_ui_\(app.launch.port!)="), "\(cookie)")
            let value = cookie.split(separator: "=", maxSplits: 1)[1]
            let otherPort = try await app.send("GET", "/models", cookie: "modeldepot_ui_1=\(value)")
            #expect(otherPort.status == 401)
            #expect(try await app.send("GET", "/models", cookie: cookie).status == 200)
        }
    }

    @Test func actionsRunAndBadInputChangesNothing() async throws {
        try await Self.with { fixture, app in
            let cookie = try await app.openSession()
            let unknown = try await app.send(
                "POST", "/api/ui/models/..%2F..%2Fetc/download", cookie: cookie, json: "{}")
            #expect(unknown.status == 400 && unknown.text.contains("no model called"), "\(unknown.text)")
            let verb = try await app.send("POST", "/api/ui/models/embed/explode", cookie: cookie, json: "{}")
            #expect(verb.status == 404)
            let method = try await app.send("GET", "/api/ui/models/embed/download", cookie: cookie)
            #expect(method.status == 405 && method.header("Allow") == "POST")
            let huge = try await app.send(
                "PUT", "/api/ui/bandwidth", cookie: cookie, json: #"{"bytesPerSecond": 1e300}"#)
            #expect(huge.status == 400)
            let negative = try await app.send(
                "PUT", "/api/ui/bandwidth", cookie: cookie, json: #"{"bytesPerSecond": -5}"#)
            #expect(negative.status == 400 && fixture.downloads.bandwidth.bytesPerSecond == nil)
            let filter = try await app.send("GET", "/models?capability=telepathy", cookie: cookie)
            #expect(filter.status == 404 && filter.text.contains("is not a capability"))

            let limit = try await app.send(
                "PUT", "/api/ui/bandwidth", cookie: cookie, json: #"{"bytesPerSecond": 2000000}"#)
            #expect(limit.status == 200 && fixture.downloads.bandwidth.bytesPerSecond == 2_000_000)
            #expect((limit.json as? [String: Any])?["bandwidthText"] as? String == "1.9 MiB/s")
            let start = try await app.send("POST", "/api/ui/models/embed/download", cookie: cookie, json: "{}")
            #expect(start.status == 200)
            #expect(await fixture.waitFor("embed") { if case .completed = $0 { true } else { false } })
            let models = try await app.send("GET", "/api/ui/models", cookie: cookie)
            let rows = try #require((models.json as? [String: Any])?["rows"] as? [[String: Any]])
            let embed = try #require(rows.first { $0["name"] as? String == "embed" })
            #expect(((embed["status"] as? [String: Any])?["badge"] as? [String: Any])?["kind"] as? String == "ready")
            for page in ["/models/chat", "/downloads", "/onboarding/embed", "/models?capability=embeddings&q=vectors"] {
                let reply = try await app.send("GET", page, cookie: cookie)
                #expect(reply.status == 200, "\(page): \(reply.text.prefix(300))")
                // An absent value renders as nothing (the first screenshots showed a stray "nil").
                #expect(!reply.text.contains(">nil<") && !reply.text.contains("\nnil\n"), "\(page)")
            }
            // Each download's own chart is either there with its values or hidden; never an empty box with an empty
            // attribute (Mustache takes "" as true), and never the page's chart borrowed by a row.
            let downloadsPage = try await app.send("GET", "/downloads", cookie: cookie).text
            let rowCharts = downloadsPage.components(separatedBy: "<figure class=\"chart chart-time chart-row\"")
                .dropFirst()
                .map { $0.prefix { $0 != ">" } }
            #expect(!rowCharts.isEmpty)
            for tag in rowCharts {
                #expect(
                    (tag.contains(" hidden") && !tag.contains("data-chart-values"))
                        || (tag.contains("data-chart-values=\"{") && !tag.contains(" hidden")), "\(tag)")
            }
            #expect(downloadsPage.contains(#"id="throughput" data-chart-values="{"#))
            let missing = try await app.send("GET", "/models/nope", cookie: cookie)
            #expect(missing.status == 404 && missing.text.contains("no model called"))
        }
    }

    /// A cache is written by other programs, so its names are hostile: a repository folder, a branch and a partial
    /// download's file name that are markup reach the storage page (its rows, its chart's values, the prune's
    /// summary) and its JSON as text only, and no script of the app turns text into markup.
    @Test func namesFromTheCacheReachTheStoragePageAsTextOnly() async throws {
        try await Self.with { fixture, app in
            let branch = #"x"><img src=x onerror=alert(1)>"#
            let partial = "<svg onload=alert(2)>.incomplete"
            let folder = "models--acme--<b onmouseover=alert(3)>"
            let cache = fixture.folder.path("cache")
            let commit = String(repeating: "ab", count: 20)
            let manager = FileManager.default
            for (repoFolder, ref) in [("models--evil--names", branch), (folder, "main")] {
                let repo = cache.appendingPathComponent(repoFolder)
                try manager.createDirectory(
                    at: repo.appendingPathComponent("blobs"), withIntermediateDirectories: true)
                try Data(count: 4096).write(to: repo.appendingPathComponent("blobs/0123abcd"))
                let snapshot = repo.appendingPathComponent("snapshots/\(commit)")
                try manager.createDirectory(at: snapshot, withIntermediateDirectories: true)
                try manager.createSymbolicLink(
                    atPath: snapshot.appendingPathComponent("model.bin").path,
                    withDestinationPath: "../../blobs/0123abcd")
                try manager.createDirectory(at: repo.appendingPathComponent("refs"), withIntermediateDirectories: true)
                try Data(commit.utf8).write(to: repo.appendingPathComponent("refs/\(ref)"))
            }
            // A partial download two days old, which the prune offers to remove, naming its file.
            let stale = cache.appendingPathComponent("models--evil--names/blobs/\(partial)")
            try Data(count: 100).write(to: stale)
            try manager.setAttributes(
                [.modificationDate: Date().addingTimeInterval(-2 * 86_400)], ofItemAtPath: stale.path)

            let cookie = try await app.openSession()
            let page = try await app.send("GET", "/storage", cookie: cookie)
            #expect(page.status == 200)
            // Each crafted name reached the page, escaped; none as markup.
            #expect(page.text.contains("evil/names"), "the crafted repository is listed")
            #expect(
                page.text.contains("onerror=alert(1)&gt;"), "the branch is on the page (the chart's values), escaped")
            #expect(page.text.contains("&lt;b onmouseover=alert(3)&gt;"), "the folder's repository is listed, escaped")
            #expect(page.text.contains("&lt;svg onload=alert(2)&gt;.incomplete"), "the prune names the file, escaped")
            for raw in ["<img src", "<svg onload", "<b onmouseover", #"x"><img"#] {
                #expect(!page.text.contains(raw), "\(raw) reached the storage page as markup")
            }
            // Inside the chart's attribute, no quote ends it early: the attribute is the JSON the script parses.
            let attribute = try #require(
                page.text.components(separatedBy: #"data-chart-values=""#).dropFirst().first?.prefix { $0 != "\"" })
            let decoded = String(attribute).replacingOccurrences(of: "&quot;", with: "\"")
                .replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&lt;", with: "<")
                .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
            let chart = try #require(try JSONSerialization.jsonObject(with: Data(decoded.utf8)) as? [String: Any])
            let bars = try #require(chart["bars"] as? [[String: Any]])
            let labels = bars.flatMap { ($0["pieces"] as? [[String: Any]] ?? []).compactMap { $0["label"] as? String } }
            #expect(labels.contains { $0.contains(branch) }, "the chart's values carry the branch as it is: \(labels)")
            // The JSON carries the names as strings.
            let json = try await app.send("GET", "/api/ui/storage", cookie: cookie)
            let rows = try #require((json.json as? [String: Any])?["rows"] as? [[String: Any]])
            #expect(
                rows.contains { $0["id"] as? String == "acme/<b onmouseover=alert(3)>" }, "\(rows.map { $0["id"] })")
            // The scripts place the server's text with textContent and attributes, never as markup.
            // Every script the app ships (the folder's, so a new one is checked too), as the app serves it.
            let assets = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Sources/ModelDepotWeb/Resources/assets")
            let scripts = try FileManager.default.contentsOfDirectory(atPath: assets.path).filter {
                $0.hasSuffix(".js")
            }
            #expect(scripts.count >= 5, "\(scripts)")
            let sinks = [
                "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "srcdoc",
                "DOMParser", "createContextualFragment",
            ]
            for asset in scripts {
                let script = try await app.send("GET", "/assets/\(asset)", cookie: cookie)
                #expect(script.status == 200, "\(asset)")
                for sink in sinks { #expect(!script.text.contains(sink), "\(asset) uses \(sink)") }
            }
        }
    }

    @Test func liveEventsCarryStatusAndDownloads() async throws {
        try await Self.with { fixture, app in
            let cookie = try await app.openSession()
            let response = try await AsyncHTTPTransport.patient.send(
                TransportRequest(
                    url: URL(string: app.base + "/api/ui/events")!, headers: [("Cookie", cookie)],
                    callerDetectsStalls: true))
            #expect(response.status == 200 && response.header("Content-Type") == "text/event-stream")
            var text = ""
            for try await buffer in response.body {
                text += String(decoding: buffer.bytes, as: UTF8.self)
                if text.contains("\n\n") { break }
            }
            #expect(text.hasPrefix("event: update\ndata: {"), "\(text.prefix(200))")
            let data = try #require(text.split(separator: "\n").first { $0.hasPrefix("data: ") }?.dropFirst(6))
            let update = try #require(try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any])
            #expect((update["models"] as? [Any])?.count == 3 && update["downloads"] is [String: Any])
        }
    }

    /// The event stream reads readiness from the disk only when something beyond progress changed: a model deleted
    /// on the Storage screen reaches an open stream as not downloaded.
    @Test func aDeleteReachesAnOpenEventStream() async throws {
        try await Self.with { fixture, app in
            let cookie = try await app.openSession()
            #expect(
                try await app.send("POST", "/api/ui/models/embed/download", cookie: cookie, json: "{}").status == 200)
            #expect(await fixture.waitFor("embed") { if case .completed = $0 { true } else { false } })
            let response = try await AsyncHTTPTransport.patient.send(
                TransportRequest(
                    url: URL(string: app.base + "/api/ui/events")!, headers: [("Cookie", cookie)],
                    callerDetectsStalls: true))
            let kinds = Mutex<[String]>([])
            let reading = Task {
                var text = ""
                for try await buffer in response.body {
                    text += String(decoding: buffer.bytes, as: UTF8.self)
                    while let end = text.range(of: "\n\n") {
                        let event = text[..<end.lowerBound]
                        text = String(text[end.upperBound...])
                        guard let data = event.split(separator: "\n").first(where: { $0.hasPrefix("data: ") }),
                            let update = try? JSONSerialization.jsonObject(with: Data(data.dropFirst(6).utf8))
                                as? [String: Any],
                            let row = (update["models"] as? [[String: Any]])?.first(where: {
                                $0["name"] as? String == "embed"
                            }),
                            let kind = ((row["status"] as? [String: Any])?["badge"] as? [String: Any])?["kind"]
                                as? String
                        else { continue }
                        kinds.withLock { $0.append(kind) }
                    }
                }
            }
            defer { reading.cancel() }
            #expect(await waitUntil { kinds.withLock { $0.first } == "ready" })
            let deleted = try await app.send(
                "POST", "/api/ui/storage/delete", cookie: cookie, json: #"{"id": "acme/embed"}"#)
            #expect(deleted.status == 200, "\(deleted.text)")
            #expect(await waitUntil { kinds.withLock { $0.last } == "notDownloaded" }, "\(kinds.withLock { $0 })")
        }
    }

    @Test func eventStreamsEndWhenTheirClientsLeaveOrTheAppStops() async throws {
        // A heartbeat of 50 ms stands for the 15 s one: a tab that closed is found by the next write.
        let streams = EventStreams(heartbeat: .milliseconds(50))
        try await Self.with(streams: streams) { _, app in
            let cookie = try await app.openSession()
            let port = app.launch.port!
            func openStream() async throws -> LoopbackConnection {
                let client = try LoopbackConnection(port: port)
                client.transmit("GET /api/ui/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: \(cookie)\r\n\r\n")
                let first = try #require(await client.firstBytes())
                #expect(String(decoding: first, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
                return client
            }
            var clients: [LoopbackConnection] = []
            for _ in 0..<5 { clients.append(try await openStream()) }
            #expect(await waitUntil { streams.openCount == 5 })
            // The browser closes its tabs: nothing changes in the app, so only the heartbeat notices.
            clients.removeAll()  // closes each socket
            #expect(await waitUntil { streams.openCount == 0 }, "\(streams.openCount) streams still held")

            // The app stops with a stream open: the stream is told why and ends, and the drain does not wait.
            let last = try await openStream()
            #expect(await waitUntil { streams.openCount == 1 })
            streams.closeAll()
            // The response ends (its last chunk); the connection itself may stay open for another request.
            var text = ""
            while !text.contains("\r\n0\r\n\r\n"), let more = await last.firstBytes() {
                text += String(decoding: more, as: UTF8.self)
            }
            #expect(text.contains("event: shutdown") && text.hasSuffix("\r\n0\r\n\r\n"), "\(text.suffix(200))")
            #expect(streams.openCount == 0)
        }
    }

    @Test func downloadsTheAppStartedSurviveItsStopAndAreOfferedAgain() async throws {
        try await ScreensFixture.with(limit: 128 << 10) { fixture in
            let launch = Mutex<URL?>(nil)
            let app = WebApp(downloads: fixture.downloads)
            let running = Task { try await app.run(host: "127.0.0.1", port: 0) { url in launch.withLock { $0 = url } } }
            try #require(await waitUntil { launch.withLock { $0 } != nil }, "the web app did not start")
            try await fixture.downloads.start("chat")
            #expect(
                await waitUntil { (await DownloadsScreen.load(fixture.downloads).rows.first?.bytes ?? 0) > 64 << 10 })
            // The app stops (as on SIGTERM): the download stops where it is, before the process would exit.
            running.cancel()
            _ = try? await running.value
            #expect(await fixture.waitFor("chat") { $0.isFinal })
            // The next app over the same cache offers to resume it, and resuming fetches only the rest.
            let next = ModelDownloads(
                manager: try ModelManager(
                    configuration: .init(
                        endpoint: fixture.endpoint, cache: HubCache(root: fixture.folder.path("cache")))),
                catalog: ScreensFixture.catalog)
            let status = try #require(await ModelsScreen.load(next).rows.first { $0.name == "chat" }?.status)
            #expect(status.badge.kind == .partial && status.actionLabel == "Resume", "\(status)")
            try await next.start("chat")
            #expect(await waitUntil { await DownloadsScreen.load(next).rows.first?.state == "completed" })
            await next.stopAll()
        }
    }

    /// The document is valid OpenAPI 3.1 (openapi-spec-validator), and real answers match its schemas.
    @Test func realAnswersMatchTheDocument() async throws {
        let python = Self.packageRoot.appendingPathComponent(".venv/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "the venv is missing (scripts/test)")
        try await Self.with { fixture, app in
            let cookie = try await app.openSession()
            try await fixture.downloads.start("embed")
            #expect(await fixture.waitFor("embed") { if case .completed = $0 { true } else { false } })
            let folder = try TemporaryDirectory(prefix: "modeldepot-openapi")
            defer { folder.remove() }
            var arguments = [
                Self.packageRoot.appendingPathComponent("Tests/PythonPeers/openapi_check.py").path,
                Self.documentURL.path,
            ]
            let answers: [(schema: String, method: String, path: String, body: String?)] = [
                ("ModelsScreen", "GET", "/api/ui/models", nil), ("ModelsScreen", "GET", "/api/ui/models?hub=acme", nil),
                ("ModelDetailScreen", "GET", "/api/ui/models/chat", nil),
                ("DownloadsScreen", "GET", "/api/ui/downloads", nil),
                ("OnboardingScreen", "GET", "/api/ui/onboarding/embed", nil),
                ("DownloadsScreen", "POST", "/api/ui/models/embed/download", "{}"),
                ("Error", "GET", "/api/ui/models/nope", nil),
                ("StorageScreen", "GET", "/api/ui/storage", nil), ("SettingsScreen", "GET", "/api/ui/settings", nil),
                ("StorageOutcome", "POST", "/api/ui/storage/verify", #"{"id": "acme/embed"}"#),
                ("PrunePreview", "POST", "/api/ui/storage/prune-preview", #"{"maxBytes": 0}"#),
                ("StorageOutcome", "POST", "/api/ui/storage/prune-detached", "{}"),
                ("Error", "POST", "/api/ui/storage/pin", #"{"id": "../x"}"#),
                ("Error", "POST", "/api/ui/storage/prune", #"{"maxBytes": -1}"#),
                (
                    "TranscribeResult", "POST", "/api/ui/transcribe",
                    #"{"name": "talk.wav", "audio": "\#(PlaygroundTests.wavBase64)", "wordTimestamps": true}"#
                ),
                ("Error", "POST", "/api/ui/transcribe", #"{"name": "talk.wav", "audio": "bm90IGF1ZGlv"}"#),
            ]
            for (index, answer) in answers.enumerated() {
                let reply = try await app.send(answer.method, answer.path, cookie: cookie, json: answer.body)
                let file = folder.path("answer-\(index).json")
                try Data(reply.body).write(to: file)
                arguments += [answer.schema, file.path]
            }
            let output = folder.path("check.out")
            let check = try ChildProcess(executable: python.path, arguments: arguments, output: output.path)
            await check.waitForExit()
            let said = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            #expect(check.succeeded, "\(said)")
            let result = try #require(
                try JSONSerialization.jsonObject(with: Data(said.utf8)) as? [String: Any], "\(said)")
            #expect(result["document"] as? String == "valid")
            let verdicts = try #require(result["answers"] as? [String: String])
            #expect(verdicts.count == answers.count && verdicts.values.allSatisfy { $0 == "valid" }, "\(verdicts)")
        }
    }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let documentURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/ModelDepotWeb/Resources/openapi.json")
}
