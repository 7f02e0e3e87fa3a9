#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot
    import ModelDepotOCI

    struct VerifyCommand: AsyncParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Re-hash cached files against their names; exit 1 if anything is corrupt or missing.",
            discussion: """
                Blobs named by a 64-hex ETag are checked by SHA-256, those named by a 40-hex one by git blob id. \
                Files a snapshot's recorded file list names but that are absent count as missing; files in a snapshot \
                that its list does not name are reported as unlisted. --repair deletes corrupt blobs and unlisted \
                entries and downloads exactly the bad files again.
                """
        )

        @Argument(help: "A repository id (org/name); every cached repository when omitted.")
        var repo: String?

        @Flag(help: "Download again what is corrupt or missing.")
        var repair = false

        @Option(help: "Check the cache against this lock file instead: every locked file present, its size and digest.")
        var lock: String?

        @Flag(
            help:
                "Check the repository's signature instead (OpenSSF Model Signing): --trusted-key's, covering exactly its files."
        )
        var signature = false

        @OptionGroup var signatureOptions: SignatureOptions

        @Flag(help: "Print a JSON object with the problems found.")
        var json = false

        @OptionGroup var hub: HubOptions

        @OptionGroup var registry: RegistryOptions

        struct Report: Encodable {
            struct Item: Encodable {
                var repo: String
                var commit: String
                var path: String
                var problem: String
                var repaired: Bool
            }
            var problems: [Item]
            var verifiedBlobs: Int
            var bytesHashed: Int64
        }

        func validate() throws {
            try signatureOptions.validate(checking: signature, flag: "--signature")
            if signature, repo == nil || repair || lock != nil {
                throw ValidationError(
                    "--signature checks one repository: give org/name[@revision], without --repair or --lock.")
            }
        }

        func run() async throws {
            if signature {
                try await verifySignature()
                return
            }
            if let lock {
                try await verifyLock(lock)
                return
            }
            if let repo, OCIReference.names(repo) {
                try await verifyModelPack(repo)
                return
            }
            // Verifying needs no Hub (a broken endpoint setting must not stop it); repairing does.
            let models = repair ? try await hub.manager(pulling: true) : hub.cacheManager()
            var repositories: [(id: RepoID, type: RepoType)] = []
            if let repo {
                let reference = try hub.cacheOptions.reference(repo)
                repositories = [(reference.repo, reference.type)]
            } else {
                repositories = try await models.cachedModels().compactMap { report in
                    guard let id = report.repoID, let type = report.repoType else { return nil }
                    return (id, type)
                }
            }
            var report = Report(problems: [], verifiedBlobs: 0, bytesHashed: 0)
            for repository in repositories {
                let outcome = try await models.verify(repository.id, type: repository.type)
                report.verifiedBlobs += outcome.verifiedBlobs
                report.bytesHashed += outcome.bytesHashed
                var repaired = false
                if repair && !outcome.problems.isEmpty {
                    repaired = try await models.repair(
                        repository.id, type: repository.type, problems: outcome.problems
                    ).isEmpty
                }
                for problem in outcome.problems {
                    if !json { print("\(repository.id)  \(problem)\(repaired ? "  (repaired)" : "")") }
                    let kind: String
                    switch problem.kind {
                    case .corrupt: kind = "corrupt"
                    case .missing: kind = "missing"
                    case .unlisted: kind = "unlisted"
                    }
                    report.problems.append(
                        .init(
                            repo: repository.id.description, commit: problem.commit, path: problem.path.value,
                            problem: kind, repaired: repaired))
                }
            }
            let unrepaired = report.problems.filter { !$0.repaired }.count
            if json {
                printJSON(report)
            } else {
                print(
                    "\(counted(repositories.count, "repository", plural: "repositories")): \(counted(report.verifiedBlobs, "blob")) verified (\(ByteFormat.string(report.bytesHashed))), \(counted(report.problems.count, "problem"))\(repair ? ", \(report.problems.count - unrepaired) repaired" : "")."
                )
                if unrepaired > 0 && !repair {
                    print("Run `modeldepot verify --repair` to download the bad files again.")
                }
            }
            if unrepaired > 0 { throw ExitCode(1) }
        }
    }

    extension VerifyCommand {
        var failuresAsJSON: Bool { json }
    }

    extension VerifyCommand {
        /// `--signature`: the cached snapshot held to its signature; exit 1 naming every difference.
        func verifySignature() async throws {
            let reference = try hub.cacheOptions.reference(repo ?? "")
            let models = hub.cacheManager()
            let check = try await models.verifySignature(
                of: reference.repo, type: reference.type, revision: reference.revision ?? "main",
                signaturePath: signatureOptions.signaturePath, trust: try signatureOptions.trust()!)
            if json {
                printJSON([
                    "repo": reference.repo.description, "commit": check.commit, "model": check.signed.modelName,
                    "files": "\(check.signed.files.count)", "bytesHashed": "\(check.bytesHashed)",
                ])
            } else {
                print(
                    "\(reference.repo) @ \(check.commit.prefix(12)): signed by the trusted publisher; \(counted(check.signed.files.count, "file")) match the signature (\(check.reusedDigests) digests from the download, \(ByteFormat.string(check.bytesHashed)) hashed)"
                )
            }
        }

        /// `verify oci://…`: the cache's snapshot of the commit the artifact names, file by file against its layers.
        func verifyModelPack(_ text: String) async throws {
            guard !repair, !signature else {
                throw ModelDepotError(
                    .invalidArgument,
                    "An oci:// artifact is verified against the cache as it is; pull it again to repair (modeldepot pull \(text))."
                )
            }
            let reference = try registry.reference(text)
            let client = try registry.client(for: reference, network: try hub.network())
            let models = hub.cacheManager()
            let problems = try await models.verifyModelPack(reference, client: client)
            try report(problems, against: reference.description, holding: "the cache holds \(reference) exactly")
        }

        /// Prints `problems` (each a line, or one JSON object), or `holding` when there is none; exit 1 if any.
        func report(_ problems: [ModelLock.Problem], against what: String, holding: String) throws {
            if json {
                printJSON([
                    "problems": problems.map {
                        ["repo": $0.repo.description, "path": $0.path ?? "", "problem": $0.message]
                    }
                ])
            } else {
                for problem in problems { print(problem.description) }
                printStatus(problems.isEmpty ? holding : "\(counted(problems.count, "problem")) against \(what)")
            }
            if !problems.isEmpty { throw ExitCode(1) }
        }

        /// `--lock FILE`: hashes every locked file in the cache and names each difference; exit 1 if any.
        func verifyLock(_ path: String) async throws {
            guard repo == nil, !repair else {
                throw ModelDepotError(
                    .invalidArgument,
                    "--lock checks what the lock names; give no repository and no --repair (pull --locked fetches what is missing)."
                )
            }
            let lock = try ModelLock.load(URL(fileURLWithPath: path))
            let models = hub.cacheManager()
            let problems = await models.verify(lock: lock)
            let files = lock.repositories.reduce(0) { $0 + $1.files.count }
            try report(problems, against: path, holding: "\(counted(files, "file")) match \(path)")
        }
    }
#endif
