import Foundation
import ModelDepotCore

/// One file to download: where from, where to, and what it must hash to.
public struct DownloadRequest: Sendable {
    /// An `http` or `https` URL. `user:password@` in it is never stored, printed or sent in the URL: the
    /// engine sends it as HTTP Basic credentials to this URL's origin only, as curl does.
    public var url: URL
    /// The final path of the file. Partial data lives beside it in `<destination>.incomplete` until it is
    /// verified; only a complete, verified file ever appears here.
    public var destination: URL
    /// Lowercase or uppercase hex SHA-256 the file must match; checked while streaming.
    public var expectedSHA256: String?
    /// The git blob id (40 hex) the file must match, as the Hub names regular (non-LFS) files; checked by
    /// reading the finished file once before it is moved into place.
    package var expectedGitBlobID: String?
    /// The size the file must have, when known in advance.
    public var expectedSize: Int64?
    /// Extra request headers (for example `Authorization`). They are sent to the URL's origin only and
    /// dropped when a redirect leads to another scheme, host or port.
    package var headers: [(name: String, value: String)]
    /// Download even when `destination` already holds a file that looks complete (a forced download, or a file
    /// whose provenance is unknown): the new file replaces it in one rename, so there is never a moment without
    /// a file there. Partial data of an earlier attempt is still resumed; the result is verified as always.
    package var replacesExisting = false
    /// Names the content when several URLs serve it (mirrors of one Hub): the resume sidecar is keyed by it
    /// instead of the URL, so bytes fetched from one URL are resumed from another. The server's validators
    /// (`If-Range`) and the final hash still guard against mixing two versions. Nil: the URL is the key.
    package var resumeKey: String?

    /// What the resume sidecar is keyed by.
    var resumeIdentity: String { resumeKey ?? url.absoluteString }

    /// A request to download `url` to `destination`, optionally checked against `expectedSHA256` and sending `headers`.
    package init(
        url: URL,
        destination: URL,
        expectedSHA256: String? = nil,
        expectedSize: Int64? = nil,
        expectedGitBlobID: String? = nil,
        headers: [(name: String, value: String)] = []
    ) {
        self.url = url
        self.destination = destination
        self.expectedSHA256 = expectedSHA256?.lowercased()
        self.expectedGitBlobID = expectedGitBlobID?.lowercased()
        self.expectedSize = expectedSize
        self.headers = headers
        self.partialPath = destination.path + ".incomplete"
        self.resumeRecordPath = destination.path + ".incomplete.json"
        self.lockPath = destination.path + ".lock"
        self.lockIsShared = false
        self = movingURLCredentialsToHeader()
    }

    /// The same request with `user:password@` taken out of the URL and sent as an HTTP Basic `Authorization`
    /// header instead (unless one is given), which, like every header here, goes to the URL's origin only.
    func movingURLCredentialsToHeader() -> DownloadRequest {
        let (url, authorization) = self.url.splittingCredentials()
        guard let authorization else { return self }
        var request = self
        request.url = url
        if !headers.contains(where: { $0.name.caseInsensitiveCompare("Authorization") == .orderedSame }) {
            request.headers.append((name: "Authorization", value: authorization))
        }
        return request
    }

    /// Where the bytes collect until the file is complete and verified; `<destination>.incomplete` unless
    /// ``placingWorkFiles(partial:resumeRecord:sharedLock:)`` chose otherwise.
    package private(set) var partialPath: String
    /// The resume sidecar: which parts of the partial file are written, and of which version of the file.
    package private(set) var resumeRecordPath: String
    /// The lock file that keeps two processes from downloading to the same destination at once.
    package private(set) var lockPath: String
    /// A shared lock file belongs to a layout other tools also lock (the Hub cache's `.locks/`), so it is
    /// left in place on release, as those tools leave it.
    var lockIsShared: Bool

