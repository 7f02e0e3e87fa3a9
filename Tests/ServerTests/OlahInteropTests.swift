import Foundation
import ModelDepotTesting
import Testing

/// olah 0.5.4, a third-party Hub mirror (PyPI), in front of ours: it asks paths-info for every file, which our
/// mirror once refused with 405, so olah could not serve a single file. The venv is `.venv-olah` (scripts/test).
@Suite struct OlahInteropTests {
    static let olah = PythonInteropTests.packageRoot.appendingPathComponent(".venv-olah/bin/olah-cli")

    @Test func huggingFaceHubPullsThroughOlahInFrontOfOurMirror() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.olah.path),
            "olah is missing: python3 -m venv .venv-olah && .venv-olah/bin/pip install olah==0.5.4 (scripts/test does this)"
        )
        let weights = SampleData.bytes(count: 12 << 20, seed: 77)
        let layout: [String: [UInt8]] = [
            "acme/tiny/model.safetensors": weights, "acme/tiny/config.json": Array(#"{"a": 1}"#.utf8),
            "acme/tiny/tokenizer/vocab.txt": Array("a b\n".utf8),
        ]
        try await MirrorFixture.with(layout) { mirror in
            let folder = try TemporaryDirectory(prefix: "modeldepot-olah")
            defer { folder.remove() }
            let port = try unusedLoopbackPort()
            let upstream = "127.0.0.1:\(mirror.baseURL.port!)"
            let arguments = [
                "--host", "127.0.0.1", "--port", "\(port)", "--hf-scheme", "http", "--hf-netloc", upstream,
                "--hf-lfs-netloc", upstream, "--mirror-netloc", "127.0.0.1:\(port)",
                "--mirror-lfs-netloc", "127.0.0.1:\(port)", "--repos-path", folder.path("repos").path,
            ]
            try await PeerProcess.with(
                Self.olah, arguments, in: folder.url, environment: ["HOME": folder.url.path],
                log: folder.path("olah.log")
            ) { olah in
                let olahURL = URL(string: "http://127.0.0.1:\(port)")!
                let up = await waitUntil(timeout: .seconds(60)) {
                    (try? await PullThroughTests.get(olahURL.appendingPathComponent("api/models/acme/tiny")))?.status
                        == 200
                }
                let said = { olah.output }
                try #require(up, "olah did not start: \(said())")

                let result = try await PythonInteropTests.runPython(
                    script: "olah_client.py", ["acme/tiny", folder.path("hub").path], endpoint: olahURL,
                    home: folder.url)
                let files = try #require(result["files"] as? [String: String], "\(said())")
                #expect(
                    files == [
                        "model.safetensors": SampleData.sha256(weights),
                        "config.json": SampleData.sha256(layout["acme/tiny/config.json"]!),
                        "tokenizer/vocab.txt": SampleData.sha256(layout["acme/tiny/tokenizer/vocab.txt"]!),
                    ])
                #expect(
                    result["pathsInfo"] as? [String] == ["config.json", "model.safetensors", "tokenizer/vocab.txt"])
            }
        }
    }
}
