import Foundation
import ModelDepotTesting
import Testing

#if os(Linux)
    /// Mirrors found on the LAN with DNS-SD, on the simulated network (`scripts/netns-fleet`): every host with its
    /// own D-Bus system bus and avahi-daemon (`netns-fleet mdns`), as separate machines have.
    ///
    /// m1 is a pull-through mirror announced with `serve --advertise`; m2 is a hostile host that announces itself
    /// too (with avahi's own `avahi-publish`, as any machine on the link could) and serves other bytes of the same
    /// sizes for any revision, and its own listings. c1 pulls with `--discover`; c2 browses with python-zeroconf,
    /// an mDNS stack of its own.
    @Suite struct FleetDiscoveryTests {
        @Test func aClientFindsTheMirrorOnTheLANRefusesAHostileOneAndOutlivesBoth() async throws {
            try #require(getuid() == 0, "network namespaces need root (CI runs the tests as root)")
            let folder = try TemporaryDirectory(prefix: "modeldepot-mdns")
            defer { folder.remove() }
            let fleet = try await NetnsFleet.up(
                ["--clients", "2", "--mirrors", "2", "--hub-rate", "200mbit"], in: folder)
            defer { fleet.down() }
            try await fleet.run(["mdns", fleet.id, "m1", "m2", "c1"])

            let files = NetnsFleet.repository("lan", files: 2, size: 4 << 20, seed: 70)
            try folder.write(files)
            // The hostile mirror's bytes: the same names and sizes, other content.
            var forged: [String: [UInt8]] = [:]
            for (path, bytes) in files {
                forged["hostile/" + path.split(separator: "/").dropFirst(3).joined(separator: "/")] =
                    SampleData.bytes(count: bytes.count, seed: 99)
            }
            try folder.write(forged)

            let binary = CLIRunner.executable.path
            var peers: [PeerProcess] = []
            defer { for peer in peers { Task { await peer.stop() } } }
            peers.append(
                try fleet.start(
                    "hub",
                    [binary, "serve", "--root", folder.path("repos").path, "--host", "10.77.0.1", "--port", "8080"],
                    log: "hub"))
            let mirror = try fleet.start(
                "m1",
                [
                    binary, "serve", "--upstream", "http://10.77.0.1:8080", "--cache-dir", folder.path("m1-cache").path,
                    "--host", "10.77.0.11", "--port", "8080", "--advertise", "--advertise-name", "lan mirror",
                ], log: "m1")
            peers.append(mirror)
            let peersFolder = NetnsFleet.packageRoot.appendingPathComponent("Tests/PythonPeers")
            peers.append(
                try fleet.start(
                    "m2",
                    [
                        "/usr/bin/python3", peersFolder.appendingPathComponent("hostile_mirror.py").path, "10.77.0.12",
                        "8080", folder.path("hostile").path, folder.path("hostile-requests.log").path,
                    ], log: "m2"))
            let publisher = try fleet.start(
                "m2",
                [
                    "/usr/bin/avahi-publish", "-s", "a hostile mirror", "_hf-mirror._tcp", "8080", "txtvers=1",
                    "path=/",
                    "token=none",
                ], log: "m2-publish")
            peers.append(publisher)
            // Both announcements confirmed by their daemons, then seen from c1: the pull's own browse then finds both
            // in c1's avahi cache at once, however its 300 ms settle falls.
            let confirmed = await waitUntil {
                try? await Task.sleep(for: .milliseconds(50))
                return mirror.output.contains("announced as 'lan mirror'")
                    && publisher.output.contains("Established under name")
            }
            try #require(confirmed, "m1: \(mirror.output) m2: \(publisher.output)")
            var both = false
            for _ in 0..<15 where !both {
                let listed = try await fleet.runOn("c1", [binary, "discover", "--json", "--wait", "3"])
                both = listed.output.contains("\"lan mirror\"") && listed.output.contains("\"a hostile mirror\"")
            }
            try #require(both, "c1 sees both announcements")

            // An independent browser sees the announcement as DNS-SD lays it out.
            let browsed = try await fleet.runOn(
                "c2",
                [
                    NetnsFleet.packageRoot.appendingPathComponent(".venv-mdns/bin/python").path,
                    peersFolder.appendingPathComponent("mdns_browser.py").path, "15", "lan mirror",
                ])
            try #require(browsed.succeeded, "python-zeroconf saw no 'lan mirror': \(browsed.output)")
            let seen = try #require(
                try JSONSerialization.jsonObject(with: Data(browsed.output.utf8)) as? [String: Any], "\(browsed.output)"
            )
            #expect(seen["addresses"] as? [String] == ["10.77.0.11"])
            #expect(seen["port"] as? Int == 8080)
            #expect(
                seen["properties"] as? [String: String]
                    == ["txtvers": "1", "path": "/", "token": "none", "scheme": "http"])

            // c1 finds both, asks the hostile one first (its name sorts first), refuses its bytes, and takes the
            // files from the LAN mirror, every one checked against the hub's own listing.
            let hubPid = try #require(try await fleet.pids("hub").first)
            let hubSentBefore = NetnsFleet.sentBytes(pid: hubPid)
            let pull = try await fleet.runOn(
                "c1",
                [
                    binary, "pull", "acme/lan", "--endpoint", "http://10.77.0.1:8080", "--cache-dir",
                    folder.path("c1-cache").path, "--discover", "--quiet",
                ])
            #expect(pull.succeeded, "\(pull.output)")
            #expect(pull.output.contains("Found mirror 'lan mirror' at http://10.77.0.11:8080"), "\(pull.output)")
            #expect(pull.output.contains("Found mirror 'a hostile mirror' at http://10.77.0.12:8080"), "\(pull.output)")
            try NetnsFleet.expectPulled(files, into: folder.path("c1-cache"), "c1")
            let asked = (try? String(contentsOf: folder.path("hostile-requests.log"), encoding: .utf8)) ?? ""
            #expect(asked.contains("/resolve/"), "the hostile mirror was asked for content: \(asked)")
            #expect(!asked.contains("/api/"), "and never for a listing: \(asked)")
            let size = files.values.reduce(0) { $0 + $1.count }
            let upstream = NetnsFleet.sentBytes(pid: hubPid) - hubSentBefore
            #expect(
                upstream < Int64(size) * 3 / 2,
                "the hub sent the repository once, to m1 (\(upstream) bytes for \(size))")
            let mirrored = FileManager.default.enumerator(atPath: folder.path("m1-cache").path)?.allObjects.count ?? 0
            #expect(mirrored > 0, "m1 holds what it served")

            // m1 vanishes (link down, then killed, so no goodbye reaches c1's cache of announcements): a second pull
            // still finishes, from the hub.
            try await fleet.vanish("m1")
            let again = try await fleet.runOn(
                "c1",
                [
                    binary, "pull", "acme/lan", "--endpoint", "http://10.77.0.1:8080", "--cache-dir",
                    folder.path("c1-cache-2").path, "--discover", "--quiet",
                ])
            #expect(again.succeeded, "\(again.output)")
            try NetnsFleet.expectPulled(files, into: folder.path("c1-cache-2"), "c1 after m1 vanished")
        }
    }
#endif
