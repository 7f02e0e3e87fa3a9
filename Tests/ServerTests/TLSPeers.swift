import Foundation
import ModelDepotPlatform
import ModelDepotTesting
import Testing

/// A program a TLS test runs beside itself, stopped afterwards: nginx terminating TLS in front of a plain-HTTP
/// server (an https Hub), or mitmproxy's `mitmdump` (a TLS-inspecting proxy with a CA of its own).
struct TLSPeer: Sendable {
    let port: Int
    let folder: URL
    let process: PeerProcess

    /// nginx on 127.0.0.1 with `certificates`, passing everything to `backend`.
    static func httpsFront(to backend: URL, certificates: TestCertificates, in folder: URL) async throws -> TLSPeer {
        let port = try unusedLoopbackPort()
        let root = folder.path
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        try """
        worker_processes 1;
        daemon off;
        user root;
        error_log \(root)/nginx-error.log;
        pid \(root)/nginx.pid;
        events { worker_connections 256; }
        http {
            access_log \(root)/nginx-access.log;
            client_body_temp_path \(root)/tmp/body; proxy_temp_path \(root)/tmp/proxy;
            fastcgi_temp_path \(root)/tmp/fcgi; uwsgi_temp_path \(root)/tmp/uwsgi; scgi_temp_path \(root)/tmp/scgi;
            server {
                listen 127.0.0.1:\(port) ssl;
                ssl_certificate \(certificates.certificate);
                ssl_certificate_key \(certificates.key);
                location / {
                    proxy_pass \(backend.absoluteString);
                    proxy_set_header Host $http_host;
                    proxy_buffering off;
                    proxy_http_version 1.1;
                }
            }
        }
        """.write(to: folder.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        let nginx = try #require(
            ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: FileManager.default.isExecutableFile),
            "nginx is not installed: apt-get install -y nginx")
        let process = try PeerProcess(
            URL(fileURLWithPath: nginx), ["-p", root, "-c", "\(root)/nginx.conf"], in: folder,
            log: folder.appendingPathComponent("nginx.out"))
        return try await started(process, port: port, folder: folder, name: "nginx")
    }

    /// `mitmdump` listening on 127.0.0.1, trusting `upstreamAuthority` for the servers behind it; its own CA is
    /// ``mitmAuthority`` once it runs.
    static func inspectingProxy(upstreamAuthority: String, in folder: URL) async throws -> TLSPeer {
        let mitmdump = try #require(
            ["/usr/bin/mitmdump"].first(where: FileManager.default.isExecutableFile),
            "mitmproxy is not installed: apt-get install -y mitmproxy")
        let port = try unusedLoopbackPort()
        let process = try PeerProcess(
            URL(fileURLWithPath: mitmdump),
            [
                "--listen-host", "127.0.0.1", "--listen-port", "\(port)", "--set", "confdir=\(folder.path)", "--set",
                "ssl_verify_upstream_trusted_ca=\(upstreamAuthority)",
            ], in: folder, log: folder.appendingPathComponent("mitmdump.out"))
        let peer = try await started(process, port: port, folder: folder, name: "mitmdump")
        try #require(FileManager.default.fileExists(atPath: peer.mitmAuthority), "mitmdump made no CA")
        return peer
    }

    /// The CA mitmproxy signs its certificates with.
    var mitmAuthority: String { folder.appendingPathComponent("mitmproxy-ca-cert.pem").path }

    private static func started(_ process: PeerProcess, port: Int, folder: URL, name: String) async throws -> TLSPeer {
        let listening = await waitUntil(timeout: .seconds(60)) {
            (try? LoopbackConnection(port: port)) != nil || !process.isRunning
        }
        guard listening, process.isRunning else {
            await process.stop()
            throw ProxyPeerFailure(message: "\(name) did not start: \(process.output)")
        }
        return TLSPeer(port: port, folder: folder, process: process)
    }

    func stop() async { await process.stop() }
}
