import Foundation
import ModelDepotTesting
import Synchronization
import Testing

@testable import ModelDepotCore
@testable import ModelDepotHub
@testable import ModelDepotTransfer

/// The Hub's rate-limit headers (IETF draft-ietf-httpapi-ratelimit-headers): a 429 is waited for exactly as long
/// as the Hub says, and calls are spaced out when few are left, on an injected clock.
@Suite struct RateLimitTests {
    static let policy = #""fixed window";"api";q=500;w=300"#
    static let page = #"[{"type": "file", "oid": "0000000000000000000000000000000000000000", "size": 1, "path": "a"}]"#

    @Test func headersAreReadAsTheHubSendsThem() throws {
        let limit = try #require(RateLimit(rateLimit: #""api";r=0;t=55"#, policy: Self.policy))
        #expect(limit == RateLimit(name: "api", remaining: 0, reset: .seconds(55), quota: 500, window: .seconds(300)))
        #expect(limit.description == "the rate limit for api per 300 s: 0 of 500 requests left, for 55 s more")
        let two = try #require(RateLimit(rateLimit: #""api";r=40;t=10, "resolvers";r=3;t=20"#, policy: nil))
        #expect(two.name == "resolvers" && two.remaining == 3, "the tightest of several")
        #expect(RateLimit(rateLimit: #""api";r=x;t=5"#, policy: nil) == nil)
        #expect(RateLimit(rateLimit: nil, policy: Self.policy) == nil)
        let response = TransportResponse(
            status: 200, headers: [(name: "ratelimit", value: #""api";r=7;t=9"#)], body: .empty)
        #expect(response.rateLimit?.remaining == 7 && response.retryAfter == nil)
    }

    /// A client and the waits it reports, on a test clock.
    /// The waits a client reported.
    final class Waits: Sendable {
        let seen = Mutex<[TransferWait]>([])
        var all: [TransferWait] { seen.withLock { $0 } }
    }

    static func client(_ server: ScriptedHTTPServer, _ clock: TestClock, _ waits: Waits) -> HubClient {
        HubClient(endpoint: server.baseURL, transport: DefaultTransport.shared, clock: clock, random: { 0 })
            .observingWaits { wait in
                if let wait { waits.seen.withLock { $0.append(wait) } }
            }
    }

    /// A server cannot make a client sleep past the longest wait it allows (`--max-rate-limit-wait`), nor announce
    /// a reset beyond a day.
    @Test func pacingIsBoundedByTheLongestWait() async throws {
        #expect(RateLimit(rateLimit: #""api";r=0;t=9223372036854775807"#, policy: nil) == nil)
        let server = try await ScriptedHTTPServer.start(replies: [
            .json(Self.page, headers: [("RateLimit", #""api";r=0;t=86000"#)]), .json(Self.page),
        ])
        let clock = TestClock()
        let client = HubClient(
            endpoint: server.baseURL, transport: DefaultTransport.shared, clock: clock,
            retryPolicy: RetryPolicy(maxAttempts: 2, maxRetryAfter: .seconds(60)))
        let repo = try RepoID("acme/tiny")
        _ = try await client.listFiles(repo, revision: "main")
        let second = Task { try await client.listFiles(repo, revision: "main") }
        #expect(await waitUntil { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(60))
        _ = try await second.value
    }

    /// The implicit token goes over plain http only to this machine: through a proxy it would not stay here.
    @Test func theImplicitTokenDoesNotCrossAProxyOverPlainHTTP() throws {
        let proxied = AsyncHTTPTransport(
            network: NetworkSettings(
                proxies: ProxySettings(proxy: ProxyServer(kind: .http, host: "proxy.example", port: 3128))))
        let variables = ["HF_ENDPOINT": "http://127.0.0.1:8080", "HF_TOKEN": "hf_implicit"]
        #expect(try HubClient(environment: HubEnvironment(variables: variables), transport: proxied).token == nil)
        #expect(try HubClient(environment: HubEnvironment(variables: variables)).token == "hf_implicit")
        let explicit = HubEnvironment(variables: variables, explicitToken: "hf_explicit")
        #expect(try HubClient(environment: explicit, transport: proxied).token == "hf_explicit")
    }

    @Test func a429IsWaitedForExactlyAsLongAsTheHubSays() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .json(
                #"{"error": "rate limited"}"#, status: 429,
                headers: [("RateLimit", #""api";r=0;t=55"#), ("RateLimit-Policy", Self.policy)]),
            .json(Self.page),
        ])
        let clock = TestClock()
        let waits = Waits()
        let client = Self.client(server, clock, waits)
        let listing = Task { try await client.listFiles(try RepoID("acme/tiny"), revision: "main") }
        #expect(await waitUntil { clock.sleeperCount == 1 })
        let wait = try #require(waits.all.first)
        guard case .rateLimit(let delay, let reason) = wait else {
            Issue.record("not a rate-limit wait: \(wait)")
            return
        }
        #expect(delay == .seconds(55))
        #expect(reason.contains("0 of 500 requests left, for 55 s more"), "\(reason)")
        #expect(wait.description.hasPrefix("waiting 55 s: The Hub rate-limited"), "\(wait.description)")
        clock.advance(by: .seconds(54))
        #expect(clock.sleeperCount == 1, "it went back before the Hub said")
        clock.advance(by: .seconds(1))
        #expect(try await listing.value.count == 1)
    }

    @Test func callsAreSpacedOutWhenFewAreLeft() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .json(Self.page, headers: [("RateLimit", #""api";r=2;t=30"#), ("RateLimit-Policy", Self.policy)]),
            .json(Self.page, headers: [("RateLimit", #""api";r=0;t=20"#), ("RateLimit-Policy", Self.policy)]),
            .json(Self.page),
        ])
        let clock = TestClock()
        let waits = Waits()
        let client = Self.client(server, clock, waits)
        let repo = try RepoID("acme/tiny")
        _ = try await client.listFiles(repo, revision: "main")
        #expect(waits.all.isEmpty, "plenty left: no wait")
        // Two left of 500 for 30 s: the next call waits a third of it.
        let second = Task { try await client.listFiles(repo, revision: "main") }
        #expect(await waitUntil { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(10))
        _ = try await second.value
        // None left for 20 s: the next call waits for the window to reset rather than being refused.
        let third = Task { try await client.listFiles(repo, revision: "main") }
        #expect(await waitUntil { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(19))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        _ = try await third.value
        let delays = waits.all.compactMap { wait -> Duration? in
            if case .rateLimit(let delay, let reason) = wait, reason.hasPrefix("pacing") { return delay }
            return nil
        }
        #expect(delays == [.seconds(10), .seconds(20)], "\(waits.all)")
    }
}
