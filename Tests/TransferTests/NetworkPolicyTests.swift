import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

/// A network the test switches: cellular, Wi-Fi, none.
final class SwitchableNetwork: NetworkConditions {
    private let state: Mutex<(path: NetworkPathStatus, watchers: [AsyncStream<NetworkPathStatus>.Continuation])>

    init(_ path: NetworkPathStatus) { state = Mutex((path, [])) }

    func current() async -> NetworkPathStatus { state.withLock { $0.path } }

    func changes() -> AsyncStream<NetworkPathStatus> {
        let (stream, continuation) = AsyncStream<NetworkPathStatus>.makeStream()
        state.withLock { $0.watchers.append(continuation) }
        return stream
    }

    func switchTo(_ path: NetworkPathStatus) {
        let watchers = state.withLock { state in
            state.path = path
            return state.watchers
        }
        for watcher in watchers { watcher.yield(path) }
    }

    var watcherCount: Int { state.withLock { $0.watchers.count } }
}

/// Which networks a download may use, decided portably and enforced by the engine before each file.
@Suite struct NetworkPolicyTests {
    static let cellular = NetworkPathStatus(isExpensive: true)
    static let lowData = NetworkPathStatus(isConstrained: true)
    static let offline = NetworkPathStatus(isSatisfied: false)

    @Test func decisions() {
        #expect(NetworkPolicy.any.decision(for: Self.cellular) == .proceed)
        #expect(NetworkPolicy.any.decision(for: Self.lowData) == .proceed)
        #expect(NetworkPolicy.unmeteredOnly.decision(for: .unmetered) == .proceed)
        guard case .wait(let reason) = NetworkPolicy.unmeteredOnly.decision(for: Self.cellular) else {
            Issue.record("a Wi-Fi-only download on cellular waits")
            return
        }
        #expect(reason.contains("Wi-Fi"))
        guard case .wait = NetworkPolicy.unmeteredOnly.decision(for: Self.lowData) else {
            Issue.record("Low Data Mode waits")
            return
        }
        guard case .wait = NetworkPolicy.any.decision(for: Self.offline) else {
            Issue.record("no network waits by default")
            return
        }
        let impatient = NetworkPolicy(waitsForConnectivity: false)
        guard case .fail = impatient.decision(for: Self.offline) else {
            Issue.record("no network fails when the policy does not wait")
            return
        }
    }

    /// On cellular a Wi-Fi-only download waits and says why; on Wi-Fi it goes on and completes.
    @Test func aWiFiOnlyDownloadWaitsOnCellularThenCompletes() async throws {
        let fixture = try await DownloadFixture.make(size: 512 << 10)
        defer { Task { await fixture.cleanUp() } }
        let network = SwitchableNetwork(Self.cellular)
        var configuration = DownloadFixture.configuration()
        configuration.networkPolicy = .unmeteredOnly
        configuration.networkConditions = network
        let waits = Mutex<[String]>([])
        let download = Task {
            try await fixture.downloader(configuration).download(fixture.request(sha256: fixture.sha256)) { progress in
                if let wait = progress.waiting { waits.withLock { $0.append(wait.description) } }
            }
        }
        #expect(await waitUntil { waits.withLock { $0 }.contains { $0.contains("waiting for Wi-Fi") } })
        #expect(!FileManager.default.fileExists(atPath: fixture.destination.path))
        network.switchTo(.unmetered)
        let result = try await download.value
        #expect(result.sha256 == fixture.sha256)
        #expect(try fixture.destinationBytes() == fixture.bytes)
    }

    /// Wi-Fi lost in the middle of a file: the file stops where it is and says it waits for Wi-Fi, nothing is placed;
    /// back on Wi-Fi it goes on from its resume record rather than from zero.
    @Test func wiFiLostMidFileStopsTheFileAndItResumesOnWiFi() async throws {
        let size = 2 << 20
        let fixture = try await DownloadFixture.make(size: size)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.throttle(bytesPerSecond: 128 << 10), times: 1000)
        let network = SwitchableNetwork(.unmetered)
        var configuration = DownloadFixture.configuration()
        configuration.networkPolicy = .unmeteredOnly
        configuration.networkConditions = network
        let waits = Mutex<[String]>([])
        let download = Task {
            try await fixture.downloader(configuration).download(fixture.request(sha256: fixture.sha256)) { progress in
                if let wait = progress.waiting { waits.withLock { $0.append(wait.description) } }
            }
        }
        #expect(await waitUntil { fixture.server.bodyBytesSent >= 256 << 10 })
        network.switchTo(Self.cellular)
        #expect(await waitUntil { waits.withLock { $0 }.contains { $0.contains("waiting for Wi-Fi") } })
        #expect(!FileManager.default.fileExists(atPath: fixture.destination.path))
        let sentWhilePaused = fixture.server.bodyBytesSent
        network.switchTo(.unmetered)
        let result = try await download.value
        #expect(result.sha256 == fixture.sha256)
        #expect(try fixture.destinationBytes() == fixture.bytes)
        // Resumed: what was sent after the pause is the rest of the file, not all of it again.
        let sentAfter = fixture.server.bodyBytesSent - sentWhilePaused
        #expect(sentAfter < Int64(size) - (128 << 10), "sent \(sentAfter) bytes after the pause for \(size)")
    }

    /// The URLSession transport carries the policy in its session (Apple: `allowsExpensiveNetworkAccess`,
    /// `allowsConstrainedNetworkAccess`), one transport per policy; the default policy gets the shared one.
    @Test func theTransportIsBuiltFromThePolicy() {
        let wifiOnly = URLSessionTransport.shared(for: .unmeteredOnly)
        #expect(wifiOnly === URLSessionTransport.shared(for: .unmeteredOnly))
        #expect(wifiOnly.networkPolicy == .unmeteredOnly)
        #expect(URLSessionTransport.shared(for: .any) === URLSessionTransport.shared)
    }

    @Test func noNetworkFailsAtOnceWhenThePolicyDoesNotWait() async throws {
        let fixture = try await DownloadFixture.make(size: 64 << 10)
        defer { Task { await fixture.cleanUp() } }
        var configuration = DownloadFixture.configuration()
        configuration.networkPolicy = NetworkPolicy(waitsForConnectivity: false)
        configuration.networkConditions = SwitchableNetwork(Self.offline)
        let error = await captureError {
            _ = try await fixture.downloader(configuration).download(fixture.request())
        }
        #expect(error?.code == .network && error?.message.contains("no network connection") == true)
        #expect(!FileManager.default.fileExists(atPath: fixture.destination.path))
    }

    /// Cancelling a download that waits for a network ends it as cancelled.
    @Test func aWaitingDownloadCanBeCancelled() async throws {
        let fixture = try await DownloadFixture.make(size: 64 << 10)
        defer { Task { await fixture.cleanUp() } }
        let network = SwitchableNetwork(Self.cellular)
        var configuration = DownloadFixture.configuration()
        configuration.networkPolicy = .unmeteredOnly
        configuration.networkConditions = network
        let download = Task { try await fixture.downloader(configuration).download(fixture.request()) }
        #expect(await waitUntil { network.watcherCount == 1 })
        download.cancel()
        let error = await captureError { _ = try await download.value }
        #expect(error?.code == .cancelled)
    }
}
