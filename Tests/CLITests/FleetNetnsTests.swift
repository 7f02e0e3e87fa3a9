import Foundation
import ModelDepotTesting
import Testing

#if os(Linux)
    /// The fleet as separate hosts on a simulated network (`scripts/netns-fleet`, network namespaces on one bridge):
    /// a hub behind a 100 Mbit/s link, two pull-through nodes behind the documented nginx tier
    /// (`deploy/nginx/modeldepot-fleet.conf`), two clients. A node is killed and its link taken down while the
    /// clients pull: every client finishes through the other node, every file byte-exact.
    @Suite struct FleetNetnsTests {
        static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        static let script = packageRoot.appendingPathComponent("scripts/netns-fleet").path

        /// Runs `scripts/netns-fleet ARGUMENTS` to its end; its output, or a failure naming it.
        @discardableResult
        static func net(_ arguments: [String], in folder: TemporaryDirectory) async throws -> String {
            let log = folder.path("net-\(UUID().uuidString).log")
            let peer = try PeerProcess(URL(fileURLWithPath: script), arguments, in: folder.url, log: log)
            let succeeded = await peer.waitForExit()
            try #require(succeeded, "scripts/netns-fleet \(arguments.joined(separator: " ")) failed: \(peer.output)")
            return peer.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// The processes running on `host` of run `id`.
        static func pids(_ id: String, _ host: String, in folder: TemporaryDirectory) async throws -> [pid_t] {
            let log = folder.path("pids-\(UUID().uuidString).log")
            let peer = try PeerProcess(
                URL(fileURLWithPath: "/usr/sbin/ip"), ["netns", "pids", "md\(id)-\(host)"], in: folder.url, log: log)
            _ = await peer.waitForExit()
            return peer.output.split(whereSeparator: \.isNewline).compactMap { pid_t($0) }
        }

        /// Bytes sent through `eth0` of the network namespace process `pid` runs in (its `/proc/PID/net/dev`).
        static func sentBytes(pid: pid_t) -> Int64 {
            guard let table = try? String(contentsOfFile: "/proc/\(pid)/net/dev", encoding: .utf8),
                let line = table.split(separator: "\n").first(where: {
                    $0.trimmingCharacters(in: .whitespaces).hasPrefix("eth0:")
                })
            else { return 0 }
            let fields = line.split(separator: ":", maxSplits: 1)[1].split(separator: " ")
            return fields.count > 8 ? Int64(fields[8]) ?? 0 : 0
        }

        /// Starts `command` on `host` of run `id`, its output in `name.log`.
        static func start(
            _ id: String, _ host: String, _ command: [String], in folder: TemporaryDirectory, log name: String
        ) throws -> PeerProcess {
            try PeerProcess(
                URL(fileURLWithPath: script), ["exec", id, host] + command, in: folder.url,
                log: folder.path("\(name).log"))
        }

        @Test func everyClientFinishesWhenAMirrorNodeDiesMidPull() async throws {
            try #require(getuid() == 0, "network namespaces need root (CI runs the tests as root)")
            let folder = try TemporaryDirectory(prefix: "modeldepot-netns")
            let id = "t\(Int.random(in: 10000...99999))"
            defer {
                let down = Process()
                down.executableURL = URL(fileURLWithPath: Self.script)
                down.arguments = ["down", id]
                try? down.run()
                down.waitUntilExit()
                folder.remove()
            }
            try await Self.net(["up", id, "--clients", "2", "--mirrors", "2", "--hub-rate", "100mbit"], in: folder)
            var files: [String: [UInt8]] = ["repos/acme/fleet/config.json": Array(#"{"model_type":"fleet"}"#.utf8)]
            for index in 1...3 {
                files["repos/acme/fleet/model-0000\(index)-of-00003.safetensors"] = SampleData.bytes(
                    count: 8 << 20, seed: UInt64(index))
            }
            try folder.write(files)
            let binary = CLIRunner.executable.path
            var peers: [PeerProcess] = []
            defer { for peer in peers { Task { await peer.stop() } } }
            peers.append(
                try Self.start(
                    id, "hub",
                    [binary, "serve", "--root", folder.path("repos").path, "--host", "10.77.0.1", "--port", "8080"],
                    in: folder, log: "hub"))
            for (node, address) in [("m1", "10.77.0.11"), ("m2", "10.77.0.12")] {
                peers.append(
                    try Self.start(
                        id, node,
                        [
                            binary, "serve", "--upstream", "http://10.77.0.1:8080", "--cache-dir",
                            folder.path("\(node)-cache").path, "--host", address, "--port", "8080",
                            "--max-pulls-per-client", "72",
                        ], in: folder, log: node))
            }
            let tier = try String(
                contentsOf: Self.packageRoot.appendingPathComponent("deploy/nginx/modeldepot-fleet.conf"),
                encoding: .utf8
            )
            .replacingOccurrences(of: "@CACHE@", with: folder.path("nginx-cache").path)
            .replacingOccurrences(of: "@LISTEN@", with: "10.77.0.2:8080")
            .replacingOccurrences(of: "@NODE1@", with: "10.77.0.11:8080")
            .replacingOccurrences(of: "@NODE2@", with: "10.77.0.12:8080")
            try FileManager.default.createDirectory(at: folder.path("nginx/tmp"), withIntermediateDirectories: true)
            let nginx = folder.path("nginx").path
            try """
            worker_processes 1;
            daemon off;
            user root;
            error_log \(nginx)/error.log;
            pid \(nginx)/nginx.pid;
            events { worker_connections 1024; }
            http {
                access_log off;
                client_body_temp_path \(nginx)/tmp/body; proxy_temp_path \(nginx)/tmp/proxy;
                fastcgi_temp_path \(nginx)/tmp/fcgi; uwsgi_temp_path \(nginx)/tmp/uwsgi; scgi_temp_path \(nginx)/tmp/scgi;
                \(tier)
            }
            """.write(to: folder.path("nginx/nginx.conf"), atomically: true, encoding: .utf8)
            peers.append(
                try Self.start(
                    id, "nginx", ["/usr/sbin/nginx", "-p", nginx, "-c", nginx + "/nginx.conf"], in: folder, log: "nginx"
                ))
            // The tier answers from a client host once the hub, the nodes and nginx are up.
            var ready = false
            for _ in 0..<300 where !ready {
                let probe = try Self.start(
                    id, "c1", ["curl", "-sf", "-o", "/dev/null", "http://10.77.0.2:8080/api/models/acme/fleet"],
                    in: folder, log: "probe")
                ready = await probe.waitForExit()
                if !ready { try await Task.sleep(for: .milliseconds(100)) }
            }
            let nginxErrors = (try? String(contentsOf: folder.path("nginx/error.log"), encoding: .utf8)) ?? ""
            try #require(ready, "the tier did not answer: \(nginxErrors)")

            let clients = try ["c1", "c2"].map { client in
                try Self.start(
                    id, client,
                    [
                        binary, "pull", "acme/fleet", "--endpoint", "http://10.77.0.2:8080", "--cache-dir",
                        folder.path("\(client)-cache").path, "--quiet",
                    ], in: folder, log: client)
            }
            // Once the hub has sent a quarter of the repository, the node holding the most of it dies.
            let quarter = files.values.reduce(0) { $0 + $1.count } / 4
            let hub = try #require(try await Self.pids(id, "hub", in: folder).first, "the hub runs")
            let started = await waitUntil {
                try? await Task.sleep(for: .milliseconds(50))
                return Self.sentBytes(pid: hub) > Int64(quarter)
            }
            try #require(started, "the hub sent nothing")
            let held = ["m1", "m2"].map { node in
                (node, FileManager.default.enumerator(atPath: folder.path("\(node)-cache").path)?.allObjects.count ?? 0)
            }
            let victim = held.max { $0.1 < $1.1 }!.0
            // The link first, so not even the dying process's resets reach anyone: a node that vanished.
            try await Self.net(["link", id, victim, "down"], in: folder)
            for pid in try await Self.pids(id, victim, in: folder) { kill(pid, SIGKILL) }

            for (client, peer) in zip(["c1", "c2"], clients) {
                let succeeded = await peer.waitForExit()
                #expect(succeeded, "\(client) finished through the other node after \(victim) died: \(peer.output)")
                let snapshots = folder.path("\(client)-cache/models--acme--fleet/snapshots")
                let commit = try #require(try FileManager.default.contentsOfDirectory(atPath: snapshots.path).first)
                for (path, bytes) in files {
                    let name = String(path.dropFirst("repos/acme/fleet/".count))
                    let file = snapshots.appendingPathComponent("\(commit)/\(name)")
                    #expect(try [UInt8](Data(contentsOf: file)) == bytes, "\(client): \(name) byte-exact")
                }
            }
        }
    }
#endif
