#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot
    import ModelDepotOCI

    struct BOMCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bom",
            abstract: "Write a bill of materials (CycloneDX 1.6) for a cached model, from its bytes on disk.",
            discussion: """
                Every file of the snapshot is hashed again and held to the digest the Hub published; pickles are read \
                for their imports; with --trusted-key or --trusted-certificate the signature is checked and its \
                signer named. A file that changed since the download is in the bill as FAILED and the command exits \
                1; a snapshot missing files is refused, naming them. The same cache gives the same bytes.

                With --lock, one document holds every repository of the lock, each held to it (every locked file, its \
                size and digest); with oci://registry/name:tag, the cached commit the artifact names, held to its \
                layers, pinned by digest.

                Example: modeldepot bom Qwen/Qwen2.5-0.5B-Instruct -o qwen.cdx.json
                """
        )

        @Argument(
            help:
                "The cached repository: org/name (or hf://org/name@revision), or oci://registry/name:tag for the commit an artifact holds."
        )
        var repo: String?

        @Option(help: "The branch, tag or commit whose snapshot to describe (default: main).")
        var revision: String?

        @Option(help: "Describe every repository this lock file names, each held to it.")
        var lock: String?

        @Option(name: .shortAndLong, help: "Write the bill to this file instead of standard output.")
        var output: String?

        @Flag(help: "Write SPDX 3.0.1 JSON-LD (profiles Core, Software, AI, SimpleLicensing) instead of CycloneDX 1.6.")
        var spdx = false

        @Option(
            help:
                "Describe only the files matching this glob (repeatable), as `pull --include` fetched them; files it leaves out are not required."
        )
        var include: [String] = []

        @Option(help: "Leave out the files matching this glob (repeatable), as `pull --exclude` did.")
        var exclude: [String] = []

        @OptionGroup var signatureOptions: SignatureOptions

        @OptionGroup var hub: HubOptions

        @OptionGroup var registry: RegistryOptions

        func validate() throws {
            if (repo == nil) == (lock == nil) {
                throw ValidationError(
                    "Give a repository (org/name, hf://org/name@revision or oci://…) or --lock FILE, one of them.")
            }
            if lock != nil || repo.map(OCIReference.names) == true,
                !include.isEmpty || !exclude.isEmpty || revision != nil
            {
                throw ValidationError(
                    "--include and --exclude choose files of a repository; a lock or an artifact names its own.")
            }
            if revision != nil, let repo, HubReference.namesType(repo) || repo.hasPrefix("hf://") {
                if (try? HubReference(parsing: repo).revision) ?? nil != nil {
                    throw ValidationError("'\(repo)' names its revision already; drop --revision.")
                }
            }
            try signatureOptions.validate(
                checking: signatureOptions.trustedKey != nil || signatureOptions.trustedCertificate != nil,
                flag: "bom")
        }

        func run() async throws {
            let models = hub.cacheManager()
            let trust = try signatureOptions.trust()
            let bills: [BillOfMaterials]
            if let lock {
                let locked = try ModelLock.load(URL(fileURLWithPath: lock))
                bills = try await models.billsOfMaterials(
                    for: locked, source: (lock as NSString).lastPathComponent,
                    signaturePath: signatureOptions.signaturePath, trust: trust)
            } else if let repo, OCIReference.names(repo) {
                let reference = try registry.reference(repo)
                let client = try registry.client(for: reference, network: try hub.network())
                let artifact = try await models.lockModelPack(reference, client: client, trustingRegistry: true)
                bills = try await models.billsOfMaterials(
                    for: ModelLock(repositories: [artifact]), source: reference.description,
                    signaturePath: signatureOptions.signaturePath, trust: trust)
            } else {
                let reference = try hub.cacheOptions.reference(repo ?? "")
                bills = [
                    try await models.billOfMaterials(
                        for: reference.repo, type: reference.type, revision: reference.revision ?? revision ?? "main",
                        selection: FileSelection(include: include, exclude: exclude),
                        signaturePath: signatureOptions.signaturePath, trust: trust)
                ]
            }
            let document = spdx ? BillOfMaterials.spdx(of: bills) : BillOfMaterials.cycloneDX(of: bills)
            if let output {
                try HubCache.writeAtomically(document, to: URL(fileURLWithPath: output))
                printStatus(
                    "bill of materials for \(bills.map { "\($0.repo) @ \($0.commit.prefix(12))" }.joined(separator: ", ")): \(output)"
                )
            } else {
                FileHandle.standardOutput.write(document)
                FileHandle.standardOutput.write(Data("\n".utf8))
            }
            for bill in bills {
                let failed = bill.files.filter { $0.verification != .verified }
                for file in failed {
                    printStatus(
                        "\(file.verification == .uncheckable ? "UNCHECKED" : "FAILED") \(bills.count > 1 ? "\(bill.repo)/" : "")\(file.path): \(describe(file.verification))"
                    )
                }
                if case .invalid(let path, let reason) = bill.signature {
                    printStatus("FAILED signature \(path): \(reason)")
                }
                for problem in bill.lockMatch?.problems ?? [] {
                    printStatus("FAILED \(bill.repo) against \(bill.lockMatch?.source ?? "the lock"): \(problem)")
                }
            }
            if bills.contains(where: { !$0.isVerified }) { throw ExitCode(1) }
        }

        func describe(_ verification: BillOfMaterials.File.Verification) -> String {
            switch verification {
            case .failed(let expected, let actual): "its bytes hash to \(actual), the Hub published \(expected)"
            case .unlisted: "not a file of this commit"
            case .outsideCache: "its link leads outside the repository (not read)"
            case .uncheckable: "its blob is named by no digest (another server's ETag), so it cannot be checked"
            case .verified: ""
            }
        }
    }
#endif
