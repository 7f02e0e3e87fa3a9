import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepot
import ModelDepotInference
import ModelDepotScreens
import ModelDepotTesting
import NIOCore
import Synchronization
import Testing

@testable import ModelDepotWeb

/// The web app's Load, Unload and Loaded-models panel, through its router, with a runtime that answers at once: a
/// downloaded model loads into its runtime and shows as ready; a model not downloaded is refused with what to do;
/// Unload stops it; an app without runtimes says so.
@Suite struct LoadedModelsRoutesTests {
    final class InstantModel: RunningModel {
        let endpoint: URL? = URL(string: "http://127.0.0.1:4010/v1")
        let running = Mutex(true)
        var isRunning: Bool { running.withLock { $0 } }
        func lastLines() -> String { "" }
        func stop() async { running.withLock { $0 = false } }
    }

    final class InstantLauncher: RuntimeLauncher {
        let started = Mutex<[InstantModel]>([])
        func launch(_ entry: CatalogEntry, kind: RuntimeKind) async throws -> any RunningModel {
            let model = InstantModel()
            started.withLock { $0.append(model) }
            return model
        }
    }

    static func json(_ reply: TestResponse) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(buffer: reply.body)) as? [String: Any]
    }

    @Test func aDownloadedModelLoadsShowsAsReadyAndUnloads() async throws {
        try await ScreensFixture.with { fixture in
            try await fixture.downloads.start("chat")
            #expect(await fixture.waitFor("chat") { if case .completed = $0 { true } else { false } })
            let launcher = InstantLauncher()
            var app = WebApp(downloads: fixture.downloads)
            app.runtimes = ModelRuntimes(launcher: launcher)
            let router = app.makeRouter(host: "localhost", pages: try await UIPages.load())
            let cookie =
                "\(UISession.cookieName(port: 80))=\(try #require(app.session.exchange(app.session.launchToken)))"
            try await Application(router: router).test(.router) { client in
                func post(_ path: String) async throws -> TestResponse {
                    try await client.execute(
                        uri: path, method: .post, headers: WebRoutingTests.headers(cookie, json: true),
                        body: ByteBuffer(string: "{}"))
                }
                // A page of another site cannot make the app start a runtime: refused before anything starts.
                var crossSite = WebRoutingTests.headers(cookie, json: true)
                crossSite[HTTPField.Name("Sec-Fetch-Site")!] = "cross-site"
                let refused = try await client.execute(
                    uri: "/api/ui/models/chat/load", method: .post, headers: crossSite, body: ByteBuffer(string: "{}"))
                #expect(refused.status == .forbidden)
                #expect(launcher.started.withLock { $0.isEmpty }, "a cross-site request started a runtime")
                // A name that climbs out is no catalog name: nothing loads.
                let climbing = try await post("/api/ui/models/..%2F..%2Fetc%2Fpasswd/load")
                #expect([400, 404].contains(climbing.status.code), "\(climbing.status)")
                #expect(launcher.started.withLock { $0.isEmpty })

                let loaded = try await post("/api/ui/models/chat/load")
                #expect(loaded.status == .ok)
                let row = (Self.json(loaded)?["rows"] as? [[String: Any]])?.first
                #expect(row?["name"] as? String == "chat" && row?["state"] as? String == "ready", "\(row ?? [:])")
                #expect(row?["runtime"] as? String == "llamaServer")
                _ = try await post("/api/ui/models/chat/load")
                #expect(launcher.started.withLock { $0.count } == 1, "loaded twice, one runtime")

                // Not downloaded: refused with what to do, nothing started.
                let ghost = try await post("/api/ui/models/ghost/load")
                #expect(ghost.status == .conflict, "\(ghost.status)")
                #expect((Self.json(ghost)?["error"] as? String)?.contains("download it first") == true)

                let panel = try await client.execute(
                    uri: "/api/ui/runtimes", method: .get, headers: WebRoutingTests.headers(cookie))
                #expect((Self.json(panel)?["rows"] as? [[String: Any]])?.count == 1)
                let unloaded = try await post("/api/ui/models/chat/unload")
                #expect((Self.json(unloaded)?["rows"] as? [Any])?.isEmpty == true)
                #expect(Self.json(unloaded)?["emptyMessage"] != nil)
                #expect(launcher.started.withLock { $0.allSatisfy { !$0.isRunning } })
            }
        }
    }

    @Test func anAppWithoutRuntimesSaysSo() async throws {
        try await WebRoutingTests.withRouter { router, cookie, _ in
            try await Application(router: router).test(.router) { client in
                let reply = try await client.execute(
                    uri: "/api/ui/runtimes", method: .get, headers: WebRoutingTests.headers(cookie))
                #expect(reply.status == .conflict)
                #expect((Self.json(reply)?["error"] as? String)?.contains("loads no models") == true)
            }
        }
    }
}
