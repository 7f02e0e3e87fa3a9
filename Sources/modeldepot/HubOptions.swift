#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import Logging
    import ModelDepot

    /// Which cache and which kind of repository: the options of every command that reads the cache. Unset, the
    /// cache is where Python's `huggingface_hub` would look (HF_HUB_CACHE, HF_HOME/hub, …).
    struct CacheOptions: ParsableArguments {
        @Option(help: "The cache folder (default: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub).")
        var cacheDir: String?

        @Option(help: "The repository type: model (the default), dataset or space.")
        var repoType: String?

        var cache: HubCache {
            guard let cacheDir else { return HubCache(environment: HubEnvironment()) }
            let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            let expanded = cacheDir.hasPrefix("~/") ? NSHomeDirectory() + cacheDir.dropFirst() : cacheDir
            return HubCache(root: URL(fileURLWithPath: expanded, relativeTo: cwd))
        }

        func type() throws -> RepoType {
            guard let repoType else { return .model }
            guard let type = RepoType(rawValue: repoType.lowercased()) else {
                throw ModelDepotError(
                    .invalidArgument,
                    "'\(repoType)' is not a repository type; use one of: \(RepoType.allCases.map(\.rawValue).joined(separator: ", "))."
                )
            }
            return type
        }

        init() {}

        init(cacheDir: String?) {
            self.cacheDir = cacheDir
        }

        /// A manager of this cache alone (listing, removing, pruning): the environment's endpoint is never used, and
        /// an unusable one makes it offline rather than failing.
        func manager() -> ModelManager {
            var configuration = ModelManager.Configuration()
            configuration.cache = cache
            return ModelManager(managingCache: configuration)
        }

        func repository(_ id: String) throws -> CachedRepository {
            let reference = try reference(id)
            return cache.repository(reference.repo, type: reference.type)
        }

        /// A repository named by id (`org/name`, of `--repo-type`) or by a `hf://` URI, whose own type, revision
        /// and path win over the flags' defaults.
        func reference(_ text: String) throws -> HubReference {
            let reference = try HubReference(parsing: text, defaultType: try type())
            if repoType != nil, HubReference.namesType(text), reference.type != (try type()) {
                throw ModelDepotError(
                    .invalidArgument,
                    "'\(text)' names a \(reference.type.rawValue) but --repo-type says \(try type().rawValue); drop one of them."
                )
            }
            return reference
        }
    }

    /// The cache plus where the Hub is and how to talk to it, for commands that use the network. Unset options
    /// follow the same environment variables as Python's `huggingface_hub` (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE).
    struct HubOptions: ParsableArguments {
        @OptionGroup var cacheOptions: CacheOptions

        @Option(help: "The Hub to use (default: HF_ENDPOINT, else https://huggingface.co).")
        var endpoint: String?

        @Option(
            help:
                "The access token, sent to the endpoint (default: HF_TOKEN, else the token file HF_TOKEN_PATH or HF_HOME/token, sent only over https or to an endpoint on this machine)."
        )
        var token: String?

        @Flag(help: "Use only the cache; never touch the network (also HF_HUB_OFFLINE=1).")
        var offline = false

        @Option(
            name: .customLong("mirror"),
            help: """
                A mirror to try before the Hub; repeat for several, tried in order (also MODELDEPOT_MIRRORS=url1,url2). \
                A mirror that fails hands over to the next, then to the Hub. Mirrors get MODELDEPOT_MIRROR_TOKEN, never \
                the Hub's token.
                """)
        var mirrors: [String] = []

        @Flag(
            help: """
                Look for mirrors on the local network first (DNS-SD, _hf-mirror._tcp; also MODELDEPOT_DISCOVER=1). One \
                that answers serves file content only, each file checked against the endpoint's listing; none within \
                2 seconds: the endpoint alone.
                """)
        var discover = false

        @Option(
            help: """
                The proxy for every request, http://[user:password@]host:port or socks5h://host:port (default: \
                https_proxy / http_proxy / all_proxy, upper or lower case, lower case first; no_proxy's hosts go around \
                either).
                """)
        var proxy: String?

        @Option(
            name: .customLong("ca-cert"),
            help: """
                A PEM file (or folder of them) of certificate authorities to trust besides the system's; repeat for \
                several (also SSL_CERT_FILE, SSL_CERT_DIR, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE).
                """)
        var caCerts: [String] = []

        @Flag(help: "Do not verify TLS certificates at all: anyone on the path can read and change what is sent.")
        var insecure = false

        @Option(
            help: """
                The longest a server's rate limit is waited for (a 429's RateLimit or Retry-After), in seconds; a longer \
                wait fails at once with the time the server asked for (default: 300).
                """)
        var maxRateLimitWait: Double?

        @Flag(
            help: """
                Say on standard error what the download engine does as it happens: retries, a mirror that failed and \
                the next that took over, a fresh signed URL, a pause for the network.
                """)
        var verbose = false

        func validate() throws {
            // An empty value is a script's unset variable: refused, rather than read as "the default" or "none"
            // while the environment names another hub or mirror.
            if let endpoint, endpoint.trimmingCharacters(in: .whitespaces).isEmpty {
                throw ValidationError("--endpoint needs a URL (https://huggingface.co for the Hub).")
            }
            for mirror in mirrors {
                let url = mirror.trimmingCharacters(in: .whitespaces)
                if url.isEmpty { throw ValidationError("--mirror needs a URL.") }
                if url.contains(",") {
                    throw ValidationError("--mirror takes one URL ('\(url)'); repeat --mirror for several.")
                }
            }
        }

        /// The proxies and certificate authorities: the environment's, with the flags laid over them.
        func network() throws -> NetworkSettings {
            var network: NetworkSettings
            if let proxy {
                // The flag replaces the proxy variables, so one of them that cannot be used does not matter.
                let variables = ProcessInfo.processInfo.environment
                network = NetworkSettings(
                    proxies: ProxySettings(
                        proxy: try ProxyServer(parsing: proxy, setting: "--proxy"),
                        noProxy: NoProxy(ProxySettings.variable("no_proxy", in: variables)?.value ?? "")),
                    trust: try TrustSettings.fromEnvironment(variables))
            } else {
                network = try NetworkSettings.fromEnvironment()
            }
            for path in caCerts {
                network.trust.additional.append(try TrustSettings.checked(.init(path: path, origin: "--ca-cert")))
            }
            if insecure { network.trust.insecure = true }
            return network
        }

        /// The process environment, read once, with the flags laid over it as typed settings: a flag wins over its
        /// variable.
        var environment: HubEnvironment {
            var environment = HubEnvironment()
            if let endpoint { environment.endpoint = endpoint }
            if offline { environment.isOffline = true }
            if !mirrors.isEmpty { environment.mirrorURLs = mirrors.map { $0.trimmingCharacters(in: .whitespaces) } }
            if discover { environment.discoversMirrors = true }
            // --token is explicit: it goes to the endpoint even over http (HF_TOKEN and the token file only over
            // https, or http on this machine).
            if let token { environment.explicitToken = token }
            return environment
        }

        var cache: HubCache { cacheOptions.cache }
        func type() throws -> RepoType { try cacheOptions.type() }

        /// The Hub client of the manager these flags build, for API calls that download nothing (search, security
        /// scans).
        func hubClient() throws -> HubClient { try networkConfiguration().makePull().hub }

        /// The library's configuration for these flags: the environment with the flags laid over it, the cache.
        var configuration: ModelManager.Configuration {
            var configuration = ModelManager.Configuration(environment: environment)
            configuration.cache = cache
            return configuration
        }

        /// ``configuration`` with the transport for the network flags (``network()``).
        ///
        /// - Throws: `invalidArgument` for a proxy URL or certificate file that cannot be used, naming its flag or
        ///   variable.
        func networkConfiguration() throws -> ModelManager.Configuration {
            var configuration = self.configuration
            configuration.transport = DefaultTransport.shared(for: try network())
            if verbose {
                configuration.logger = Logger(label: "modeldepot") { StreamLogHandler.standardError(label: $0) }
                configuration.logger.logLevel = .debug
            }
            if let maxRateLimitWait {
                guard maxRateLimitWait >= 0, maxRateLimitWait <= 86_400 else {
                    throw ModelDepotError(.invalidArgument, "--max-rate-limit-wait takes seconds from 0 to 86400.")
                }
                let longest = Duration.milliseconds(Int64(maxRateLimitWait * 1000))
                var api = configuration.apiRetryPolicy ?? HubClient.defaultRetryPolicy
                api.maxRetryAfter = longest
                configuration.apiRetryPolicy = api
                configuration.engine.retryPolicy.maxRetryAfter = longest
            }
            return configuration
        }

        /// The manager for these flags, tuned by `tune` (the engine flags of `pull`): the only way a command gets one
        /// that may use the network.
        ///
        /// `pulling`: the command downloads a repository's files, which mirrors found on the local network may serve
        /// (`--discover`); other commands only ask the endpoint, and never look.
        ///
        /// - Throws: `invalidURL` for an unusable `--endpoint` or HF_ENDPOINT.
        func manager(
            pulling: Bool = false, _ tune: (inout ModelManager.Configuration) throws -> Void = { _ in }
        ) async throws -> ModelManager {
            var configuration = try networkConfiguration()
            try tune(&configuration)
            if pulling, configuration.environment.discoversMirrors {
                if configuration.environment.isOffline {
                    StandardStreams.error(
                        Data(
                            "Not looking for mirrors on the local network: offline (--offline, HF_HUB_OFFLINE).\n".utf8)
                    )
                } else {
                    await Self.discoverMirrors(into: &configuration)
                }
            }
            return try ModelManager(configuration: configuration)
        }

        /// Adds the mirrors that answer on the local network to `configuration`, saying on stderr what was found; a
        /// machine without DNS-SD, or no answer, leaves the endpoint alone, said too.
        static func discoverMirrors(into configuration: inout ModelManager.Configuration) async {
            let note: String
            do {
                let found = try await configuration.discoverMirrors()
                // Which ones are used is the library's choice: read it, never decide it again here.
                let chosen = Set(configuration.discoveredMirrors.map(\.endpoint))
                let usable = found.filter { chosen.contains($0.endpoint) }
                let unused = found.filter { !$0.tokenRequired && !chosen.contains($0.endpoint) }.map {
                    "Found '\($0.name)' too; not used (only the first \(MirrorDiscovery.mostUsed) are, and never one named with --mirror).\n"
                }
                let skipped = found.filter(\.tokenRequired).map {
                    "'\($0.name)' wants a token, and a discovered mirror is never sent one; name it with --mirror to use it. "
                }
                note =
                    usable.isEmpty
                    ? "\(skipped.joined())No mirror answered on the local network within \(MirrorDiscovery.defaultWait); using the endpoint.\n"
                    : skipped.joined()
                        + usable.map {
                            "Found mirror '\($0.name)' at \($0.endpoint.absoluteString) on the local network (file content only, checked against the endpoint's listing).\n"
                        }.joined() + unused.joined()
            } catch {
                note = "warning: \(error.localizedDescription) Using the endpoint.\n"
            }
            StandardStreams.error(Data(note.utf8))
        }

        /// A manager for work that never needs the network (verifying, exporting): offline when the endpoint
        /// is unusable, so a bad HF_ENDPOINT never stops it.
        func cacheManager() -> ModelManager { ModelManager(managingCache: configuration) }
    }

    extension CacheOptions {
        /// `error` with a sentence added when it says `repo` is missing as `type` while the cache holds it as another
        /// type: `rm acme/corpus` with only the dataset cached names the dataset and the flag, not just "not cached".
        func explaining(_ error: any Error, _ repo: RepoID, asked type: RepoType) -> any Error {
            guard let error = error as? ModelDepotError, [.notCached, .repositoryNotFound].contains(error.code),
                let hint = otherTypeHint(repo, asked: type)
            else { return error }
            return error.withMessage("\(error.message) \(hint)")
        }

        /// "acme/corpus is cached as a dataset: add --repo-type dataset (or write datasets/acme/corpus)." when the
        /// cache holds `repo` only under other types than `type`; nil otherwise.
        func otherTypeHint(_ repo: RepoID, asked type: RepoType) -> String? {
            let cached = manager().cachedTypes(of: repo)
            guard !cached.contains(type), let other = cached.first else { return nil }
            let spelled = other == .model ? "models/\(repo)" : "\(other.apiSegment)/\(repo)"
            return
                "\(repo) is cached as a \(other.rawValue), not a \(type.rawValue): add --repo-type \(other.rawValue) (or write \(spelled))."
        }
    }
#endif
