#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot
    import ModelDepotEmbeddings

    struct CatalogCommand: ParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "catalog",
            abstract: "List the known models and presets (`modeldepot pull <name>` fetches exactly one variant).",
            discussion: """
                The catalog ships with ModelDepot; a user catalog of the same JSON shape (--catalog, \
                MODELDEPOT_CATALOG, or ~/.config/modeldepot/catalog.json) adds entries and replaces same-named ones.
                """)

        @Option(
            help:
                "Only models with this capability: \(ModelCapability.allCases.map(\.rawValue).joined(separator: ", "))."
        )
        var capability: String?

        @Option(help: "Only models in this format: \(ModelFormat.allCases.map(\.rawValue).joined(separator: ", ")).")
        var format: String?

        @Flag(help: "Only recommended models.")
        var recommended = false

        @Flag(help: "Print a JSON object with `models` and `presets`.")
        var json = false

        @OptionGroup var catalogOptions: CatalogOptions

        struct Output: Encodable {
            var models: [CatalogEntry]
            var presets: [String: [String]]
            /// For each embedding model: null when `embed --local` runs it in-process, else why not.
            var inProcessEmbeddings: [String: String?]
        }

        func run() throws {
            let catalog = try catalogOptions.load()
            let capability = try self.capability.map { name in
                guard let value = ModelCapability(rawValue: name) else {
                    throw ModelDepotError(
                        .invalidArgument,
                        "'\(name)' is not a capability; use one of: \(ModelCapability.allCases.map(\.rawValue).joined(separator: ", "))."
                    )
                }
                return value
            }
            let format = try self.format.map { name in
                guard let value = ModelFormat(rawValue: name.lowercased()) else {
                    throw ModelDepotError(
                        .invalidArgument,
                        "'\(name)' is not a format; use one of: \(ModelFormat.allCases.map(\.rawValue).joined(separator: ", "))."
                    )
                }
                return value
            }
            let models = catalog.entries(capability: capability, format: format, recommendedOnly: recommended)
            let embedding = models.filter { $0.has(.embeddings) }
            if json {
                printJSON(
                    Output(
                        models: models, presets: catalog.presets,
                        inProcessEmbeddings: Dictionary(
                            uniqueKeysWithValues: embedding.map {
                                ($0.name, SentenceEmbedder.unsupportedReason(for: $0))
                            }))
                )
                return
            }
            let rows =
                [["NAME", "FORMAT", "SIZE", "CAPABILITIES", "REPO"]]
                + models.map { entry in
                    [
                        entry.name + (entry.recommended ? " *" : ""), entry.format.rawValue,
                        "~" + ByteFormat.string(entry.sizeBytes),
                        entry.capabilities.map(\.rawValue).joined(separator: ","), entry.repo.description,
                    ]
                }
            print(Table.render(rows))
            if !embedding.isEmpty {
                let inProcess = embedding.filter { SentenceEmbedder.unsupportedReason(for: $0) == nil }.map(\.name)
                print(
                    "\nIn-process embeddings (embed --local, no server): \(inProcess.isEmpty ? "none" : inProcess.joined(separator: ", "))."
                )
                for entry in embedding where entry.format != .gguf {
                    if let reason = SentenceEmbedder.unsupportedReason(for: entry) {
                        print("  \(entry.name): not in-process, \(reason).")
                    }
                }
            }
            print("\n* recommended. Presets:")
            for (name, members) in catalog.presets.sorted(by: { $0.key < $1.key }) {
                let size = members.compactMap { catalog.entry(named: $0)?.sizeBytes }.reduce(0, +)
                print("  \(name): \(members.joined(separator: " + ")) (~\(ByteFormat.string(size)))")
            }
        }
    }

    /// Where the catalog comes from.
    struct CatalogOptions: ParsableArguments {
        @Option(
            help: "A user catalog file to add (default: MODELDEPOT_CATALOG, else ~/.config/modeldepot/catalog.json).")
        var catalog: String?

        func load() throws -> ModelCatalog {
            try ModelCatalog.standard(userCatalog: catalog.map { URL(fileURLWithPath: $0) })
        }
    }

    extension CatalogCommand {
        var failuresAsJSON: Bool { json }
    }
#endif
