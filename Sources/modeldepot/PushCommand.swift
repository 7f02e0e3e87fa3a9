#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot
    import ModelDepotOCI

    struct PushCommand: AsyncParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "push",
            abstract: "Push a cached model to an OCI registry as a CNCF ModelPack artifact.",
            discussion: """
                One raw layer per file, named by org.cncf.model.filepath and the OCI title; the Hub repository, \
                commit and each file's SHA-256 in annotations; a ModelPack config from the weights' headers. Blobs \
                the registry holds already are not sent again. `modeldepot pull oci://…` puts the artifact back in \
                the cache as the same commit; skopeo, oras and Kubernetes ImageVolume read it too.
                """)

        @Argument(help: "The model: org/name[@revision], a catalog name, or a lock file naming one repository.")
        var model: String

        @Argument(help: "Where to: oci://registry[:port]/repository:tag.")
        var destination: String

        @Option(
            help: "A repository of the same registry that may hold the blobs already (mounted, not sent; repeatable).")
        var mountFrom: [String] = []

        @OptionGroup var registry: RegistryOptions
        @OptionGroup var hub: HubOptions
        @OptionGroup var catalogOptions: CatalogOptions

        @Flag(help: "Print the result as JSON.")
        var json = false

        var failuresAsJSON: Bool { json }

        func validate() throws {
            guard OCIReference.names(destination) else {
                throw ValidationError("The destination must be an OCI reference: oci://registry/repository:tag.")
            }
            for name in mountFrom where !OCIReference.isRepositoryName(name) {
                throw ValidationError(
                    "--mount-from '\(name)' is not a repository name of the registry (lower case, '/'-separated).")
            }
        }

        func run() async throws {
            let reference = try registry.reference(destination)
            let (repo, type, revision) = try source()
            let client = try registry.client(for: reference, network: try hub.network())
            let models = hub.cacheManager()
            let started = ContinuousClock.now
            let result = try await models.pushModelPack(
                repo, type: type, revision: revision, to: reference, client: client, mountFrom: mountFrom)
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if json {
                printJSON(result)
                return
            }
            if !result.filesNotCached.isEmpty {
                printStatus(
                    "note: \(counted(result.filesNotCached.count, "file")) of the commit's listing are not cached, so not pushed: \(result.filesNotCached.prefix(5).joined(separator: ", "))\(result.filesNotCached.count > 5 ? ", …" : "")"
                )
            }
            printStatus(
                "pushed \(result.repo)@\(result.commit.prefix(12)): \(counted(result.files, "file")), \(ByteFormat.string(result.bytes)); sent \(ByteFormat.string(result.bytesUploaded)) (\(result.blobsUploaded) uploaded, \(result.blobsPresent) already there, \(result.blobsMounted) mounted) in \(String(format: "%.1f", seconds)) s"
            )
            print("\(reference.registry)/\(reference.repository)@\(result.digest)")
        }

        /// The repository, type and revision `model` names.
        func source() throws -> (RepoID, RepoType, String) {
            let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            if model.hasSuffix(".json"), FileManager.default.fileExists(atPath: model) {
                let lock = try ModelLock.load(URL(fileURLWithPath: model, relativeTo: cwd))
                guard lock.repositories.count == 1, let only = lock.repositories.first else {
                    throw ModelDepotError(
                        .invalidArgument,
                        "\(model) locks \(lock.repositories.count) repositories; an artifact holds one. Lock one, or push each by org/name@commit."
                    )
                }
                return (only.repo, only.type, only.commit)
            }
            if !model.contains("/"), let entries = try catalogOptions.load().resolve(model) {
                guard entries.count == 1, let entry = entries.first else {
                    throw ModelDepotError(
                        .invalidArgument,
                        "The catalog name '\(model)' stands for \(entries.count) repositories; push each by org/name.")
                }
                return (entry.repo, entry.repoType, entry.revision ?? "main")
            }
            let named = try hub.cacheOptions.reference(model)
            return (named.repo, named.type, named.revision ?? "main")
        }
    }
#endif
