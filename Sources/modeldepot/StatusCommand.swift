#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot

    struct StatusCommand: ParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract:
                "Tell whether models are ready to load: ready, notDownloaded, partial, corrupt, downloading or unverified.",
            discussion: """
                A catalog name checks that entry's files and every path it requires; org/name checks the whole \
                repository at its cached revision (every file recorded at pull time), narrowed by --include. \
                Formats are checked from file headers (GGUF, safetensors, Core ML); hashes are remembered from pulls \
                and `verify`, and --verify hashes what was never verified. Without names: every cached repository. \
                Exits 0 when every model asked about can be loaded (ready, or unverified: present and well-formed \
                but not hashed yet), 1 when one cannot (not downloaded, partial, downloading or corrupt); --verify \
                hashes the unverified files, and a mismatch makes them corrupt.
                """)

        @Argument(help: "Catalog model names or repository ids (org/name).")
        var names: [String] = []

        @Option(help: "The branch, tag or commit for repository ids (default: main).")
        var revision: String = "main"

        @Option(name: .customLong("include"), help: "Only files matching this glob (repeatable; repository ids only).")
        var include: [String] = []

        @Flag(help: "Hash files that were never verified (and remember the result).")
        var verify = false

        @Flag(help: "Print a JSON array with one object per model.")
        var json = false

        @OptionGroup var cacheOptions: CacheOptions

        @OptionGroup var catalogOptions: CatalogOptions

        struct Output: Encodable {
            var name: String
            var repo: String
            var revision: String
            var commit: String?
            var status: String
            var missing: [String]?
            var corrupt: [String: String]?
            var unverified: [String]?
            var files: [String]
            var details: [String: String]
            var path: String?
            /// Set when the repository is not cached as the type asked for but is as another: the flag to use.
            var hint: String?
        }

        func run() throws {
            let checker = ReadinessChecker(cache: cacheOptions.cache)
            var reports: [ReadinessReport] = []
            var hints: [Int: String] = [:]
            if names.isEmpty {
                let cached =
                    FileManager.default.fileExists(atPath: cacheOptions.cache.root.path)
                    ? try CacheScanner(cache: cacheOptions.cache).scan().repositories : []
                for repository in cached {
                    guard let id = repository.repoID, let type = repository.repoType else { continue }
                    let revision = repository.revisions.first { $0.refs.contains("main") } ?? repository.revisions.first
                    reports.append(
                        try checker.check(
                            id, type: type, revision: revision?.commit ?? "main",
                            selection: FileSelection(include: include), verifying: verify))
                }
            } else {
                let catalog = try catalogOptions.load()
                for name in names {
                    if !name.contains("/"), let entries = catalog.resolve(name) {
                        reports += try entries.map { try checker.check($0, verifying: verify) }
                    } else {
                        let reference = try cacheOptions.reference(name)
                        hints[reports.count] = cacheOptions.otherTypeHint(reference.repo, asked: reference.type)
                        reports.append(
                            try checker.check(
                                reference.repo, type: reference.type, revision: reference.revision ?? revision,
                                selection: FileSelection(include: include + (reference.path.map { [$0] } ?? [])),
                                verifying: verify))
                    }
                }
            }
            if json {
                printJSON(
                    reports.enumerated().map { index, report in
                        var output = Self.output(report)
                        output.hint = hints[index]
                        return output
                    })
            } else {
                for (index, report) in reports.enumerated() {
                    print(Self.describe(report))
                    if let hint = hints[index] { print("  \(hint)") }
                }
                if reports.isEmpty { print("Nothing is cached in \(cacheOptions.cache.root.path).") }
            }
            if !reports.allSatisfy(\.readiness.isLoadable) { throw ExitCode(1) }
        }

        static func output(_ report: ReadinessReport) -> Output {
            var output = Output(
                name: report.name, repo: report.repo.description, revision: report.revision, commit: report.commit,
                status: report.readiness.name, files: report.files, details: report.details, path: report.folder?.path)
            switch report.readiness {
            case .partial(let missing), .downloading(let missing): output.missing = missing
            case .corrupt(let files): output.corrupt = files
            case .unverified(let files): output.unverified = files
            default: break
            }
            return output
        }

        static func describe(_ report: ReadinessReport) -> String {
            var lines: [String] = []
            switch report.readiness {
            case .ready: lines.append("\(report.name): ready (\(counted(report.files.count, "file")))")
            case .notDownloaded: lines.append("\(report.name): not downloaded — run `modeldepot pull \(report.name)`")
            case .partial(let missing):
                lines.append(
                    "\(report.name): partial, missing \(missing.joined(separator: ", ")) — run `modeldepot pull \(report.name)`"
                )
            case .downloading(let missing):
                lines.append(
                    "\(report.name): download in progress or interrupted, missing \(missing.joined(separator: ", "))")
            case .corrupt(let files):
                lines.append(
                    "\(report.name): corrupt — `modeldepot verify \(report.repo) --repair` downloads damaged files again; if they verify and their headers are still bad, the files on the Hub are damaged"
                )
                for (file, reason) in files.sorted(by: { $0.key < $1.key }) { lines.append("  \(file): \(reason)") }
            case .unverified(let files):
                lines.append(
                    "\(report.name): loadable; \(counted(files.count, "file")) not hashed yet — `modeldepot status \(report.name) --verify` hashes them"
                )
            }
            for (file, detail) in report.details.sorted(by: { $0.key < $1.key }) {
                lines.append("  \(file): \(detail)")
            }
            return lines.joined(separator: "\n")
        }
    }

    extension StatusCommand {
        var failuresAsJSON: Bool { json }
    }
#endif
