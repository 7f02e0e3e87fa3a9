extension ModelDepotError {
    /// Errors grouped the way a person thinks of them, so an error view switches on a category instead of parsing
    /// text. Each code declares its own (``Code/category``).
    public enum Category: String, Sendable, Codable, CaseIterable {
        /// The network or a server failed: no connection, timeouts, 5xx, rate limits, an expired signed URL. Trying
        /// later may work (see ``ModelDepotError/isRetryable``).
        case network
        /// Credentials are missing or refused, or the repository's terms must be accepted first.
        case authorization
        /// The repository, revision or file does not exist, or is not in the cache while offline.
        case notFound
        /// The disk: full, not writable, locked by another process, or a cache folder damaged.
        case storage
        /// Bytes that are not what they must be: a digest or size mismatch, a refused signature, a file format
        /// that can run code, a malformed model file.
        case integrity
        /// Someone cancelled it; nothing went wrong.
        case cancelled
        /// What was asked for cannot be done as asked: a malformed URL, name or setting.
        case input
        /// A code this library declares no category for (an app's own).
        case other
    }

    /// What a person can do about an error, as a value a front end maps to its own words: a flag on the command
    /// line, a button in an app. Stable names, like ``Code``.
    public struct Remedy: Hashable, Sendable, CustomStringConvertible {
        /// The remedy's stable name (`provideToken`).
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Give the Hub a token that may read the repository (the Hub refused the one sent, or none was sent).
        public static let provideToken = Remedy("provideToken")
        /// Turn offline mode off (`HF_HUB_OFFLINE`), or download while online.
        public static let goOnline = Remedy("goOnline")
        /// Change the file patterns: they select nothing in the repository.
        public static let changePatterns = Remedy("changePatterns")
        /// Give a usable Hub endpoint (`HF_ENDPOINT`).
        public static let fixEndpoint = Remedy("fixEndpoint")
        /// Download it first: it is not in the cache.
        public static let downloadFirst = Remedy("downloadFirst")
        /// Free disk space, or download somewhere else.
        public static let freeSpace = Remedy("freeSpace")
        /// Name the output file yourself: the one derived from the URL was refused.
        public static let chooseOutputPath = Remedy("chooseOutputPath")
    }

    /// The group this error belongs to, for a person (``Category``).
    public var category: Category { code.category }

    /// One sentence on what to try next, in the library's terms (environment variables, calls); nil when the
    /// message already says all there is. Front ends with their own controls map ``remedy`` instead.
    public var recoverySuggestion: String? {
        switch remedy {
        case .provideToken?:
            return "Use a Hugging Face token that may read the repository (HF_TOKEN or the token file)."
        case .goOnline?: return "Turn offline mode off (unset HF_HUB_OFFLINE), or download while online."
        case .changePatterns?: return "Change the include and exclude patterns: they select no file."
        case .fixEndpoint?: return "Set HF_ENDPOINT to a Hub URL such as https://huggingface.co."
        case .downloadFirst?: return "Download the model first; it is not in the cache."
        case .freeSpace?: return "Free disk space (prune or remove models), or download into a cache on another disk."
        case .chooseOutputPath?: return "Give the output file's path yourself."
        default: break
        }
        switch category {
        case .network where code == .proxyRefused:
            return
                "Check the proxy's URL and credentials (https_proxy, http_proxy, all_proxy or --proxy: http://user:password@host:port), or add the host to no_proxy."
        case .network where code == .untrustedCertificate:
            return
                "Add your organisation's CA certificate (a PEM file): SSL_CERT_FILE=/path/ca.pem or --ca-cert /path/ca.pem."
        case .network:
            return isRetryable || code == .expiredURL
                ? "Try again later; what arrived is kept and the download resumes." : nil
        case .authorization:
            return code == .gatedRepository
                ? "Accept the repository's terms on the Hub, then use a token of that account."
                : "Use a Hugging Face token that may read the repository (HF_TOKEN or the token file)."
        case .storage where code == .insufficientDiskSpace:
            return "Free disk space (prune or remove models), or download into a cache on another disk."
        case .storage where code == .locked:
            return "Wait for the other download of these files to finish, then try again."
        case .integrity where code == .checksumMismatch || code == .sizeMismatch:
            return "Download it again; if it keeps failing, the server holds other bytes than it promises."
        case .cancelled:
            return "Start the download again; it resumes from what arrived."
        default:
            return nil
        }
    }
}

extension ModelDepotError.Code {
    /// The codes declared in this module, for decoding a code's category by its name.
    static let coreCodes: [Self] = [
        .invalidURL, .invalidArgument, .httpStatus, .notFound, .unauthorized, .rateLimited, .serverError, .network,
        .stalled, .checksumMismatch, .sizeMismatch, .sourceChanged, .insufficientDiskSpace, .fileSystem,
        .protocolViolation, .locked, .invalidModelFile, .cancelled, .repositoryNotFound, .gatedRepository,
        .revisionNotFound, .entryNotFound, .notCached, .incompleteSnapshot, .expiredURL, .proxyRefused,
        .untrustedCertificate,
    ]
}
