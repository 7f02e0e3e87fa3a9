import Foundation
import Logging
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import Testing

/// `/metrics` in Prometheus' text format (through swift-prometheus): counters with their help, a request-duration
/// histogram per route class, and the same numbers read back through `MirrorServer.counters`.
@Suite struct MirrorMetricsTests {
    @Test func countersHistogramsAndTheReadableStoreAgree() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-metrics")
        defer { root.remove() }
        let weights = SampleData.bytes(count: 1 << 20, seed: 5)
        try FileManager.default.createDirectory(at: root.path("acme/tiny"), withIntermediateDirectories: true)
        try Data(weights).write(to: root.path("acme/tiny/model.bin"))
        let server = MirrorServer(
            root: root.url, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await MirrorFixture.serving(server, root: root) { mirror in
            for _ in 0..<3 { #expect(try await mirror.get("/acme/tiny/resolve/main/model.bin").body == weights) }
            #expect(try await mirror.get("/api/models/acme/tiny").status == 200)
            #expect(try await mirror.get("/api/models/acme/tiny/tree/main").status == 200)
            #expect(try await mirror.get("/nope").status == 404)
            #expect(try await mirror.get("/healthz").status == 200)

            let text = String(decoding: try await mirror.get("/metrics").body, as: UTF8.self)
            let lines = text.split(separator: "\n").map(String.init)
            func value(_ series: String) -> Double? {
                lines.first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last!) }
            }
            #expect(lines.contains("# HELP modeldepot_served_bytes_total File bytes sent to clients."))
            #expect(lines.contains("# TYPE modeldepot_served_bytes_total counter"))
            #expect(value("modeldepot_served_bytes_total") == Double(3 * weights.count))
            #expect(value("modeldepot_sendfile_responses_total") == 3)
            #expect(lines.contains("# TYPE modeldepot_request_duration_seconds histogram"))
            #expect(value(#"modeldepot_request_duration_seconds_count{route="file"}"#) == 3)
            #expect(value(#"modeldepot_request_duration_seconds_count{route="api"}"#) == 2)
            #expect(value(#"modeldepot_request_duration_seconds_count{route="other"}"#) == 1)
            #expect(value(#"modeldepot_request_duration_seconds_count{route="health"}"#) == 1)
            #expect(value(#"modeldepot_request_duration_seconds_bucket{route="file",le="+Inf"}"#) == 3)
            #expect((value(#"modeldepot_request_duration_seconds_sum{route="file"}"#) ?? -1) > 0)
            #expect(value(#"modeldepot_requests_total{code="200"}"#) == 6)
            #expect(value(#"modeldepot_requests_total{code="404"}"#) == 1)
            #expect(value("modeldepot_upstream_pulls_in_flight") == 0)

            let counters = server.counters
            #expect(counters.servedBytes == 3 * weights.count)
            #expect(counters.sendfileResponses == 3)
            #expect(counters.cacheHits == 3)
            // Now with the /metrics request itself.
            #expect(counters.requestsByStatus[200] == 7 && counters.requestsByStatus[404] == 1)
        }
    }
}
