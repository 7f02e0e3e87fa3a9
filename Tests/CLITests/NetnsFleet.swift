import Foundation
import ModelDepotTesting
import Testing

#if os(Linux)
    /// One run of `scripts/netns-fleet`, the simulated network of hosts (network namespaces on one bridge): the
    /// tests' handle on it. `up` makes it with a run id of its own; ``down()`` removes every namespace and what runs
    /// in them (a test calls it in a `defer`, so a failure leaves nothing behind).
    struct NetnsFleet {
        static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        static let script = packageRoot.appendingPathComponent("scripts/netns-fleet").path

        let id: String
        /// Where the processes' logs go.
        let folder: TemporaryDirectory

        /// Makes the network (`up ID ARGUMENTS`): the hosts hub, nginx, m1…, c1….
        static func up(_ arguments: [String], in folder: TemporaryDirectory) async throws -> NetnsFleet {
            let fleet = NetnsFleet(id: "t\(Int.random(in: 10000...99999))", folder: folder)
            try await fleet.run(["up", fleet.id] + arguments)
            return fleet
        }

        /// Runs `scripts/netns-fleet COMMAND ID ARGUMENTS` to its end; its output, or a failure naming it.
        @discardableResult
        func run(_ arguments: [String]) async throws -> String {
            let log = folder.path("net-\(UUID().uuidString).log")
            let peer = try PeerProcess(URL(fileURLWithPath: Self.script), arguments, in: folder.url, log: log)
            let succeeded = await peer.waitForExit()
            try #require(succeeded, "scripts/netns-fleet \(arguments.joined(separator: " ")) failed: \(peer.output)")
            return peer.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Starts `command` on `host`, its output in `NAME.log` of the folder.
        func start(_ host: String, _ command: [String], log name: String) throws -> PeerProcess {
            try PeerProcess(
                URL(fileURLWithPath: Self.script), ["exec", id, host] + command, in: folder.url,
                log: folder.path("\(name).log"))
        }

        /// Runs `command` on `host` to its end: whether it succeeded, and its output.
        func runOn(_ host: String, _ command: [String]) async throws -> (succeeded: Bool, output: String) {
            let peer = try start(host, command, log: "run-\(UUID().uuidString)")
            let succeeded = await peer.waitForExit()
            return (succeeded, peer.output)
        }

        /// The processes running on `host`.
        func pids(_ host: String) async throws -> [pid_t] {
            let peer = try PeerProcess(
                URL(fileURLWithPath: "/usr/sbin/ip"), ["netns", "pids", "md\(id)-\(host)"], in: folder.url,
                log: folder.path("pids-\(UUID().uuidString).log"))
            _ = await peer.waitForExit()
            return peer.output.split(whereSeparator: \.isNewline).compactMap { pid_t($0) }
        }

        /// A host vanishes: its link goes down first (so not even a dying process's resets or goodbyes reach anyone),
        /// then everything on it is killed.
        func vanish(_ host: String) async throws {
            try await run(["link", id, host, "down"])
            for pid in try await pids(host) { kill(pid, SIGKILL) }
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

        /// Removes the network and everything running in it; waits for that.
        func down() {
            let down = Process()
            down.executableURL = URL(fileURLWithPath: Self.script)
            down.arguments = ["down", id]
            try? down.run()
            down.waitUntilExit()
        }

        /// Files of a repository `acme/NAME` under `repos/` of the folder, as a hub serves them with `--root`.
        static func repository(_ name: String, files: Int, size: Int, seed: UInt64) -> [String: [UInt8]] {
            var repository: [String: [UInt8]] = [
                "repos/acme/\(name)/config.json": Array(#"{"model_type":"\#(name)"}"#.utf8)
            ]
            for index in 1...files {
                repository["repos/acme/\(name)/model-0000\(index)-of-0000\(files).safetensors"] = SampleData.bytes(
                    count: size, seed: seed + UInt64(index))
            }
            return repository
        }

        /// Checks that `cache` holds every file of `repository` (as ``repository(_:files:size:seed:)`` names them)
        /// byte for byte, at the one commit it has.
        static func expectPulled(_ repository: [String: [UInt8]], into cache: URL, _ who: String) throws {
            guard let sample = repository.keys.first else { return }
            let name = sample.split(separator: "/")[2]
            let snapshots = cache.appendingPathComponent("models--acme--\(name)/snapshots")
            let commit = try #require(
                try FileManager.default.contentsOfDirectory(atPath: snapshots.path).first, "\(who) has a snapshot")
            for (path, bytes) in repository {
                let file = snapshots.appendingPathComponent(
                    "\(commit)/\(path.split(separator: "/").dropFirst(3).joined(separator: "/"))")
                #expect(try [UInt8](Data(contentsOf: file)) == bytes, "\(who): \(file.lastPathComponent) byte-exact")
            }
        }
    }
#endif