    /// The same request with its work files elsewhere, for layouts that prescribe them (the Hub cache keeps
    /// partial blobs in `blobs/` and locks in `.locks/<repo>/<etag>.lock`, shared with Python).
    package func placingWorkFiles(partial: String, resumeRecord: String, sharedLock: String) -> DownloadRequest {
        var request = self
        request.partialPath = partial
        request.resumeRecordPath = resumeRecord
        request.lockPath = sharedLock
        request.lockIsShared = true
        return request
    }
}

/// Tunables of the transfer engine. The defaults suit downloads of large files from a CDN.
package struct DownloadConfiguration: Sendable {
    /// Connections to start with; more are added while throughput grows.
    package var initialConnections: Int = 4
    /// Upper bound for parallel ranged connections to one file.
    package var maxConnections: Int = 16
    /// Size of a ranged request.
    package var segmentSize: Int64 = 8 << 20
    /// Files smaller than this are fetched over one connection.
    package var minimumSizeForRanges: Int64 = 4 << 20
    /// How failed attempts are retried.
    package var retryPolicy: RetryPolicy = .default
    /// A request that gets no answer, or a connection that delivers no byte, for this long is dropped and
    /// retried; nil disables the watchdog (the transport's own read timeout still applies).
    package var stallTimeout: Duration? = .seconds(20)
    /// Bytes written between two saves of the resume sidecar (bounds what a crash can lose).
    package var checkpointBytes: Int64 = 1 << 20
    /// How often progress events are emitted.
    package var progressInterval: Duration = .milliseconds(200)
    /// The most redirects followed for one request.
    package var maxRedirects: Int = 10
    /// How many fresh URLs in a row the engine asks the original URL for when the server it was redirected to
    /// refuses access (a signed CDN URL expired) before failing with `expiredURL`. Progress resets the count.
    package var maxURLRefreshes: Int = 3
    /// Flush the file to stable storage before renaming it into place. Off by default, like curl, aria2c and
    /// huggingface_hub: the rename is atomic for every process crash either way, and only a power loss
    /// between the rename and the kernel's own writeback could leave a complete-looking file with missing
    /// data (which a later verification catches). Turn it on where power loss is likely.
    package var syncBeforeRename: Bool = false
    /// How often the engine restarts from zero when the file changes on the server mid-download.
    package var maxSourceChanges: Int = 2
    /// Which networks downloads may use: checked before each file and watched during it (a file stops where it is
    /// when the path turns to one the policy refuses, and goes on when it allows again), wherever
    /// ``networkConditions`` is known.
    package var networkPolicy: NetworkPolicy = .any
    /// What the network is like: on Apple platforms the system's path (`NetworkPathConditions.shared`, over
    /// `NWPathMonitor`); elsewhere nil, which counts the network as usable and unmetered (all Linux can tell).
    package var networkConditions: (any NetworkConditions)? = DownloadConfiguration.systemNetworkConditions

    /// The system's network path where the platform reports one.
    package static var systemNetworkConditions: (any NetworkConditions)? {
        #if canImport(Network)
            NetworkPathConditions.shared
        #else
            nil
        #endif
    }
    /// Shared with other downloads running at the same time: connections beyond a download's first one each
    /// need a permit from it. Nil: only ``maxConnections`` limits this download.
    package var connectionBudget: ConnectionBudget?
    /// A cap on the bytes per second this download receives, shared with every download that holds the same
    /// ``BandwidthLimit`` (a repository pull shares one across its files). Nil: no cap.
    package var bandwidthLimit: BandwidthLimit?

    /// The defaults: 4 connections at first, up to 16, 8 MiB segments, retries per ``RetryPolicy/default``.
    package init() {}
}

/// What a finished download produced.
public struct DownloadResult: Sendable, Equatable {
    /// The verified file.
    public var file: URL
    /// The file's size in bytes.
    public var size: Int64
    /// Hex SHA-256 of the file; nil when it was already on disk and no hash was asked for.
    public var sha256: String?
    /// Bytes received from the network by this call.
    public var bytesReceived: Int64
    /// Bytes that were already in the partial file from an earlier run.
    public var bytesResumed: Int64
    /// True when the destination was already complete and nothing was requested.
    public var wasAlreadyPresent: Bool
}
