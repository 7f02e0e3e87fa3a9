import Foundation
import ModelDepotTransfer

/// Where a pull-through mirror gets what it does not hold.
public struct Upstream: Sendable {
    /// The upstream Hub (`https://huggingface.co`, or another mirror).
    public var endpoint: URL
    /// The operator's token for the upstream. Clients' tokens are never sent there.
    public var token: String?
    /// How long a branch's commit is trusted before the upstream is asked again.
    public var branchTTL: Duration
    /// Retries of metadata calls to the upstream before the mirror answers from what it has.
    public var retryPolicy: RetryPolicy
    /// How long a client waits for the upstream to say what a branch is when the mirror already knows an
    /// earlier answer: after that the earlier one is served, marked stale.
    public var staleAfter: Duration
    /// How long a client waits for the upstream when the mirror has no earlier answer: after that it gets a 504.
    /// Clients give up sooner themselves (huggingface_hub after 10 s): a later answer would reach nobody.
    public var answerWithin: Duration
    /// When set, the cache is kept under this many bytes after every pull: least recently used repositories
    /// are evicted, never pinned ones nor those being served or pulled.
    public var maxCacheSize: Int64?
    /// How many files are pulled at once, how many may wait, and what happens to pulls nobody follows.
    public var pullLimits: PullLimits
    /// What decides when a branch's resolution is old (``branchTTL``) and when an upstream is too slow to wait
    /// for; tests inject their own.
    public var clock: any Clock<Duration> = ContinuousClock()

    /// - Parameters:
    ///   - endpoint: the upstream Hub's base URL.
    ///   - token: the operator's token for gated or private repositories.
    ///   - branchTTL: how long a branch's resolution is kept (60 s by default).
    ///   - maxCacheSize: the most bytes the mirror's cache may hold (no limit by default).
    ///   - staleAfter: how long to wait for the upstream when an earlier answer can be served (5 s by default).
    ///   - answerWithin: how long to wait for the upstream when there is no earlier answer (30 s by default).
    public init(
        endpoint: URL, token: String? = nil, branchTTL: Duration = .seconds(60),
        retryPolicy: RetryPolicy = RetryPolicy(maxAttempts: 3), maxCacheSize: Int64? = nil,
        staleAfter: Duration = .seconds(5), answerWithin: Duration = .seconds(30), pullLimits: PullLimits = PullLimits()
    ) {
        self.answerWithin = answerWithin
        self.pullLimits = pullLimits
        self.staleAfter = staleAfter
        self.endpoint = endpoint
        self.token = token
        self.branchTTL = branchTTL
        self.retryPolicy = retryPolicy
        self.maxCacheSize = maxCacheSize
    }
}
