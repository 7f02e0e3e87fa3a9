import Foundation
import Logging
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import NIOCore
import Synchronization
import Testing

/// A folder of repositories and a mirror serving it on a free port of 127.0.0.1.
struct MirrorFixture {
    let root: TemporaryDirectory
    let baseURL: URL
    let task: Task<Void, any Error>

    /// Runs `body` with a mirror over the files `layout` maps (paths relative to the root) and stops it after.
    static func with<T>(
        _ layout: [String: [UInt8]], token: String? = nil, treePageSize: Int = 1000,
        logger: Logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
        _ body: (MirrorFixture) async throws -> T
    ) async throws -> T {
        let root = try TemporaryDirectory(prefix: "modeldepot-mirror")
        try root.write(layout)
        let server = MirrorServer(
            root: root.url, token: token, treePageSize: treePageSize, logger: logger)
        defer { root.remove() }
        return try await serving(server, root: root, body)
    }

    /// Runs `body` while `server` listens on a free port, then stops it.
    static func serving<T>(
        _ server: MirrorServer, root: TemporaryDirectory, _ body: (MirrorFixture) async throws -> T
    ) async throws -> T {
        let address = Mutex<URL?>(nil)
        let task = Task { try await server.run(host: "127.0.0.1", port: 0) { url in address.withLock { $0 = url } } }
        defer { task.cancel() }
        let started = await waitUntil { address.withLock { $0 } != nil }
        try #require(started, "the mirror did not start")
        return try await body(MirrorFixture(root: root, baseURL: address.withLock { $0 }!, task: task))
    }

    func url(_ path: String) -> URL { URL(string: baseURL.absoluteString + path)! }

    struct Reply {
        let status: Int
        let headers: [(name: String, value: String)]
        let body: [UInt8]
        func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
        var json: Any? { try? JSONSerialization.jsonObject(with: Data(body)) }
    }

    func get(
        _ path: String, method: String = "GET", headers: [(name: String, value: String)] = [], body: String? = nil
    ) async throws -> Reply {
        try await send(path, method: method, headers: headers, bytes: body.map { Array($0.utf8) })
    }

    func send(
        _ path: String, method: String = "POST", headers: [(name: String, value: String)] = [], bytes: [UInt8]?
    ) async throws -> Reply {
        let response = try await AsyncHTTPTransport.patient.send(
            TransportRequest(method: method, url: url(path), headers: headers, body: bytes))
        var body: [UInt8] = []
        for try await buffer in response.body { body += buffer.bytes }
        return Reply(status: response.status, headers: response.headers, body: body)
    }
}
