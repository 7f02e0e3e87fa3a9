import Foundation
import ModelDepotPlatform
import ModelDepotTesting
import Testing

/// Debian's `docker-registry` (the CNCF distribution registry 2.8) on a free port of 127.0.0.1, storing in a
/// folder of its own, optionally behind htpasswd (Basic) authentication.
struct DistributionRegistry {
    let folder: TemporaryDirectory
    let peer: PeerProcess
    let port: Int

    /// `host:port`, as an `oci://` reference names the registry.
    var address: String { "127.0.0.1:\(port)" }

    static let executable = "/usr/bin/docker-registry"

    /// Runs `body` with a registry running; `user` and `password` put it behind htpasswd.
    static func with<T>(
        user: String? = nil, password: String? = nil, _ body: (DistributionRegistry) async throws -> T
    ) async throws -> T {
        try #require(
            FileManager.default.isExecutableFile(atPath: executable),
            "docker-registry is not installed: apt-get install -y docker-registry (scripts/test does)")
        let folder = try TemporaryDirectory(prefix: "modeldepot-registry")
        defer { folder.remove() }
        let port = try unusedLoopbackPort()
        var auth = ""
        if let user, let password {
            let htpasswd = Process()
            htpasswd.executableURL = URL(fileURLWithPath: "/usr/bin/htpasswd")
            htpasswd.arguments = ["-Bbc", folder.path("htpasswd").path, user, password]
            try htpasswd.run()
            htpasswd.waitUntilExit()
            try #require(htpasswd.terminationStatus == 0, "htpasswd failed")
            auth = """
                auth:
                  htpasswd:
                    realm: modeldepot-test
                    path: \(folder.path("htpasswd").path)
                """
        }
        let config = """
            version: 0.1
            log:
              level: warn
            storage:
              filesystem:
                rootdirectory: \(folder.path("storage").path)
              delete:
                enabled: true
            http:
              addr: 127.0.0.1:\(port)
            \(auth)
            """
        try config.write(to: folder.path("config.yml"), atomically: true, encoding: .utf8)
        return try await PeerProcess.with(
            URL(fileURLWithPath: executable), ["serve", folder.path("config.yml").path], in: folder.url,
            log: folder.path("registry.log")
        ) { peer in
            let up = await waitUntil(timeout: .seconds(30)) {
                !LoopbackConnection.refuses(port: port) || !peer.isRunning
            }
            try #require(up && peer.isRunning, "docker-registry did not start: \(peer.output)")
            return try await body(DistributionRegistry(folder: folder, peer: peer, port: port))
        }
    }

    /// Every blob the registry stores (their digests' hex), read off its storage folder.
    var storedBlobs: Set<String> {
        let root = folder.path("storage/docker/registry/v2/blobs/sha256")
        var found: Set<String> = []
        for prefix in (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [] {
            for hex in (try? FileManager.default.contentsOfDirectory(atPath: root.path + "/" + prefix)) ?? [] {
                found.insert(hex)
            }
        }
        return found
    }
}
