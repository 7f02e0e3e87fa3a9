#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot

    struct SearchCommand: AsyncParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "search", abstract: "Find repositories on the Hub whose id contains the query.")

        @Argument(help: "Text the repository id contains.")
        var query: String

        @Option(help: "Only repositories of this user or organisation.")
        var author: String?

        @Option(help: "The most results to show.")
        var limit: Int = 20

        @Flag(help: "Print a JSON array.")
        var json = false

        @OptionGroup var hub: HubOptions

        struct Result: Encodable {
            var id: String
            var downloads: Int?
            var likes: Int?
            var lastModified: String?
            var pipelineTag: String?
        }

        func validate() throws {
            guard limit > 0 else { throw ValidationError("--limit must be at least 1.") }
        }

        func run() async throws {
            let found = try await hub.hubClient().search(query, author: author, type: try hub.type(), limit: limit)
            let results = found.map {
                Result(
                    id: $0.id, downloads: $0.downloads, likes: $0.likes, lastModified: $0.lastModified,
                    pipelineTag: $0.pipelineTag)
            }
            if json {
                printJSON(results)
                return
            }
            if results.isEmpty {
                print("No repository matches '\(query)'.")
                return
            }
            let rows =
                [["REPO ID", "DOWNLOADS", "LIKES", "TASK"]]
                + results.map {
                    [
                        $0.id, $0.downloads.map(String.init) ?? "-", $0.likes.map(String.init) ?? "-",
                        $0.pipelineTag ?? "-",
                    ]
                }
            print(Table.render(rows))
        }
    }

    extension SearchCommand {
        var failuresAsJSON: Bool { json }
    }
#endif
