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
    }
#endif
