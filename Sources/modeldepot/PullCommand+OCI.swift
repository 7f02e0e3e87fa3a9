#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot
    import ModelDepotOCI

    extension PullCommand {
        /// `oci://…`: a ModelPack artifact, into the cache as the Hub commit it names, or into `--local-dir`.
        func pullOCI(renderer: ProgressRenderer) async throws {
            let reference = try registry.reference(source)
            let client = try registry.client(for: reference, network: try hub.network())
            var policy = self.policy
            policy.signature = try signature.trust().map {
                SignatureRequirement(trust: $0, path: signature.signaturePath)
            }
            let models = try await manager(fetchesHubFiles: false)
            let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            let folder = localDir.map {
                URL(fileURLWithPath: $0.hasPrefix("~/") ? NSHomeDirectory() + $0.dropFirst() : $0, relativeTo: cwd)
            }
            let result = try await models.pullModelPack(
                reference, client: client, localDirectory: folder, policy: policy, trustingRegistry: trustRegistry)
            if outputOptions.json {
                ProgressRenderer(mode: .json).printJSON(JSONEvent(ociPull: result))
                return
            }
            if !outputOptions.quiet {
                printStatus(
                    "pulled \(reference) (\(result.digest)): \(counted(result.files.count, "file")), \(result.filesDownloaded) fetched, \(ByteFormat.string(result.bytesDownloaded)) received\(result.repo.map { " as \($0)@\(result.commit?.prefix(12) ?? "")" } ?? "")"
                )
            }
            print(result.folder)
        }
    }
#endif
