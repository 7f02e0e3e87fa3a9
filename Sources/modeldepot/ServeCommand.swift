#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import Logging
    import ModelDepot
    import ModelDepotCore
    import ModelDepotHTTP
    import ModelDepotServer
    import ModelDepotWeb

    struct ServeCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Serve model folders over the Hub's HTTP API, for any Hub client on the network.",
            discussion: """
                Every ROOT/<org>/<name>/ folder is a model repository with a branch 'main'. Point clients at it with \
                HF_ENDPOINT=http://HOST:PORT. Prints 'listening on URL' once ready; SIGINT/SIGTERM stop it.

                With --upstream URL the mirror pulls through: what it does not hold it fetches from URL (a Hub, or \
                another mirror) into its Hub cache (--cache-dir), once however many clients ask, and streams it to them \
                as it arrives. GET /healthz answers while it runs; GET /metrics gives Prometheus counters.
                """
        )

        @Option(
            help: ArgumentHelp(
                "A file of settings, one 'name = value' a line, named as these flags are (root = /srv/models).",
                discussion:
                    "Every flag can also come from the environment as MODELDEPOT_SERVE_<NAME> (MODELDEPOT_SERVE_ALLOWED_HOST=a,b; switches take true or false). The command line wins over the environment, which wins over the file."
            ))
        var config: String?

        @Option(help: "A folder whose <org>/<name>/ sub-folders are served as model repositories.")
        var root: String?

        @Option(help: "A folder whose <org>/<name>/ sub-folders are served as dataset repositories.")
        var datasetRoot: String?

        @Flag(help: "Serve a Hub cache too: its repositories with their real commits and refs as revisions.")
        var cache = false

        @Option(
            help: "The Hub cache to serve with --cache (default: HF_HUB_CACHE, else HF_HOME/hub, as Python finds it).")
        var cacheDir: String?

        @Option(
            help:
                "Pull what the mirror lacks from this Hub (https://huggingface.co, or another mirror) into --cache-dir."
        )
        var upstream: String?

        @Option(
            help:
                "A file holding the token the mirror sends its upstream (for gated or private repositories); needs --token-file."
        )
        var upstreamTokenFile: String?

        @Option(help: "Seconds a branch's commit is trusted before the upstream is asked again.")
        var branchTtl: Double = 60

        @Option(
            help:
                "With --upstream: keep the mirror's cache under this size (e.g. 500GB), evicting least recently used models; never pinned ones or those in use."
        )
        var maxSize: String?

        @Option(
            name: .customLong("allowed-host"),
            help: ArgumentHelp(
                "A name clients use to reach the mirror (repeatable): a reverse proxy's public name, a LAN alias.",
                discussion:
                    "Without a token the mirror answers only requests addressed to localhost, an IP address or this machine's own name (and its .local name), so a web page cannot reach it through DNS rebinding; other names get 421."
            ))
        var allowedHosts: [String] = []

        @Option(help: "With --upstream: the most files pulled from the upstream at once; more wait in a queue.")
        var maxUpstreamPulls = 8

        @Option(help: "With --upstream: the most pulls waiting for a turn; past it clients get 429 with Retry-After.")
        var maxQueuedPulls = 64

        @Option(
            help:
                "With --upstream: the most pulls one client address may have started at once (raise it behind nginx, which is one client)."
        )
        var maxPullsPerClient = 16

        @Option(
            help:
                "With --upstream: seconds a pull nobody follows any more goes on before it is cancelled (its bytes are kept, and the next request resumes it)."
        )
        var abandonedPullGrace: Double = 30

        @Flag(
            help: "With --upstream: finish pulls that every client has stopped following, instead of cancelling them.")
        var finishAbandonedPulls = false

        @Option(
            help:
                "Seconds a stop (SIGTERM, Ctrl-C) waits for responses in flight before it closes their connections; the process exits within 2 s after. The default ends a stop inside a service manager's 30 s grace period. A second signal exits at once."
        )
        var drainTimeout: Double = 20

        @Option(help: "The address to listen on.")
        var host: String = "127.0.0.1"

        @Flag(
            help: """
                Announce the mirror on the local network with DNS-SD (_hf-mirror._tcp), so clients with --discover \
                find it. Needs Bonjour (Apple platforms) or avahi-daemon with Avahi's libdns_sd (Linux).
                """)
        var advertise = false

        @Option(help: "With --advertise: the name to announce (default: 'modeldepot on HOSTNAME').")
        var advertiseName: String?

        @Option(help: "The port (0 picks a free one).")
        var port: Int = 8080

        @Option(help: "A file holding a token clients must send as 'Authorization: Bearer <token>' (HF_TOKEN).")
        var tokenFile: String?

        @OptionGroup var tlsOptions: TLSOptions

        @Option(
            help: """
                Misbehave on purpose, to test download UIs: reset=P, status503=P, stall=P (P a probability or Nx for \
                the first N ranged requests) and rate=4MB, comma-separated. Off by default.
                """)
        var faults: String?

        @Option(help: "The most client connections served at once; more wait until one closes.")
        var maxConnections: Int = 1024

        @Option(help: "Seconds a connection may sit without sending a complete request before it is closed.")
        var idleTimeout: Double = 30

        @Flag(
            help: """
                Serve a dashboard at /ui: cached repositories, pulls in flight, bytes served, cache hits, upstream \
                copies, evictions, clients. Anyone who passes --token-file's check may read it; pin and evict need \
                --admin-token-file.
                """)
        var ui = false

        @Flag(
            help: """
                Offer files through Xet too, as the Hub does: every served file's Xet index is built in the \
                background at start and again within seconds of a change (plain HTTP until it is ready), resolves \
                carry X-Xet-Hash, the xet-read-token route issues read tokens, and a CAS answers at /xet; /metrics \
                counts indexed and pending files. Off by default.
                """)
        var xet = false

        @Flag(
            help: """
                With --xet: take uploads as the Hub's CAS does, so hf_xet can write into this mirror as into a test \
                store. The xet-write-token route issues write tokens behind --token-file (required); \
                xorbs are checked against their hashes and files against their chunks; at most 16 GiB is kept, \
                and uploaded files are read back through Xet, not listed as repository files.
                """)
        var xetUploads = false

        @Option(help: "With --ui: a file holding the token that allows pinning and evicting from the dashboard.")
        var adminTokenFile: String?

        @Flag(
            help: """
                Diagnostic: read files at rest through the server instead of sending them with sendfile (bench/server.sh \
                compares the two).
                """)
        var noSendfile = false

        func validate() throws {
            guard root != nil || datasetRoot != nil || cache || upstream != nil else {
                throw ValidationError(
                    "Give --root DIR, --dataset-root DIR, --cache, --upstream URL, or several of them.")
            }
            if xetUploads, !xet { throw ValidationError("--xet-uploads takes uploads through Xet: add --xet.") }
            if xetUploads, tokenFile == nil {
                throw ValidationError(
                    "--xet-uploads lets whoever may get a write token fill the disk: give --token-file so only "
                        + "clients with the mirror's token can.")
            }
            if let upstream {
                guard let url = URL(string: upstream), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                    url.host?.isEmpty == false
                else {
                    throw ValidationError(
                        "--upstream '\(upstream)' is not a Hub URL; give one like https://huggingface.co.")
                }
                guard upstreamTokenFile == nil || tokenFile != nil else {
                    throw ValidationError(
                        "--upstream-token-file needs --token-file: a mirror that fetches gated or private repositories with your token must require a token from its clients too."
                    )
                }
                guard branchTtl >= 0, branchTtl.isFinite else {
                    throw ValidationError("--branch-ttl must be 0 or more seconds.")
                }
                try FileManager.default.createDirectory(at: cacheFolder, withIntermediateDirectories: true)
                if let maxSize { _ = try ByteSize.parse(maxSize) }
            } else if upstreamTokenFile != nil || maxSize != nil {
                throw ValidationError(
                    "\(upstreamTokenFile != nil ? "--upstream-token-file" : "--max-size") is for --upstream; give the upstream's URL too."
                )
            }
            for folder in [root, datasetRoot, cache || upstream != nil ? cacheFolder.path : nil].compactMap({ $0 }) {
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                    let name = folder == root ? "--root" : folder == datasetRoot ? "--dataset-root" : "The cache"
                    throw ValidationError("\(name) \(folder) is not a folder.")
                }
            }
            guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
            let loopback = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]."))
            if advertise, loopback.hasPrefix("127.") || loopback == "::1" || loopback == "localhost" {
                throw ValidationError(
                    "--advertise tells the local network where the mirror is, but --host \(host) answers only this machine: give --host 0.0.0.0 or the machine's LAN address."
                )
            }
            if let advertiseName {
                guard advertise else { throw ValidationError("--advertise-name is for --advertise: give it too.") }
                guard !advertiseName.isEmpty, advertiseName.utf8.count <= 63 else {
                    throw ValidationError("--advertise-name must be 1 to 63 bytes (one DNS label).")
                }
            }
            guard adminTokenFile == nil || ui else {
                throw ValidationError("--admin-token-file is for the dashboard: give --ui too.")
            }
            guard maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1.") }
            guard maxUpstreamPulls >= 1, maxQueuedPulls >= 0, maxPullsPerClient >= 1 else {
                throw ValidationError(
                    "--max-upstream-pulls and --max-pulls-per-client must be at least 1, --max-queued-pulls at least 0."
                )
            }
            guard drainTimeout >= 0, drainTimeout.isFinite else {
                throw ValidationError("--drain-timeout must be a number of seconds, 0 or more.")
            }
            guard abandonedPullGrace >= 0, abandonedPullGrace.isFinite else {
                throw ValidationError("--abandoned-pull-grace must be a number of seconds, 0 or more.")
            }
            for name in allowedHosts where name.isEmpty || name.contains("/") || name.contains(" ") {
                throw ValidationError("--allowed-host '\(name)' is not a host name; give one like models.example.com.")
            }
            guard idleTimeout > 0, idleTimeout.isFinite else {
                throw ValidationError("--idle-timeout must be a positive number of seconds.")
            }
        }

        var cacheFolder: URL {
            cacheDir.map { URL(fileURLWithPath: $0).standardizedFileURL } ?? HubEnvironment().cacheDirectory
        }

        static func readToken(from file: String) throws -> String {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ValidationError("Cannot read the token file \(file).")
            }
            let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty else { throw ValidationError("The token file \(file) is empty.") }
            return token
        }

        func run() async throws {
            // The access log is written off the request path (one line per request, every line kept).
            LoggingSystem.bootstrap { BufferedLogStream.Handler(label: $0) }
            let token = try tokenFile.map(Self.readToken)
            let roots = root.map { [URL(fileURLWithPath: $0).standardizedFileURL] } ?? []
            let datasetRoots = datasetRoot.map { [URL(fileURLWithPath: $0).standardizedFileURL] } ?? []
            var server: MirrorServer
            if let upstream, let url = URL(string: upstream) {
                let settings = Upstream(
                    endpoint: url, token: try upstreamTokenFile.map(Self.readToken),
                    branchTTL: .milliseconds(Int64(branchTtl * 1000)),
                    maxCacheSize: try maxSize.map(ByteSize.parse),
                    pullLimits: PullLimits(
                        concurrent: maxUpstreamPulls, queued: maxQueuedPulls,
                        abandonedGrace: finishAbandonedPulls
                            ? nil : .milliseconds(Int64(abandonedPullGrace * 1000)),
                        perClient: maxPullsPerClient))
                server = try MirrorServer(
                    upstream: settings, cache: cacheFolder, roots: roots, datasetRoots: datasetRoots, token: token)
            } else {
                server = MirrorServer(
                    roots: roots, datasetRoots: datasetRoots, caches: cache ? [cacheFolder] : [], token: token)
            }
            server.maxConnections = maxConnections
            server.allowedHosts = allowedHosts
            server.sendsFilesWithSendfile = !noSendfile
            if let faults {
                do {
                    server.faults = try ServedFaults(faults)
                } catch let error as ServedFaultsError {
                    throw ValidationError(error.message)
                }
            }
            let warning = server.faults.map { " (injecting faults on purpose: \($0))" } ?? ""
            server.idleTimeout = .milliseconds(Int64(idleTimeout * 1000))
            server.tls = try tlsOptions.serverTLS()
            if xet {
                // Beside the mirror's other state: the first folder served, or the cache.
                let first = roots.first ?? datasetRoots.first ?? cacheFolder
                server.enableXet(folder: first.appendingPathComponent(".modeldepot/xet"), acceptsUploads: xetUploads)
            }
            if ui {
                let adminToken = try adminTokenFile.map(Self.readToken)
                if let adminToken, adminToken == token {
                    throw ValidationError("The admin token must differ from the clients' token (--token-file).")
                }
                var app = try await MirrorDashboardApp(
                    source: server.dashboard, readToken: token, adminToken: adminToken)
                app.servedOverTLS = server.tls != nil
                let dashboard = app
                server.mount("/ui", onDrain: dashboard.closeStreams) { dashboard.addRoutes(to: $0) }
            }
            let ui = self.ui
            server.drainTimeout = .milliseconds(Int64(drainTimeout * 1000))
            server.onStuckStop = { ExitCleanup.exit(0) }
            SecondSignal.exitsAtOnce()
            let announcement =
                advertise
                ? MirrorAnnouncement(tokenRequired: token != nil, scheme: server.tls == nil ? "http" : "https") : nil
            let advertised = AdvertisementHolder()
            let name = advertiseName ?? MirrorAdvertisement.defaultName
            defer { advertised.stop() }
            // Loaded now, before the server's threads start: loading Avahi's library sets a variable.
            if advertise, !MirrorDiscovery.isAvailable {
                StandardStreams.error(
                    Data("warning: cannot announce the mirror on the local network: no DNS-SD library here.\n".utf8))
            }
            if announcement?.scheme == "https" {
                StandardStreams.error(
                    Data(
                        "warning: clients that find the mirror on the LAN reach it by IP address: its certificate must name that address, or they pass it by.\n"
                            .utf8))
            }
            try await server.run(host: host, port: port) { url in
                // Written straight to the descriptor so a parent process reading the pipe sees it at once.
                StandardStreams.output(Data("listening on \(url.absoluteString)\(warning)\n".utf8))
                if ui { StandardStreams.output(Data("dashboard at \(url.absoluteString)/ui\n".utf8)) }
                if let announcement, let port = url.port {
                    // Announced once it listens, withdrawn when it stops, off the listening callback (the daemon may
                    // be slow to answer). A failure only tells the LAN less: the mirror serves on, saying so.
                    Task { await advertised.start(name: name, port: UInt16(port), announcement: announcement) }
                }
            }
        }
    }
#endif
