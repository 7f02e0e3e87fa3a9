/// The one error type every ModelDepot API throws.
///
/// Match on ``code`` — it is stable across releases — and show ``message`` to people: it says what went
/// wrong and what to do next. ``underlying`` keeps the original error (a socket error, an `errno`) for logs.
///
/// ```swift
/// do {
///     try await downloader.download(request)
/// } catch let error as ModelDepotError where error.code == .checksumMismatch {
///     // the server sent bytes that do not match the expected SHA-256
/// }
/// ```
public struct ModelDepotError: Error, Sendable, CustomStringConvertible {
    /// A stable identifier for a kind of failure. New codes may be added; existing ones never change meaning.
    public struct Code: Hashable, Sendable, CustomStringConvertible, Codable {
        /// The code's stable name (`checksumMismatch`), as JSON output and logs show it.
        public let rawValue: String
        /// A code by name; the library's own codes are the static members.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public init(from decoder: any Decoder) throws {
            self.rawValue = try decoder.singleValueContainer().decode(String.self)
        }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }

        /// The URL cannot be downloaded from (unsupported scheme, no host, malformed).
        public static let invalidURL = Code("invalidURL")
        /// An argument or configuration value is out of range.
        public static let invalidArgument = Code("invalidArgument")
        /// The server answered with an HTTP status that will not succeed on retry (most 4xx).
        public static let httpStatus = Code("httpStatus")
        /// The resource does not exist on the server (404 / 410).
        public static let notFound = Code("notFound")
        /// The server requires credentials, or refused the ones given (401 / 403).
        public static let unauthorized = Code("unauthorized")
        /// The server kept answering 429 after every retry.
        public static let rateLimited = Code("rateLimited")
        /// The server kept failing (5xx) after every retry.
        public static let serverError = Code("serverError")
        /// The connection failed, was reset or timed out after every retry.
        public static let network = Code("network")
        /// No bytes arrived for longer than the stall timeout, after every retry.
        public static let stalled = Code("stalled")
        /// The downloaded bytes do not match the expected SHA-256.
        public static let checksumMismatch = Code("checksumMismatch")
        /// The downloaded size differs from the announced or expected size.
        public static let sizeMismatch = Code("sizeMismatch")
        /// The file changed on the server during the download more often than the engine restarts for.
        public static let sourceChanged = Code("sourceChanged")
        /// The destination volume does not have room for the file.
        public static let insufficientDiskSpace = Code("insufficientDiskSpace")
        /// The destination (or its folder) cannot be created or written.
        public static let fileSystem = Code("fileSystem")
        /// The server's answer breaks the HTTP contract (a bad Content-Range, too many redirects).
        public static let protocolViolation = Code("protocolViolation")
        /// Another process is downloading to the same destination.
        public static let locked = Code("locked")
        /// A file is not a valid model file of its format: a bad GGUF or safetensors header, an incomplete Core
        /// ML bundle. The message says what is wrong with it.
        public static let invalidModelFile = Code("invalidModelFile")
        /// The download was cancelled.
        public static let cancelled = Code("cancelled")
        /// The Hub has no such repository, or it is private and the token does not grant access.
        public static let repositoryNotFound = Code("repositoryNotFound")
        /// The repository is gated: its terms must be accepted on the Hub before its files can be downloaded.
        public static let gatedRepository = Code("gatedRepository")
        /// The repository has no such branch, tag or commit.
        public static let revisionNotFound = Code("revisionNotFound")
        /// The repository has no such file at that revision.
        public static let entryNotFound = Code("entryNotFound")
        /// Offline (or the Hub unreachable) and the cache does not hold what was asked for.
        public static let notCached = Code("notCached")
        /// The cached snapshot lacks files its recorded tree lists.
        public static let incompleteSnapshot = Code("incompleteSnapshot")
        /// A server the download was redirected to (a CDN's signed URL) refused access (400 / 401 / 403), and
        /// kept refusing the fresh URLs the original one redirected to: the signed URLs expire or are refused.
        public static let expiredURL = Code("expiredURL")
    }

    /// What kind of failure this is; stable across releases.
    public let code: Code
    /// What happened and what to do about it, written for people.
    public let message: String
    /// The error this one wraps, when there is one.
    public let underlying: (any Error)?
    /// When the server said to come back (Retry-After), for `rateLimited` and `serverError`.
    public let retryAfter: Duration?

    /// An error of kind `code`; `message` says what went wrong and what to do, `retryAfter` how long a server asked to
    /// wait.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil, retryAfter: Duration? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.retryAfter = retryAfter
    }

    public var description: String {
        guard let underlying else { return message }
        return "\(message) (\(underlying))"
    }
}

extension ModelDepotError {
    /// Whether trying the same operation again may succeed (the engine's own retries have been used up).
    public var isRetryable: Bool {
        switch code {
        case .rateLimited, .serverError, .network, .stalled, .sourceChanged, .locked: true
        default: false
        }
    }

    package static func cancelled() -> ModelDepotError {
        ModelDepotError(.cancelled, "The download was cancelled; partial data is kept so it can resume.")
    }
}
