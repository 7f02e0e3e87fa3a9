#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot
    import ModelDepotOCI

    struct LockCommand: AsyncParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "lock",
            abstract: "Pin models to exact bytes in a lock file that reproduces them on another machine.",
            discussion: """
                Each TARGET (a catalog name or preset, org/name[@revision], or a hf:// URI) is resolved at the \
                endpoint: its commit, and every selected file's path, size and digest (SHA-256 for LFS files, git blob \
                id otherwise), written to the lock file as sorted JSON. `pull --locked FILE` fetches exactly that \
                from any endpoint or mirror and refuses any difference; `verify --lock FILE` checks a cache against it. \
                --check says whether a locked branch has moved past its commit (exit 1 if so); --update writes the lock \
                again from the same sources.
                """)

        @Argument(help: "Catalog names or presets, repository ids (org/name, org/name@revision) or hf:// URIs.")
        var targets: [String] = []

        @Option(name: .customLong("include"), help: "Repository targets: only files matching this glob (repeatable).")
        var include: [String] = []

        @Option(name: .customLong("exclude"), help: "Repository targets: skip files matching this glob (repeatable).")
        var exclude: [String] = []

        @Option(name: .shortAndLong, help: "The lock file to write, or to read with --check and --update.")
        var output: String = "modeldepot.lock"

        @Flag(help: "Say whether a locked branch has moved past its commit at the endpoint; exit 1 if one has.")
        var check = false

        @Flag(help: "Resolve the lock's sources again and write the lock anew.")
        var update = false

        @Flag(help: "Print JSON.")
        var json = false

        @OptionGroup var hub: HubOptions

        @OptionGroup var registry: RegistryOptions

        @Flag(
            help:
                "oci:// targets: lock what the artifact says without asking the Hub to confirm its files (an air-gapped registry)."
        )
        var trustRegistry = false

        @OptionGroup var catalogOptions: CatalogOptions

        var failuresAsJSON: Bool { json }

        func validate() throws {
            guard !(check && update) else { throw ValidationError("Give --check or --update, not both.") }
            if check || update {
                guard targets.isEmpty else {
                    throw ValidationError("--check and --update read the lock file; give no targets.")
                }
            } else if targets.isEmpty {
                throw ValidationError("Give at least one model to lock (a catalog name, org/name or hf:// URI).")
            }
        }

        func run() async throws {
            let models = try await hub.manager()
            let file = URL(fileURLWithPath: output)
            if check {
                let lock = try ModelLock.load(file)
                let moved = try await models.drift(of: lock)
                if json {
                    printJSON([
                        "moved": moved.map {
                            ["repo": $0.repo.description, "revision": $0.revision, "locked": $0.locked, "now": $0.now]
                        }
                    ])
                } else if moved.isEmpty {
                    print("\(output): every locked branch still names its locked commit")
                } else {
                    for drift in moved {
                        print(
                            "\(drift.repo)@\(drift.revision) moved: locked \(drift.locked.prefix(12)), now \(drift.now.prefix(12))"
                        )
                    }
                }
                if !moved.isEmpty { throw ExitCode(1) }
                return
            }
            let network = try hub.network()
            let registries: @Sendable (OCIReference) throws -> RegistryClient = { [registry] in
                try registry.client(for: $0, network: network)
            }
            let lock: ModelLock
            if update {
                lock = try await models.updated(try ModelLock.load(file), registries: registries)
            } else {
                // oci:// targets lock the Hub commit an artifact holds, pinned to the artifact's digest.
                var repositories = try await models.lock(try lockTargets()).repositories
                for target in targets where OCIReference.names(target) {
                    let reference = try registry.reference(target)
                    repositories.append(
                        try await models.lockModelPack(
                            reference, client: try registries(reference), trustingRegistry: trustRegistry))
                }
                lock = ModelLock(repositories: repositories)
            }
            do {
                try lock.encoded().write(to: file, options: .atomic)
            } catch {
                throw ModelDepotError(.fileSystem, "Cannot write \(output): \(error.localizedDescription)")
            }
            if json {
                printJSON(lock)
                return
            }
            for repository in lock.repositories {
                print(
                    "\(repository.repo)@\(repository.revision) -> \(repository.commit.prefix(12)): \(counted(repository.files.count, "file")), \(ByteFormat.string(repository.totalBytes))\(repository.oci.map { " = \($0)" } ?? "")"
                )
            }
            print("wrote \(output)")
        }

        /// The targets as the library takes them: catalog entries with their files, repositories with the globs.
        func lockTargets() throws -> [ModelLock.Target] {
            let catalog = try catalogOptions.load()
            return try targets.filter { !OCIReference.names($0) }.flatMap { target -> [ModelLock.Target] in
                if !target.contains("/"), let entries = try catalog.resolve(target) {
                    return entries.map(ModelLock.Target.init)
                }
                let reference: HubReference
                do {
                    reference = try hub.cacheOptions.reference(target)
                } catch let error as ModelDepotError {
                    throw ModelDepotError(
                        .invalidArgument,
                        "'\(target)' is neither a catalog name, a preset, a repository id nor a hf:// URI: \(error.message)"
                    )
                }
                let include = self.include + (reference.path.map { [$0] } ?? [])
                return [
                    ModelLock.Target(
                        repo: reference.repo, type: reference.type, revision: reference.revision ?? "main",
                        source: ModelLock.Source(include: include, exclude: exclude))
                ]
            }
        }
    }
#endif
