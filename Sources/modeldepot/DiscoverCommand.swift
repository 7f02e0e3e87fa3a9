#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot

    struct DiscoverCommand: AsyncParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "discover",
            abstract: "List the mirrors that announce themselves on the local network (DNS-SD, _hf-mirror._tcp).",
            discussion: """
                What `pull --discover` would use: a mirror that wants a token is listed but never used that way \
                (name it with --mirror). Needs Bonjour (Apple platforms) or avahi-daemon with Avahi's libdns_sd \
                (Linux).
                """)

        @Option(help: "Seconds to wait for a first answer.")
        var wait: Double = 2

        @Flag(help: "Print a JSON array.")
        var json = false

        struct Found: Encodable {
            var name: String
            var endpoint: String
            var tokenRequired: Bool
        }

        func validate() throws {
            guard wait > 0, wait <= 60 else {
                throw ValidationError("--wait takes more than 0 and at most 60 seconds.")
            }
        }

        func run() async throws {
            let mirrors = try await MirrorDiscovery.find(within: .milliseconds(Int64(wait * 1000)))
            let found = mirrors.map {
                Found(name: $0.name, endpoint: $0.endpoint.absoluteString, tokenRequired: $0.tokenRequired)
            }
            if json {
                printJSON(found)
                return
            }
            guard !found.isEmpty else {
                print("No mirror answered on the local network within \(wait) s.")
                return
            }
            let rows =
                [["NAME", "ENDPOINT", "TOKEN"]]
                + found.map { [$0.name, $0.endpoint, $0.tokenRequired ? "required" : "none"] }
            print(Table.render(rows))
        }
    }

    extension DiscoverCommand {
        var failuresAsJSON: Bool { json }
    }
#endif
