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

/// The playgrounds choose among downloaded models and load the one chosen, through the web app's router with a
/// scripted runtime: an encoder in this process whose vectors are made up. What is downloaded is offered, what is
/// not is counted, a request naming a model loads it once, a name from elsewhere loads nothing, and a model too big
/// for the memory is refused with a code the page acts on.
@Suite struct PlaygroundRoutesTests {
    /// Vectors from the letters of each sentence: same sentence, same vector.
    struct LetterEmbedder: TextEmbedder {
        var dimensions: Int { 26 }
        func embed(_ texts: [String]) async throws -> [[Float]] {
            texts.map { text in
                var vector = [Float](repeating: 0, count: 26)
                for scalar in text.lowercased().unicodeScalars where ("a"..."z").contains(scalar) {
                    vector[Int(scalar.value - 97)] += 1
                }
                return vector
            }
        }
    }

    final class InProcessModel: RunningModel {
        var endpoint: URL? { nil }
        var isRunning: Bool { true }
        var embedder: (any TextEmbedder)? { LetterEmbedder() }
        func lastLines() -> String { "" }
        func stop() async {}
    }

    final class EncoderLauncher: RuntimeLauncher {
        let launches = Mutex<[String]>([])
        let fit = Mutex<MemoryFit?>(nil)
        func launch(_ entry: CatalogEntry, kind: RuntimeKind) async throws -> any RunningModel {
            launches.withLock { $0.append(entry.name) }
            return InProcessModel()
        }
        func memoryFit(_ entry: CatalogEntry, kind: RuntimeKind) -> MemoryFit? { fit.withLock { $0 } }
    }

    @Test func theEmbeddingsPlaygroundOffersLoadsAndUsesTheChosenModel() async throws {
        try await ScreensFixture.with { fixture in
            let launcher = EncoderLauncher()
            var app = WebApp(downloads: fixture.downloads)
            app.runtimes = ModelRuntimes(launcher: launcher)
            let router = app.makeRouter(host: "localhost", pages: try await UIPages.load())
            let cookie =
                "\(UISession.cookieName(port: 80))=\(try #require(app.session.exchange(app.session.launchToken)))"
            try await Application(router: router).test(.router) { client in
                func get(_ path: String) async throws -> TestResponse {
                    try await client.execute(uri: path, method: .get, headers: WebRoutingTests.headers(cookie))
                }
                func post(_ path: String, _ body: String) async throws -> TestResponse {
                    try await client.execute(
                        uri: path, method: .post, headers: WebRoutingTests.headers(cookie, json: true),
                        body: ByteBuffer(string: body))
                }
                // Nothing downloaded: the page says what to do; the selector is empty, with "embed" counted.
                let empty = try await get("/api/ui/playgrounds/embeddings")
                let emptyJSON = LoadedModelsRoutesTests.json(empty)
                #expect((emptyJSON?["choices"] as? [Any])?.isEmpty == true)
                #expect((emptyJSON?["waitingText"] as? String)?.contains("1 more model") == true, "\(emptyJSON ?? [:])")
                let refused = try await post("/api/ui/embeddings", #"{"sentences": ["a", "b"], "model": "embed"}"#)
                #expect(refused.status == .conflict)
                #expect(LoadedModelsRoutesTests.json(refused)?["code"] as? String == "incompleteSnapshot")
                #expect(launcher.launches.withLock { $0.isEmpty })

                try await fixture.downloads.start("embed")
                #expect(await fixture.waitFor("embed") { if case .completed = $0 { true } else { false } })
                let offered = LoadedModelsRoutesTests.json(try await get("/api/ui/playgrounds/embeddings?model=embed"))
                let choices = offered?["choices"] as? [[String: Any]]
                #expect(choices?.map { $0["id"] as? String } == ["embed"], "\(offered ?? [:])")
                #expect(choices?.first?["state"] as? String == "ready" && offered?["selected"] as? String == "embed")
                // The page "Use" opens has it selected.
                let page = String(buffer: try await get("/embeddings?model=embed").body)
                #expect(page.contains(#"<option value="embed" data-state="ready""#) && page.contains("selected"))

                // A request naming it loads it, once however often it is used.
                for _ in 0..<2 {
                    let compared = try await post(
                        "/api/ui/embeddings", #"{"sentences": ["a cat", "a cat", "stocks fell"], "model": "embed"}"#)
                    #expect(compared.status == .ok, "\(String(buffer: compared.body))")
                    #expect((LoadedModelsRoutesTests.json(compared)?["dimensions"] as? Int) == 26)
                }
                #expect(launcher.launches.withLock { $0 } == ["embed"])
                let loaded = LoadedModelsRoutesTests.json(try await get("/api/ui/playgrounds/embeddings"))
                #expect((loaded?["choices"] as? [[String: Any]])?.first?["state"] as? String == "loaded")

                // Names from elsewhere load nothing: another kind's model, one not in the catalog, one climbing out.
                for name in ["chat", "nope", "../../etc/passwd", "@endpoint"] {
                    let body = try JSONSerialization.data(withJSONObject: ["sentences": ["a", "b"], "model": name])
                    let reply = try await post("/api/ui/embeddings", String(decoding: body, as: UTF8.self))
                    #expect([400, 409].contains(reply.status.code), "\(name): \(reply.status)")
                }
                #expect(launcher.launches.withLock { $0 } == ["embed"])
            }
        }
    }

    @Test func aModelTooBigIsRefusedWithACodeThePageOffersToOverride() async throws {
        try await ScreensFixture.with { fixture in
            try await fixture.downloads.start("embed")
            #expect(await fixture.waitFor("embed") { if case .completed = $0 { true } else { false } })
            let launcher = EncoderLauncher()
            launcher.fit.withLock {
                $0 = MemoryFit(weightBytes: 9_000_000_000, cacheBytes: 0, availableBytes: 1_000_000_000)
            }
            var app = WebApp(downloads: fixture.downloads)
            app.runtimes = ModelRuntimes(launcher: launcher)
            let router = app.makeRouter(host: "localhost", pages: try await UIPages.load())
            let cookie =
                "\(UISession.cookieName(port: 80))=\(try #require(app.session.exchange(app.session.launchToken)))"
            try await Application(router: router).test(.router) { client in
                func load(_ body: String) async throws -> TestResponse {
                    try await client.execute(
                        uri: "/api/ui/models/embed/load", method: .post,
                        headers: WebRoutingTests.headers(cookie, json: true), body: ByteBuffer(string: body))
                }
                let refused = try await load("{}")
                #expect(refused.status == .conflict)
                let refusal = LoadedModelsRoutesTests.json(refused)
                #expect(refusal?["code"] as? String == "insufficientMemory")
                #expect((refusal?["error"] as? String)?.contains("needs about 8.4 GiB") == true, "\(refusal ?? [:])")
                #expect(launcher.launches.withLock { $0.isEmpty })
                // The model's page shows the estimate before anything is loaded.
                let page = String(
                    buffer: try await client.execute(
                        uri: "/models/embed", method: .get, headers: WebRoutingTests.headers(cookie)
                    ).body)
                #expect(page.contains(#"id="memory-estimate" class="estimate warning""#), "\(page)")
                let anyway = try await load(#"{"ignoringMemory": true}"#)
                #expect(anyway.status == .ok)
                #expect(launcher.launches.withLock { $0 } == ["embed"])
            }
        }
    }
}
