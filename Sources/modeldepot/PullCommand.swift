#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot
    import ModelDepotOCI

    struct PullCommand: AsyncParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "pull",
            abstract: "Download a model repository into the shared cache, or one file from a URL.",
            discussion: """
                With a repository id (org/name), the files of the revision that match --include/--exclude are \
                downloaded into the Hugging Face cache layout (the same cache Python's huggingface_hub uses), each \
                verified, and the last line on stdout is the snapshot folder. With an http(s) URL, one file is \
                downloaded and the last line is its path. With oci://, a CNCF ModelPack artifact is pulled from a \
                registry into the same cache. With --locked FILE, exactly the files a lock names. Interrupted \
                downloads resume when the command runs again.
                """
        )

        @Argument(
            help:
                "A catalog model or preset name (see `modeldepot catalog`), a repository id (org/name), a hf:// URI (hf://org/name, hf://datasets/org/name@revision/path), an OCI artifact (oci://registry/repository:tag or @sha256:DIGEST), or an http(s) URL; none with --locked FILE."
        )
        var source: String = ""

        @Option(help: "Pull exactly what this lock file names (see `modeldepot lock`), refusing any difference.")
        var locked: String?

        @Argument(help: "Repository: files or folders to pull (as `hf download REPO FILE…`); every file when omitted.")
        var files: [String] = []

        @Option(help: "Repository: the branch, tag or commit (default: main).")
        var revision: String?

        @Option(
            name: .customLong("include"), help: "Repository: only files matching this glob (repeatable; * crosses /).")
        var include: [String] = []

        @Option(name: .customLong("exclude"), help: "Repository: skip files matching this glob (repeatable).")
        var exclude: [String] = []

        @OptionGroup var hub: HubOptions

        @OptionGroup var registry: RegistryOptions

        @OptionGroup var catalogOptions: CatalogOptions

        @Option(
            name: .shortAndLong, help: "Where to save the file (default: the URL's file name in the current folder).")
        var output: String?

        @Option(help: "The SHA-256 the file must have (64 hex characters).")
        var sha256: String?

        @Option(help: "The most connections to use at once (1-64); fewer are used while more do not add speed.")
        var connections: Int = 16

        @Option(
            help:
                "Connections to open at first (default 4, at most --connections); more are added while they add speed.")
        var initialConnections: Int?

        @Option(
            help:
                "The most bytes per second across every connection and file, like 20MB (10^6 bytes) or 8MiB (2^20).")
        var maxRate: String?

        @Option(
            help:
                "Repository: the most files in flight at once (default: 8 large files, up to 16 when the rest are small)."
        )
        var maxWorkers: Int?

        @Option(
            help:
                "Repository: download into this folder instead of the cache (as hf download --local-dir); files it already holds for the commit are kept."
        )
        var localDir: String?

        @Flag(
            help:
                "Repository: fetch the files again even when they are cached; with --local-dir, also replace files there that no pull wrote."
        )
        var forceDownload = false

        @Flag(help: "Repository: list what would be downloaded, its size and the free space after; download nothing.")
        var dryRun = false

        @Option(
            help: """
                Repository: fetch the files the endpoint stores in Xet through Xet: auto (where offered; by HTTP \
                when Xet fails, said once), never, or always (a Xet failure fails the pull).
                """)
        var xet: XetMode = .auto

        @Flag(help: "Flush the file to disk before moving it into place (survives power loss; slower).")
        var fsync = false

        @Option(
            help:
                "Diagnostic: the HTTP stack, urlsession (Foundation's URLSession) or ahc (async-http-client); default: the platform's (URLSession on Apple platforms, ahc elsewhere)."
        )
        var transport: TransportChoice?

        enum TransportChoice: String, ExpressibleByArgument, CaseIterable {
            case urlsession, ahc

            /// The stack, with the network flags' proxies and certificate authorities where it is async-http-client
            /// (URLSession follows the system's settings, and libcurl's variables on Linux).
            func transport(_ network: NetworkSettings) -> any HTTPTransport {
                switch self {
                case .urlsession: return URLSessionTransport.shared
                case .ahc:
                    #if MODELDEPOT_SERVER_STACK
                        return AsyncHTTPTransport.shared(for: network)
                    #else
                        return URLSessionTransport.shared
                    #endif
                }
            }
        }

        @Flag(
            help:
                "Refuse a model unless its signature (OpenSSF Model Signing) is --trusted-key's and covers exactly its files."
        )
        var requireSignature = false

        @OptionGroup var signature: SignatureOptions

        @Flag(
            help:
                "Refuse to download Python pickles (raw, or PyTorch ZIP checkpoints), which can run code when loaded; judged by each file's first bytes."
        )
        var refusePickle = false

        var policy: DownloadPolicy { DownloadPolicy(refusePickle: refusePickle) }

        @Flag(
            help: """
                oci://: take the registry's word that an artifact is the Hub commit it names, where the Hub cannot \
                confirm its files (by default they are checked against the Hub's listing of that commit).
                """)
        var trustRegistry = false

        @OptionGroup var outputOptions: OutputOptions

        func validate() throws {
            if locked != nil {
                guard source.isEmpty, files.isEmpty, include.isEmpty, exclude.isEmpty, revision == nil, localDir == nil
                else {
                    throw ValidationError(
                        "--locked pulls what the lock names; give no model, files, globs, --revision or --local-dir.")
                }
            } else if source.isEmpty {
                throw ValidationError(
                    "Give a model to pull (a catalog name, org/name, hf:// URI or URL), or --locked FILE.")
            }
            guard (1...64).contains(connections) else {
                throw ValidationError("--connections must be between 1 and 64 (got \(connections)).")
            }
            if let maxRate { _ = try Self.rate(maxRate) }
            if let initialConnections, !(1...64).contains(initialConnections) {
                throw ValidationError("--initial-connections must be between 1 and 64 (got \(initialConnections)).")
            }
            if let maxWorkers, !(1...64).contains(maxWorkers) {
                throw ValidationError("--max-workers must be between 1 and 64 (got \(maxWorkers)).")
            }
            if requireSignature, (isURL && !isOCI) || locked != nil || localDir != nil {
                throw ValidationError(
                    "--require-signature applies to repositories pulled into the cache, not to URLs, --locked or --local-dir."
                )
            }
            try signature.validate(checking: requireSignature, flag: "--require-signature")
            if trustRegistry, !isOCI {
                throw ValidationError("--trust-registry applies to oci:// artifacts.")
            }
            if isOCI {
                guard revision == nil, include.isEmpty, exclude.isEmpty, files.isEmpty, output == nil, sha256 == nil,
                    !dryRun, maxWorkers == nil
                else {
                    throw ValidationError(
                        "An oci:// artifact is pulled whole: --revision, --include, --exclude, file names, --output, --sha256, --dry-run and --max-workers do not apply (name a tag or digest in the reference)."
                    )
                }
                return
            }
            // Which flags go with which source is a usage error, found before anything runs (one channel for flags).
            if isURL {
                guard revision == nil, include.isEmpty, exclude.isEmpty, files.isEmpty, maxWorkers == nil,
                    !forceDownload,
                    !dryRun, localDir == nil
                else {
                    throw ValidationError(
                        "--revision, --include, --exclude, file names, --max-workers, --force-download, --dry-run and --local-dir apply to repositories (org/name), not URLs; use --output for a URL."
                    )
                }
            } else if output != nil || sha256 != nil {
                throw ValidationError(
                    "--output and --sha256 apply to URL downloads; a repository goes into the cache (see --cache-dir).")
            }
        }

        /// The engine flags laid over the library's configuration (the one place the engine is built).
        func tune(_ configuration: inout ModelManager.Configuration) throws {
            if let transport {
                if transport == .urlsession, hub.proxy != nil || !hub.caCerts.isEmpty || hub.insecure {
                    throw ValidationError(
                        "--transport urlsession follows the system's proxy and certificate settings: --proxy, --ca-cert and --insecure apply to the default transport only."
                    )
                }
                configuration.transport = transport.transport(try hub.network())
            }
            configuration.maxConnectionsPerPull = connections
            // Asked for more than the per-host default: a pull from one host may use them all.
            configuration.maxConnectionsPerHost = max(configuration.maxConnectionsPerHost, connections)
            configuration.engine.initialConnections = min(
                initialConnections ?? configuration.engine.initialConnections, connections)
            configuration.engine.syncBeforeRename = fsync
            configuration.bandwidth.bytesPerSecond = try maxRate.map(Self.rate)
            if let maxWorkers {
                configuration.maxConcurrentFiles = maxWorkers
                configuration.maxConcurrentSmallFiles = maxWorkers
            }
        }

        /// `20MB`, `20MB/s`, `8MiB` as bytes per second (MB = 10⁶ bytes, MiB = 2²⁰).
        static func rate(_ text: String) throws -> Int64 {
            let trimmed = text.lowercased().hasSuffix("/s") ? String(text.dropLast(2)) : text
            let bytes: Int64
            do {
                bytes = try ByteSize.parse(trimmed)
            } catch {
                throw ValidationError(
                    "--max-rate '\(text)' is not a rate: write it like 20MB (10^6 bytes a second) or 8MiB.")
            }
            guard bytes >= 1024 else {
                throw ValidationError("--max-rate '\(text)' is below 1KB a second; give at least 1KB.")
            }
            return bytes
        }

        var isURL: Bool { source.contains("://") && !HubReference.isURI(source) }

        /// Whether the source is an artifact in an OCI registry (`oci://…`).
        var isOCI: Bool { OCIReference.names(source) }

        func run() async throws {
            let renderer = outputOptions.renderer
            if let locked {
                try await pullLocked(locked)
                return
            }
            do {
                if isOCI {
                    try await pullOCI(renderer: renderer)
                } else if isURL {
                    try await pullURL(renderer: renderer)
                } else {
                    try await pullRepository(renderer: renderer)
                }
            } catch {
                // A failure starts on a fresh line, below the progress bar.
                renderer.finishLine()
                throw error
            }
        }

        func pullRepository(renderer: ProgressRenderer) async throws {
            if !source.contains("/"), let entries = try catalogOptions.load().resolve(source) {
                try await pullCatalogEntries(entries, renderer: renderer)
                return
            }
            let reference: HubReference
            do {
                reference = try hub.cacheOptions.reference(source)
            } catch let error as ModelDepotError where !HubReference.isURI(source) && !HubReference.namesType(source) {
                throw ModelDepotError(
                    .invalidArgument,
                    "'\(source)' is neither a catalog name, a repository id, a hf:// URI nor an http(s) URL: \(error.message)"
                )
            }
            if let revision, let named = reference.revision, revision != named {
                throw ModelDepotError(
                    .invalidArgument,
                    "'\(source)' names revision '\(named)' and --revision says '\(revision)'; give one.")
            }
            let named = files + (reference.path.map { [$0] } ?? [])
            var request = SnapshotRequest(
                repo: reference.repo, type: reference.type, revision: revision ?? reference.revision ?? "main",
                include: include, exclude: exclude, files: named.isEmpty ? nil : named, forceDownload: forceDownload,
                localDirectory: localDir.map {
                    LocalDirectory(
                        URL(
                            fileURLWithPath: $0.hasPrefix("~/") ? NSHomeDirectory() + $0.dropFirst() : $0,
                            relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)))
                })
            request.xet = xet
            // A dry run lists from the endpoint and fetches nothing: no mirror on the LAN would be asked.
            let models = try await manager(fetchesHubFiles: !dryRun)
            if dryRun {
                try await render(models.plan(request), request, with: models)
                return
            }
            renderer.finish(try await download(request, with: models, renderer: renderer), named: !named.isEmpty)
        }

        /// Downloads `request` under the policy the flags ask for; with `--require-signature` the library fetches the
        /// signature first, refuses before the weights when it is missing or not the trusted publisher's, and publishes
        /// the snapshot only once its files match (a refused pull leaves the cache as it was, and no snapshot folder is
        /// printed).
        func download(_ request: SnapshotRequest, with models: ModelManager, renderer: ProgressRenderer) async throws
            -> Snapshot
        {
            var policy = self.policy
            policy.signature = try signature.trust().map {
                SignatureRequirement(trust: $0, path: signature.signaturePath)
            }
            let snapshot = try await models.download(request, policy: policy).follow(rendering: renderer)
            if let check = snapshot.signatureCheck {
                renderer.finishLine()
                printStatus(
                    "signature: \(counted(check.signed.files.count, "file")) signed by the trusted publisher match (\(check.reusedDigests) digests from the download, \(ByteFormat.string(check.bytesHashed)) hashed)"
                )
            }
            return snapshot
        }

        /// The library's manager, with the engine tuned by the flags. `fetchesHubFiles`: the pull fetches a
        /// repository's files, which mirrors found on the LAN may serve (`--discover`); not a URL's or a registry's,
        /// and not a dry run's.
        func manager(fetchesHubFiles: Bool = true) async throws -> ModelManager {
            try await hub.manager(pulling: fetchesHubFiles, tune)
        }
    }

    extension PullCommand {
        var failuresAsJSON: Bool { outputOptions.json }
    }

    extension XetMode: ExpressibleByArgument {}
#endif
