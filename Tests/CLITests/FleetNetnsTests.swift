import Foundation
import ModelDepotTesting
import Testing

#if os(Linux)
    /// The fleet as separate hosts on a simulated network (`scripts/netns-fleet`, network namespaces on one bridge):
    /// a hub behind a 100 Mbit/s link, two pull-through nodes behind the documented nginx tier
    /// (`deploy/nginx/modeldepot-fleet.conf`), two clients. A node is killed and its link taken down while the
    /// clients pull: every client finishes through the other node, every file byte-exact.
    @Suite struct FleetNetnsTests {
        @Test func everyClientFinishesWhenAMirrorNodeDiesMidPull() async throws {
            try #require(getuid() == 0, "network namespaces need root (CI runs the tests as root)")
            let folder = try TemporaryDirectory(prefix: "modeldepot-netns")
            defer { folder.remove() }
            let fleet = try await NetnsFleet.up(
                ["--clients", "2", "--mirrors", "2", "--hub-rate", "100mbit"], in: folder)
            defer { fleet.down() }
            let files = NetnsFleet.repository("fleet", files: 3, size: 8 << 20, seed: 0)
            try folder.write(files)
            let binary = CLIRunner.executable.path
            let peers = try await fleet.startTier(serving: "fleet")
            defer { for peer in peers { Task { await peer.stop() } } }

            let clients = try ["c1", "c2"].map { client in
                try fleet.start(
                    client,
                    [
                        binary, "pull", "acme/fleet", "--endpoint", "http://10.77.0.2:8080", "--cache-dir",
                        folder.path("\(client)-cache").path, "--quiet",
                    ], log: client)
            }
            // Once the hub has sent a quarter of the repository, the node holding the most of it dies.
            let quarter = files.values.reduce(0) { $0 + $1.count } / 4
            let hub = try #require(try await fleet.pids("hub").first, "the hub runs")
            let started = await waitUntil {
                try? await Task.sleep(for: .milliseconds(50))
                return NetnsFleet.sentBytes(pid: hub) > Int64(quarter)
            }
            try #require(started, "the hub sent nothing")
            let held = ["m1", "m2"].map { node in
                (node, FileManager.default.enumerator(atPath: folder.path("\(node)-cache").path)?.allObjects.count ?? 0)
            }
            let victim = held.max { $0.1 < $1.1 }!.0
            try await fleet.vanish(victim)

            for (client, peer) in zip(["c1", "c2"], clients) {
                let succeeded = await peer.waitForExit()
                #expect(succeeded, "\(client) finished through the other node after \(victim) died: \(peer.output)")
                try NetnsFleet.expectPulled(files, into: folder.path("\(client)-cache"), client)
            }
        }

        /// A node asked for files another node pulled (its URLs' home) and the tier holds, as when it takes over for
        /// a dead one or starts again with an empty disk: it fills them from the tier's slices (`--fill-from`), and
        /// the hub sends nothing.
        @Test func aNodeFillsFilesFromTheTierNotTheHub() async throws {
            try #require(getuid() == 0, "network namespaces need root (CI runs the tests as root)")
            let folder = try TemporaryDirectory(prefix: "modeldepot-netns")
            defer { folder.remove() }
            let fleet = try await NetnsFleet.up(
                ["--clients", "1", "--mirrors", "2", "--hub-rate", "400mbit"], in: folder)
            defer { fleet.down() }
            let files = NetnsFleet.repository("fill", files: 2, size: 8 << 20, seed: 40)
            try folder.write(files)
            let peers = try await fleet.startTier(serving: "fill")
            defer { for peer in peers { Task { await peer.stop() } } }
            let binary = CLIRunner.executable.path
            // Twice: what a node serves while it still pulls (unverified) is `no-store` and never enters the tier's
            // cache; the second pull's answers, verified, do.
            for cache in ["c1-cache", "c1-again"] {
                let pulled = try await fleet.runOn(
                    "c1",
                    [
                        binary, "pull", "acme/fill", "--endpoint", "http://10.77.0.2:8080", "--cache-dir",
                        folder.path(cache).path, "--quiet",
                    ])
                try #require(pulled.succeeded, "\(pulled.output)")
            }
            let snapshots = folder.path("c1-cache/models--acme--fill/snapshots")
            let commit = try #require(try FileManager.default.contentsOfDirectory(atPath: snapshots.path).first)

            let hub = try #require(try await fleet.pids("hub").first)
            let before = NetnsFleet.sentBytes(pid: hub)
            for (path, bytes) in files where path.hasSuffix(".safetensors") {
                let name = path.split(separator: "/").last!
                for node in ["10.77.0.11", "10.77.0.12"] {
                    let copy = folder.path("\(node)-\(name)").path
                    let asked = try await fleet.runOn(
                        "c1",
                        ["curl", "-sf", "-o", copy, "http://\(node):8080/acme/fill/resolve/\(commit)/\(name)"])
                    #expect(asked.succeeded, "\(node) serves \(name): \(asked.output)")
                    #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: copy))) == bytes, "\(node): \(name)")
                }
            }
            let sent = NetnsFleet.sentBytes(pid: hub) - before
            #expect(sent < 1 << 20, "each node filled the other's files from the tier; the hub sent \(sent) bytes")
        }
    }
#endif
