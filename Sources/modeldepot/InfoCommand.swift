#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot

    struct InfoCommand: AsyncParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "Show a repository's files and sizes at a revision, and which are cached.",
            discussion: "Offline, the file list recorded at pull time is shown.")

        @Argument(help: "A repository id (org/name) or a catalog model name.")
        var repo: String

        @Option(help: "The branch, tag or commit (default: main, or the catalog entry's pinned revision).")
        var revision: String?

        @Option(name: .customLong("include"), help: "Only files matching this glob (repeatable).")
        var include: [String] = []

        @Option(name: .customLong("exclude"), help: "Skip files matching this glob (repeatable).")
        var exclude: [String] = []

        @Flag(help: "Print a JSON object.")
        var json = false

        @OptionGroup var hub: HubOptions

        @OptionGroup var catalogOptions: CatalogOptions

        struct Report: Encodable {
            /// One file; when it is cached and a model file, its header's fields beside it (`format`,
            /// `architecture`, `quantization`, `parameters`, `contextLength`, `tensorCount`, `dtypes`), or why the
            /// header cannot be read (`damaged`).
            struct File: Encodable {
                var path: String
                var size: Int64
                var sha256: String?
                var cached: Bool
                var header: ModelFileSummary?
                var damaged: String?
                /// When the file is a Python pickle: what loading it runs.
                var pickle: String?

                private enum CodingKeys: String, CodingKey { case path, size, sha256, cached, damaged, pickle }

                func encode(to encoder: any Encoder) throws {
                    var container = encoder.container(keyedBy: CodingKeys.self)
                    try container.encode(path, forKey: .path)
                    try container.encode(size, forKey: .size)
                    try container.encodeIfPresent(sha256, forKey: .sha256)
                    try container.encode(cached, forKey: .cached)
                    try container.encodeIfPresent(damaged, forKey: .damaged)
                    try container.encodeIfPresent(pickle, forKey: .pickle)
                    try header?.encode(to: encoder)
                }

                /// The header's line for people, or the damage.
                var formatText: String { header?.description ?? pickle ?? damaged.map { "damaged: \($0)" } ?? "" }
            }
            var catalogEntry: CatalogEntry?
            var id: String
            var type: String
            var revision: String
            var commit: String
            var files: [File]
            var totalSize: Int64
            var cachedSize: Int64
            var source: String
            /// The Hub's own security scan, when the endpoint reports one: its summary and the flagged files.
            var hubSecurityScan: [String: String]?
        }

        func run() async throws {
            let entry = repo.contains("/") ? nil : try catalogOptions.load().entry(named: repo)
            let reference = try entry == nil ? hub.cacheOptions.reference(repo) : nil
            let id = try entry?.repo ?? reference?.repo ?? RepoID(repo)
            let type = try entry?.repoType ?? reference?.type ?? hub.type()
            let revision = self.revision ?? reference?.revision ?? entry?.revision ?? "main"
            let models = try await hub.manager()
            let repository = hub.cache.repository(id, type: type)
            let selection = FileSelection(include: entry?.files ?? include, exclude: exclude)
            let listing: RepositoryListing
            do {
                listing = try await models.listing(id, type: type, revision: revision)
            } catch {
                throw hub.cacheOptions.explaining(error, id, asked: type)
            }
            let (commit, source) = (listing.commit, listing.source)
            var files = listing.files.filter { selection.selects($0.path) }.map { file in
                let path = try? RepoFilePath(file.path)
                let (header, damaged) =
                    path.map { Self.header(of: repository.snapshotFile(commit, $0).path) } ?? (nil, nil)
                return Report.File(
                    path: file.path, size: file.size, sha256: file.sha256,
                    cached: path.map { repository.hasFile($0, commit: commit) } ?? false, header: header,
                    damaged: damaged)
            }
            // Pickles, judged by their bytes: cached ones read, the others probed by their first bytes.
            do {
                let pickles = try await models.pickles(in: id, type: type, commit: commit, paths: files.map(\.path))
                for finding in pickles {
                    guard let index = files.firstIndex(where: { $0.path == finding.path }) else { continue }
                    files[index].pickle = finding.detail
                    files[index].damaged = nil
                }
            } catch {
                printStatus("pickle check skipped: \(error)")
            }
            let report = Report(
                catalogEntry: entry, id: id.description, type: type.rawValue, revision: revision, commit: commit,
                files: files,
                totalSize: files.reduce(0) { $0 + $1.size },
                cachedSize: files.filter(\.cached).reduce(0) { $0 + $1.size }, source: source,
                hubSecurityScan: (type == .model && source != "cache"
                    ? try? await hub.hubClient().securityScan(id, revision: commit) : nil).map { scan in
                        ["summary": scan.summary, "flagged": scan.filesWithIssues.map(\.path).joined(separator: ",")]
                    })
            if json {
                printJSON(report)
                return
            }
            if let entry {
                print("\(entry.name): \(entry.description)")
                var facts = [entry.format.rawValue, entry.capabilities.map(\.rawValue).joined(separator: ", ")]
                if let quantization = entry.quantization { facts.append(quantization) }
                if let context = entry.contextLength { facts.append("context \(context)") }
                if let dimensions = entry.embeddingDimensions { facts.append("\(dimensions) dimensions") }
                if let license = entry.license { facts.append("license \(license)") }
                print("  " + facts.joined(separator: " · "))
                print("  required for readiness: \(entry.required.joined(separator: ", "))")
            }
            print("\(report.id) (\(report.type)) @ \(revision) = \(commit)  [from \(source)]")
            let rows =
                [["FILE", "SIZE", "CACHED", "FORMAT"]]
                + files.map { [$0.path, ByteFormat.string($0.size), $0.cached ? "yes" : "no", $0.formatText] }
            print(Table.render(rows))
            if let scan = report.hubSecurityScan?["summary"] { print("Hub security scan: \(scan)") }
            print(
                "\(counted(files.count, "file")), \(ByteFormat.string(report.totalSize)) in all; \(ByteFormat.string(report.cachedSize)) cached."
            )
        }

        /// A cached model file's header, or why it cannot be read; both nil when absent or not a model file.
        static func header(of path: String) -> (ModelFileSummary?, String?) {
            guard FileManager.default.fileExists(atPath: path) else { return (nil, nil) }
            do {
                return (try ModelFileSummary.read(path: path), nil)
            } catch let error as ModelDepotError {
                return (nil, error.message)
            } catch {
                return (nil, "\(error)")
            }
        }
    }

    extension InfoCommand {
        var failuresAsJSON: Bool { json }
    }
#endif
