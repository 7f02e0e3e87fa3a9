import Foundation
import ModelDepot
import ModelDepotPlatform
import ModelDepotTesting
import Testing

@testable import ModelDepotWeb

/// The model page's "Bill of materials" (issue 66): offered once the model is on disk, a CycloneDX 1.6 download
/// that the reference validator accepts, behind the session like the rest of the API.
extension WebAppTests {
    @Test func aDownloadedModelsPageOffersItsBillOfMaterials() async throws {
        try await Self.with { fixture, app in
            let cookie = try await app.openSession()
            let before = try await app.send("GET", "/api/ui/models/embed/bom", cookie: cookie)
            #expect(before.status == 404 && before.text.contains("pull it first"), "\(before.status) \(before.text)")
            #expect(try await !app.send("GET", "/models/embed", cookie: cookie).text.contains("bom-link"))

            try await fixture.downloads.start("embed")
            #expect(await fixture.waitFor("embed") { if case .completed = $0 { true } else { false } })
            let page = try await app.send("GET", "/models/embed", cookie: cookie)
            #expect(page.text.contains(#"id="bom-link" href="/api/ui/models/embed/bom" download"#), "\(page.text)")

            let bill = try await app.send("GET", "/api/ui/models/embed/bom", cookie: cookie)
            #expect(bill.status == 200, "\(bill.text)")
            #expect(bill.header("Content-Type") == "application/vnd.cyclonedx+json; version=1.6")
            #expect(bill.header("Content-Disposition") == #"attachment; filename="embed.cdx.json""#)
            let document = try #require(bill.json as? [String: Any])
            let model = try #require((document["components"] as? [[String: Any]])?.first)
            #expect(model["type"] as? String == "machine-learning-model")
            #expect((model["components"] as? [[String: Any]])?.isEmpty == false)
            let python = Self.packageRoot.appendingPathComponent(".venv-signing/bin/python")
            if FileManager.default.isExecutableFile(atPath: python.path) {
                let folder = try TemporaryDirectory(prefix: "modeldepot-web-bom")
                defer { folder.remove() }
                let file = folder.path("embed.cdx.json")
                try Data(bill.body).write(to: file)
                let output = folder.path("verdict.txt")
                let check = try ChildProcess(
                    executable: python.path,
                    arguments: [
                        Self.packageRoot.appendingPathComponent("Tests/PythonPeers/bom_peer.py").path, "validate",
                        file.path,
                    ], output: output.path)
                await check.waitForExit()
                #expect(check.succeeded, "\((try? String(contentsOf: output, encoding: .utf8)) ?? "")")
            }

            // Without the session: refused like every other call of the API.
            let stranger = try await app.send("GET", "/api/ui/models/embed/bom")
            #expect(stranger.status == 401 || stranger.status == 403, "\(stranger.status)")
        }
    }
}
