import Foundation
import ModelDepotPlatform
import ModelDepotTesting
import Testing

/// A real forward proxy on 127.0.0.1, started by a test with its own configuration and access log: Debian's
/// tinyproxy (no authentication) or squid (Basic authentication from a password file made with `htpasswd`).
/// Both allow `CONNECT` to any port, so a test's plain-HTTP servers on loopback can be reached through them.
struct ProxyPeer: Sendable {
    enum Kind: String, Sendable {
        case tinyproxy, squid
    }

    let kind: Kind
    let port: Int
    let folder: TemporaryDirectory
    let process: PeerProcess
    /// `http://127.0.0.1:port`, without credentials.
    var url: String { "http://127.0.0.1:\(port)" }

    /// Where it logs each request (`CONNECT 127.0.0.1:…`).
    var accessLog: String {
        let name = kind == .squid ? "access.log" : "proxy.log"
        return (try? String(contentsOf: folder.path(name), encoding: .utf8)) ?? ""
    }

    static func executable(_ kind: Kind) -> URL? {
        let paths = kind == .squid ? ["/usr/sbin/squid"] : ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy"]
        return paths.first(where: FileManager.default.isExecutableFile).map(URL.init(fileURLWithPath:))
    }

    /// Starts one; `user`/`password` make squid require them.
    static func start(_ kind: Kind, user: String? = nil, password: String? = nil) async throws -> ProxyPeer {
        let program = try #require(
            Self.executable(kind), "\(kind.rawValue) is not installed: apt-get install -y squid tinyproxy apache2-utils"
        )
        let folder = try TemporaryDirectory(prefix: "modeldepot-\(kind.rawValue)")
        // squid drops to its own user: the folder must be its to write.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.url.path)
        let port = try unusedLoopbackPort()
        let root = folder.url.path
        let arguments: [String]
        switch kind {
        case .tinyproxy:
            try """
            User root
            Group root
            Port \(port)
            Listen 127.0.0.1
            Timeout 60
            LogFile "\(root)/proxy.log"
            LogLevel Connect
            MaxClients 64
            Allow 127.0.0.1
            """.write(to: folder.path("tinyproxy.conf"), atomically: true, encoding: .utf8)
            arguments = ["-d", "-c", "\(root)/tinyproxy.conf"]
        case .squid:
            var auth = "http_access allow all"
            if let user, let password {
                let htpasswd = try #require(
                    ["/usr/bin/htpasswd"].first(where: FileManager.default.isExecutableFile),
                    "htpasswd is not installed: apt-get install -y apache2-utils")
                let made = try PeerProcess(
                    URL(fileURLWithPath: htpasswd), ["-b", "-c", "\(root)/passwd", user, password], in: folder.url,
                    log: folder.path("htpasswd.log"))
                #expect(await made.waitForExit(), "htpasswd failed: \(made.output)")
                try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: "\(root)/passwd")
                auth = """
                    auth_param basic program /usr/lib/squid/basic_ncsa_auth \(root)/passwd
                    auth_param basic realm modeldepot-test
                    acl authenticated proxy_auth REQUIRED
                    http_access allow authenticated
                    http_access deny all
                    """
            }
            try """
            http_port 127.0.0.1:\(port)
            \(auth)
            cache deny all
            access_log stdio:\(root)/access.log
            cache_log \(root)/cache.log
            pid_filename \(root)/squid.pid
            coredump_dir \(root)
            logfile_rotate 0
            shutdown_lifetime 0 seconds
            """.write(to: folder.path("squid.conf"), atomically: true, encoding: .utf8)
            arguments = ["-N", "-f", "\(root)/squid.conf"]
        }
        let process = try PeerProcess(program, arguments, in: folder.url, log: folder.path("stderr.log"))
        let listening = await waitUntil(timeout: .seconds(60)) {
            (try? LoopbackConnection(port: port)) != nil || !process.isRunning
        }
        guard listening, process.isRunning else {
            await process.stop()
            let log = (try? String(contentsOf: folder.path("cache.log"), encoding: .utf8)) ?? ""
            folder.remove()
            throw ProxyPeerFailure(message: "\(kind.rawValue) did not start: \(process.output) \(log)")
        }
        return ProxyPeer(kind: kind, port: port, folder: folder, process: process)
    }

    func stop() async {
        await process.stop()
        folder.remove()
    }

    /// Runs `body` with a proxy running, and stops it afterwards whatever happens.
    static func with<T>(
        _ kind: Kind, user: String? = nil, password: String? = nil, _ body: (ProxyPeer) async throws -> T
    ) async throws -> T {
        let proxy = try await start(kind, user: user, password: password)
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body(proxy)) } catch { outcome = .failure(error) }
        await proxy.stop()
        return try outcome.get()
    }
}

struct ProxyPeerFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
