#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot

    struct BOMCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bom",
            abstract: "Write a bill of materials (CycloneDX 1.6) for a cached model, from its bytes on disk.",
            discussion: """
                Every file of the snapshot is hashed again and held to the digest the Hub published; pickles are read \
                for their imports; with --trusted-key or --trusted-certificate the signature is checked and its \
                signer named. A file that changed since the download is in the bill as FAILED and the command exits \
                1; a snapshot missing files is refused, naming them. The same cache gives the same bytes.

                Example: modeldepot bom Qwen/Qwen2.5-0.5B-Instruct -o qwen.cdx.json
                """
        )

        @Argument(help: "The cached repository: org/name[@revision] (the revision's snapshot; main by default).")
        var repo: String

        @Option(name: .shortAndLong, help: "Write the bill to this file instead of standard output.")
        var output: String?

        @Option(
            help:
                "Describe only the files matching this glob (repeatable), as `pull --include` fetched them; files it leaves out are not required."
        )
        var include: [String] = []

        @Option(help: "Leave out the files matching this glob (repeatable), as `pull --exclude` did.")
        var exclude: [String] = []

        @OptionGroup var signatureOptions: SignatureOptions

        @OptionGroup var hub: HubOptions

        func validate() throws {
            try signatureOptions.validate(
                checking: signatureOptions.trustedKey != nil || signatureOptions.trustedCertificate != nil,
                flag: "bom")
        }

        func run() async throws {
            let reference = try hub.cacheOptions.reference(repo)
            let models = hub.cacheManager()
            let bill = try await models.billOfMaterials(
                for: reference.repo, type: reference.type, revision: reference.revision ?? "main",
                selection: FileSelection(include: include, exclude: exclude),
                signaturePath: signatureOptions.signaturePath, trust: try signatureOptions.trust())
            let document = bill.cycloneDX()
            if let output {
                try HubCache.writeAtomically(document, to: URL(fileURLWithPath: output))
                printStatus("bill of materials for \(bill.repo) @ \(bill.commit.prefix(12)): \(output)")
            } else {
                FileHandle.standardOutput.write(document)
                FileHandle.standardOutput.write(Data("\n".utf8))
            }
            let failed = bill.files.filter { $0.verification != .verified && $0.verification != .uncheckable }
            for file in failed {
                printStatus("FAILED \(file.path): \(describe(file.verification))")
            }
            if case .invalid(let path, let reason) = bill.signature {
                printStatus("FAILED signature \(path): \(reason)")
            }
            if !bill.isVerified { throw ExitCode(1) }
        }

        func describe(_ verification: BillOfMaterials.File.Verification) -> String {
            switch verification {
            case .failed(let expected, let actual): "its bytes hash to \(actual), the Hub published \(expected)"
            case .unlisted: "not a file of this commit"
            case .outsideCache: "its link leads outside the repository (not read)"
            case .verified, .uncheckable: ""
            }
        }
    }
#endif
