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
        /// The group a person sees it in (``ModelDepotError/category``): declared with the code, in one place.
        public let category: Category
        /// A code by name in `category`; the library's own codes are the static members.
        public init(_ rawValue: String, category: Category = .other) {
            self.rawValue = rawValue
            self.category = category
        }
        public var description: String { rawValue }

        // A code is its name: two codes of one name are the same code whatever category they were made with.
        public static func == (lhs: Code, rhs: Code) -> Bool { lhs.rawValue == rhs.rawValue }
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

        /// Decodes a code by name; its category is the library's for a name the library declares in this module,
        /// `other` for the rest.
        public init(from decoder: any Decoder) throws {
            let name = try decoder.singleValueContainer().decode(String.self)
            self.init(name, category: Self.coreCodes.first { $0.rawValue == name }?.category ?? .other)
        }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }

        /// The URL cannot be downloaded from (unsupported scheme, no host, malformed).
        public static let invalidURL = Code("invalidURL", category: .input)
        /// An argument or configuration value is out of range.
        public static let invalidArgument = Code("invalidArgument", category: .input)
        /// The server answered with an HTTP status that will not succeed on retry (most 4xx).
        public static let httpStatus = Code("httpStatus", category: .network)
        /// The resource does not exist on the server (404 / 410).
        public static let notFound = Code("notFound", category: .notFound)
        /// The server requires credentials, or refused the ones given (401 / 403).
        public static let unauthorized = Code("unauthorized", category: .authorization)
        /// The server kept answering 429 after every retry.
        public static let rateLimited = Code("rateLimited", category: .network)
        /// The server kept failing (5xx) after every retry.
        public static let serverError = Code("serverError", category: .network)
        /// The connection failed, was reset or timed out after every retry.
        public static let network = Code("network", category: .network)
        /// No bytes arrived for longer than the stall timeout, after every retry.
        public static let stalled = Code("stalled", category: .network)
        /// The downloaded bytes do not match the expected SHA-256.
        public static let checksumMismatch = Code("checksumMismatch", category: .integrity)
        /// The downloaded size differs from the announced or expected size.
        public static let sizeMismatch = Code("sizeMismatch", category: .integrity)
        /// The file changed on the server during the download more often than the engine restarts for.
        public static let sourceChanged = Code("sourceChanged", category: .network)
        /// The destination volume does not have room for the file.
        public static let insufficientDiskSpace = Code("insufficientDiskSpace", category: .storage)
        /// The destination (or its folder) cannot be created or written.
        public static let fileSystem = Code("fileSystem", category: .storage)
        /// The server's answer breaks the HTTP contract (a bad Content-Range, too many redirects).
        public static let protocolViolation = Code("protocolViolation", category: .network)
        /// Another process is downloading to the same destination.
        public static let locked = Code("locked", category: .storage)
        /// A file is not a valid model file of its format: a bad GGUF or safetensors header, an incomplete Core
        /// ML bundle. The message says what is wrong with it.
        public static let invalidModelFile = Code("invalidModelFile", category: .integrity)
        /// The download was cancelled.
        public static let cancelled = Code("cancelled", category: .cancelled)
        /// The Hub has no such repository, or it is private and the token does not grant access.
        public static let repositoryNotFound = Code("repositoryNotFound", category: .notFound)
        /// The repository is gated: its terms must be accepted on the Hub before its files can be downloaded.
        public static let gatedRepository = Code("gatedRepository", category: .authorization)
        /// The repository has no such branch, tag or commit.
        public static let revisionNotFound = Code("revisionNotFound", category: .notFound)
        /// The repository has no such file at that revision.
        public static let entryNotFound = Code("entryNotFound", category: .notFound)
        /// Offline (or the Hub unreachable) and the cache does not hold what was asked for.
        public static let notCached = Code("notCached", category: .notFound)
        /// The cached snapshot lacks files its recorded tree lists.
        public static let incompleteSnapshot = Code("incompleteSnapshot", category: .storage)
        /// A server the download was redirected to (a CDN's signed URL) refused access (400 / 401 / 403), and
        /// kept refusing the fresh URLs the original one redirected to: the signed URLs expire or are refused.
        public static let expiredURL = Code("expiredURL", category: .network)
        /// The proxy refused to carry the request: it wants credentials (407), or answered `CONNECT` with an
        /// error. Retrying will not help until its settings change.
        public static let proxyRefused = Code("proxyRefused", category: .network)
        /// The server's TLS certificate is not signed by an authority this machine trusts (a company's
        /// TLS-inspecting proxy, a self-signed mirror).
        public static let untrustedCertificate = Code("untrustedCertificate", category: .network)
    }

    /// What kind of failure this is; stable across releases.
    public let code: Code
    /// What a person can do about it, when the thrower knows (a front end turns it into a flag, a button).
    public let remedy: Remedy?
    /// What happened and what to do about it, written for people.
    public let message: String
    /// The error this one wraps, when there is one.
    public let underlying: (any Error)?
    /// When the server said to come back (Retry-After), for `rateLimited` and `serverError`.
    public let retryAfter: Duration?

    /// An error of kind `code`; `message` says what went wrong and what to do, `retryAfter` how long a server asked to
    /// wait.
    public init(
        _ code: Code, _ message: String, underlying: (any Error)? = nil, retryAfter: Duration? = nil,
        remedy: Remedy? = nil
    ) {
        self.code = code
        self.remedy = remedy
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
    /// The same error (code, remedy, what it wraps, the server's wait) told with `message`: for a caller that adds
    /// what it knows (the file it was downloading, the attempts made) without losing what the thrower knew.
    public func withMessage(_ message: String) -> ModelDepotError {
        ModelDepotError(code, message, underlying: underlying, retryAfter: retryAfter, remedy: remedy)
    }

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
