#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot

    /// `modeldepot env`: what a person debugging a network or a cache needs, in one place — the endpoint and mirrors,
    /// which proxy each request goes through after `no_proxy`, the certificate authorities in use, the cache, and
    /// whether a token is there and where from (never its value).
    struct EnvCommand: ParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "env",
            abstract: "Show the endpoint, proxies, certificate authorities, cache and token source in use.",
            discussion: """
                Proxies come from https_proxy, http_proxy, all_proxy and no_proxy (lower case first, then upper case, \
                as Python reads them) or --proxy; certificate authorities from SSL_CERT_FILE, SSL_CERT_DIR, \
                REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE or --ca-cert, added to the system's store. The token's value is \
                never printed.
                """)

        @Flag(help: "Print a JSON object.")
        var json = false

        @OptionGroup var hub: HubOptions

        var failuresAsJSON: Bool { json }

        struct Report: Encodable {
            /// A host the client talks to and how: `direct`, or the proxy (without credentials).
            struct Route: Encodable {
                var role: String
                var url: String
                var proxy: String
            }

            /// Which Hub, and what of it is on this machine.
            struct Hub: Encodable {
                var endpoint: String
                var offline: Bool
                var cache: String
                /// Where the token comes from, never its value.
                var token: String
            }

            /// How requests leave the machine.
            struct Network: Encodable {
                var routes: [Route]
                var noProxy: String?
                /// Where certificates are trusted from: the system's store (as NIOSSL finds it), then what was added.
                var certificateAuthorities: [String]
                var insecure: Bool
            }

            var hub: Hub
            var network: Network
        }

        /// Hosts the Hub at huggingface.co sends downloads to (its CDNs), besides the endpoint itself.
        static let hubDownloadHosts = [
            "https://cdn-lfs.huggingface.co", "https://cdn-lfs-us-1.hf.co", "https://cas-bridge.xethub.hf.co",
        ]

        func run() throws {
            let environment = hub.environment
            let network = try hub.network()
            var routes: [Report.Route] = []
            func route(_ role: String, _ url: String) {
                let proxy = URL(string: url).flatMap(network.proxies.proxy(for:))
                let shown = URL(string: url).map(URLRedaction.redacted) ?? url
                routes.append(Report.Route(role: role, url: shown, proxy: proxy?.description ?? "direct"))
            }
            route("endpoint", environment.endpoint)
            if URL(string: environment.endpoint)?.host == "huggingface.co" {
                for host in Self.hubDownloadHosts { route("downloads (CDN)", host) }
            }
            for mirror in try environment.mirrors() { route("mirror", mirror.endpoint.absoluteString) }
            let variables = ProcessInfo.processInfo.environment
            let noProxy =
                ProxySettings.variable("no_proxy", in: variables).map { "\($0.name)=\($0.value)" }
            let report = Report(
                hub: Report.Hub(
                    endpoint: URL(string: environment.endpoint).map(URLRedaction.redacted) ?? environment.endpoint,
                    offline: environment.isOffline, cache: hub.cache.root.path,
                    token: Self.describe(environment)),
                network: Report.Network(
                    routes: routes, noProxy: noProxy,
                    certificateAuthorities: [
                        "the system's store (NIOSSL: /etc/ssl/certs and the platform's usual files)"
                    ]
                        + network.trust.additional.map { "\($0.path) (\($0.origin))" },
                    insecure: network.trust.insecure))
            if json {
                printJSON(report)
                return
            }
            let (hubReport, networkReport) = (report.hub, report.network)
            var lines = [
                "endpoint: \(hubReport.endpoint)\(hubReport.offline ? " (offline mode: the network is not used)" : "")"
            ]
            for route in networkReport.routes { lines.append("\(route.role): \(route.url) → \(route.proxy)") }
            lines.append("no_proxy: \(networkReport.noProxy ?? "(not set)")")
            lines.append("certificate authorities: " + networkReport.certificateAuthorities.joined(separator: "; "))
            if networkReport.insecure { lines.append("TLS verification: OFF (--insecure)") }
            lines.append("cache: \(hubReport.cache)")
            lines.append("token: \(hubReport.token)")
            StandardStreams.output(Data((lines.joined(separator: "\n") + "\n").utf8))
        }

        /// Whether a token is there and where it came from, never the token.
        static func describe(_ environment: HubEnvironment) -> String {
            if environment.explicitToken != nil { return "given with --token" }
            switch environment.tokenOrigin {
            case .variable(let name): return "from \(name)"
            case .file(let url): return "from the token file \(url.path)"
            case .disabled: return "none (HF_HUB_DISABLE_IMPLICIT_TOKEN is set)"
            case .none: return "none"
            }
        }
    }
#endif
