#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot

    struct ListCommand: ParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "ls",
            abstract: "List the cached repositories (also those Python's huggingface_hub downloaded).",
            discussion: "Sizes count each blob once per repository, as `hf cache scan` counts them."
        )

        @Option(help: "The cache folder (default: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub).")
        var cacheDir: String?

        var cache: HubCache { CacheOptions(cacheDir: cacheDir).cache }

        @Flag(help: "Print a JSON array with one object per repository.")
        var json = false

        @Option(
            help:
                "Only repositories that match (repeatable, all must): size>1GB, accessed>7d (last used over 7 days ago), modified<12h, files>=10."
        )
        var filter: [String] = []

        @Option(help: "Order by name, size, accessed, modified or files (largest/most recent first; :asc or :desc).")
        var sort: String?

        @Option(help: "At most this many repositories (after --filter and --sort).")
        var limit: Int?

        func run() throws {
            let filters = try filter.map(CacheFilter.init(parsing:))
            let order = try sort.map(CacheSort.init(parsing:))
            if let limit, limit < 0 {
                throw ModelDepotError(.invalidArgument, "--limit must be 0 or more (got \(limit)).")
            }
            var report = try CacheScanner(cache: cache).scan()
            let now = Date()
            var shown = report.repositories.filter { repository in
                filters.allSatisfy { $0.matches(repository, now: now) }
            }
            if let order { shown = order.sorted(shown) }
            if let limit { shown = Array(shown.prefix(limit)) }
            let filtered = shown.count != report.repositories.count
            report.repositories = shown
            if json {
                printJSON(report.repositories)
                return
            }
            print(Table.render(Self.rows(report)))
            let revisions = report.repositories.reduce(0) { $0 + $1.revisions.count }
            print(
                "\n\(counted(report.repositories.count, "repository", plural: "repositories"))\(filtered ? " shown" : ""), \(counted(revisions, "revision")), \(ByteFormat.string(report.repositories.reduce(0) { $0 + $1.sizeOnDisk })) on disk in \(cache.root.path)"
            )
            if !report.incompleteDownloads.isEmpty {
                print("\nIncomplete downloads (run the same pull again to resume):")
                for partial in report.incompleteDownloads {
                    let done = partial.bytesDownloaded.map { "\(ByteFormat.string($0)) downloaded" } ?? "partial"
                    print("  \(partial.repo)  \(partial.path)  (\(done))")
                }
            }
            for warning in report.warnings { StandardStreams.error(Data("warning: \(warning)\n".utf8)) }
        }

        static func rows(_ report: CacheReport) -> [[String]] {
            let header = ["REPO ID", "TYPE", "SIZE", "FILES", "LAST ACCESSED", "LAST MODIFIED", "REFS"]
            return [header]
                + report.repositories.map { repository in
                    let refs = repository.revisions.flatMap(\.refs).sorted().joined(separator: ", ")
                    return [
                        repository.id, repository.type, ByteFormat.string(repository.sizeOnDisk), "\(repository.files)",
                        Table.age(repository.lastAccessed), Table.age(repository.lastModified),
                        refs.isEmpty ? "(\(repository.revisions.count) detached)" : refs,
                    ]
                }
        }
    }

    /// Left-aligned columns separated by two spaces.
    enum Table {
        static func render(_ rows: [[String]]) -> String {
            guard let first = rows.first else { return "" }
            let widths = first.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
            return rows.map { row in
                row.enumerated().map { index, cell in
                    index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                }.joined(separator: "  ")
            }.joined(separator: "\n")
        }

        /// `just now`, `5 minutes ago`, `3 days ago`.
        static func age(_ date: Date, now: Date = Date()) -> String {
            let seconds = max(0, Int(now.timeIntervalSince(date)))
            let units: [(Int, String)] = [
                (86400 * 365, "year"), (86400 * 30, "month"), (86400, "day"), (3600, "hour"), (60, "minute"),
            ]
            for (size, name) in units where seconds >= size {
                let count = seconds / size
                return "\(count) \(name)\(count == 1 ? "" : "s") ago"
            }
            return "just now"
        }
    }

    /// Prints any encodable value as JSON on stdout (sorted keys, ISO-8601 dates).
    func printJSON(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(value) else { return }
        StandardStreams.output(data + Data("\n".utf8))
    }

    extension ListCommand {
        var failuresAsJSON: Bool { json }
    }
#endif
