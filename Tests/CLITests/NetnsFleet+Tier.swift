import Foundation
import ModelDepotTesting
import Testing

#if os(Linux)
    extension NetnsFleet {
        /// Starts the documented cache tier on the network: the hub serving `repos/` of the folder, pull-through
        /// nodes m1 and m2, and nginx with `deploy/nginx/modeldepot-fleet.conf`; returns once a client host gets
        /// `acme/REPOSITORY`'s info through the tier. The caller stops the processes.
        func startTier(serving repository: String) async throws -> [PeerProcess] {
            let binary = CLIRunner.executable.path
            var peers: [PeerProcess] = []
            peers.append(
                try start(
                    "hub",
                    [binary, "serve", "--root", folder.path("repos").path, "--host", "10.77.0.1", "--port", "8080"],
                    log: "hub"))
            for (node, address) in [("m1", "10.77.0.11"), ("m2", "10.77.0.12")] {
                peers.append(
                    try start(
                        node,
                        [
                            binary, "serve", "--upstream", "http://10.77.0.1:8080", "--cache-dir",
                            folder.path("\(node)-cache").path, "--host", address, "--port", "8080",
                            "--max-pulls-per-client", "72",
                        ], log: node))
            }
            let tier = try String(
                contentsOf: NetnsFleet.packageRoot.appendingPathComponent("deploy/nginx/modeldepot-fleet.conf"),
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
                try start(
                    "nginx", ["/usr/sbin/nginx", "-p", nginx, "-c", nginx + "/nginx.conf"], log: "nginx"
                ))
            // The tier answers from a client host once the hub, the nodes and nginx are up.
            var ready = false
            for _ in 0..<300 where !ready {
                let probe = try start(
                    "c1", ["curl", "-sf", "-o", "/dev/null", "http://10.77.0.2:8080/api/models/acme/\(repository)"],
                    log: "probe")
                ready = await probe.waitForExit()
                if !ready { try await Task.sleep(for: .milliseconds(100)) }
            }
            let nginxErrors = (try? String(contentsOf: folder.path("nginx/error.log"), encoding: .utf8)) ?? ""
            try #require(ready, "the tier did not answer: \(nginxErrors)")
            return peers
        }
    }
#endif
