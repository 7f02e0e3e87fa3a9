import Foundation
import ModelDepotTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A real nginx on 127.0.0.1, started by a test with its own config, files and access log.
/// Locations: `/files/` unlimited, `/limited/` capped per connection by `limitRate`.
final class NginxServer: Sendable {
    let folder: TemporaryDirectory
    let port: Int
    private let process: Process

    static var isInstalled: Bool { executable != nil }

    private static var executable: String? {
        ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    init(files: [String: [UInt8]], limitRate: String = "1m") async throws {
        let nginx = try #require(Self.executable, "nginx is not installed: apt-get install -y nginx")
        folder = try TemporaryDirectory(prefix: "modeldepot-nginx")
        let www = folder.path("www")
        try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.path("tmp"), withIntermediateDirectories: true)
        for (name, bytes) in files { try Data(bytes).write(to: www.appendingPathComponent(name)) }
        port = try unusedLoopbackPort()
        let root = folder.url.path
        let config = """
            worker_processes 1;
            daemon off;
            user root;
            error_log \(root)/error.log;
            pid \(root)/nginx.pid;
            events { worker_connections 512; }
            http {
                log_format ranges '$connection $status $bytes_sent "$http_range" "$http_if_range"';
                access_log \(root)/access.log ranges;
                client_body_temp_path \(root)/tmp/body;
                proxy_temp_path \(root)/tmp/proxy;
                fastcgi_temp_path \(root)/tmp/fastcgi;
                uwsgi_temp_path \(root)/tmp/uwsgi;
                scgi_temp_path \(root)/tmp/scgi;
                sendfile on;
                keepalive_requests 10000;
                server {
                    listen 127.0.0.1:\(port);
                    location /files/ { alias \(www.path)/; }
                    location /limited/ { alias \(www.path)/; limit_rate \(limitRate); }
                }
            }
            """
        try config.write(to: folder.path("nginx.conf"), atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-p", root, "-c", folder.path("nginx.conf").path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let port = self.port
        let up = await waitUntil(timeout: .seconds(10)) { Self.accepts(port: port) }
        try #require(
            up, "nginx did not start: \((try? String(contentsOf: folder.path("error.log"), encoding: .utf8)) ?? "")")
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Access log lines: connection number, status, bytes sent, Range, If-Range.
    struct LogLine {
        let connection: Int
        let status: Int
        let bytesSent: Int64
        let range: String
        let ifRange: String
    }

    func accessLog() -> [LogLine] {
        guard let text = try? String(contentsOf: folder.path("access.log"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 3)
            guard fields.count == 4, let connection = Int(fields[0]), let status = Int(fields[1]),
                let sent = Int64(fields[2])
            else {
                return nil
            }
            let quoted = fields[3].split(separator: "\"", omittingEmptySubsequences: false)
            return LogLine(
                connection: connection, status: status, bytesSent: sent,
                range: quoted.count > 1 ? String(quoted[1]) : "",
                ifRange: quoted.count > 3 ? String(quoted[3]) : "")
        }
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        folder.remove()
    }

    private static func accepts(port: Int) -> Bool {
        // glibc declares SOCK_STREAM as an enum case, Darwin's `<sys/socket.h>` as an Int32 macro.
        #if canImport(Glibc)
            let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let socketFD = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        defer { close(socketFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
