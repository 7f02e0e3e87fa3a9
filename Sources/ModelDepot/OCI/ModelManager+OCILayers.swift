import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotOCI
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust
import Synchronization

extension ModelManager {
    /// Downloads `files`' layers, four at a time, each where `place` says (blob, partial, lock, and the git blob id
    /// to check besides the digest); a blob already there with the right size is kept (its name is its content).
    /// Returns where each file is, which blobs this pull wrote, and the bytes received.
    nonisolated func fetchModelPackLayers(
        _ files: [ModelPackArtifact.File], from reference: OCIReference, client: RegistryClient, total: Int64,
        progress: @escaping @Sendable (Int64, Int64) -> Void, verifiesExisting: Bool = false,
        place: @escaping @Sendable (ModelPackArtifact.File) -> (blob: URL, partial: URL, lock: URL, gitBlobID: String?)
    ) async throws -> (blobs: [RepoFilePath: URL], fetched: [URL], received: Int64) {
        let name = reference.repository
        // One HEAD first: it answers the registry's challenge, so the engine's ranged requests carry the token.
        if let first = files.first { _ = try await client.hasBlob(name, first.digest) }
        let headers = client.downloadHeaders(repository: name)
        let engine = pull.downloader
        let done = ByteTally()
        var blobs: [RepoFilePath: URL] = [:]
        var fetched: [URL] = []
        var received: Int64 = 0
        // Two paths with the same bytes are one layer: fetched once.
        var byDigest: [OCIDigest: [ModelPackArtifact.File]] = [:]
        for file in files { byDigest[file.digest, default: []].append(file) }
        do {
            try await withThrowingTaskGroup(of: (ModelPackArtifact.File, URL, Int64, Bool).self) { group in
                var pending = byDigest.values.map { $0[0] }.sorted { $0.size > $1.size }.makeIterator()
                func addNext() -> Bool {
                    guard let file = pending.next() else { return false }
                    group.addTask {
                        let spot = place(file)
                        // A blob of the cache is named by its content and was checked on its way in; a file staged in
                        // a folder anyone can write to is hashed before it is taken.
                        if CacheScanner.regularFileSize(spot.blob.path) == file.size {
                            let path = spot.blob.path
                            var intact = true
                            if verifiesExisting {
                                let actual = try? await BlockingWork.run { try FileDigests.sha256(ofFileAt: path) }
                                intact = actual == file.digest.hex
                            }
                            if intact {
                                _ = done.set(file.digest, to: file.size)
                                return (file, spot.blob, 0, false)
                            }
                            try? FileManager.default.removeItem(at: spot.blob)
                        }
                        try FileManager.default.createDirectory(
                            at: spot.blob.deletingLastPathComponent(), withIntermediateDirectories: true)
                        try FileManager.default.createDirectory(
                            at: spot.lock.deletingLastPathComponent(), withIntermediateDirectories: true)
                        // The engine checks the digest, and a git blob id the blob is named by, before the rename:
                        // a blob already named so is never replaced by other bytes.
                        func request(_ headers: [(name: String, value: String)]) -> DownloadRequest {
                            DownloadRequest(
                                url: client.blobURL(name, file.digest), destination: spot.blob,
                                expectedSHA256: file.digest.hex, expectedSize: file.size,
                                expectedGitBlobID: spot.gitBlobID, headers: headers
                            ).placingWorkFiles(
                                partial: spot.partial.path, resumeRecord: spot.partial.path + ".json",
                                sharedLock: spot.lock.path)
                        }
                        let report: @Sendable (DownloadProgress) -> Void = { update in
                            progress(done.set(file.digest, to: update.bytesCompleted), total)
                        }
                        let result: DownloadResult
                        do {
                            do {
                                result = try await engine.download(request(headers), progress: report)
                            } catch let error as ModelDepotError where error.code == .unauthorized {
                                // A registry token outlived (Docker Hub's last five minutes): a HEAD gets a fresh
                                // one, and the layer resumes with it, once.
                                _ = try await client.hasBlob(name, file.digest)
                                result = try await engine.download(
                                    request(client.downloadHeaders(repository: name)), progress: report)
                            }
                        } catch let error as ModelDepotError {
                            throw ModelDepotError(
                                error.code, "\(file.path) (layer \(file.digest) of \(reference)): \(error.message)",
                                underlying: error, retryAfter: error.retryAfter)
                        }
                        return (file, spot.blob, result.bytesReceived, !result.wasAlreadyPresent)
                    }
                    return true
                }
                for _ in 0..<4 where addNext() {}
                while let (file, blob, bytes, wrote) = try await group.next() {
                    for same in byDigest[file.digest] ?? [] { blobs[same.path] = blob }
                    if wrote { fetched.append(blob) }
                    received += bytes
                    _ = addNext()
                }
            }
        } catch {
            for url in fetched { try? FileManager.default.removeItem(at: url) }
            throw error
        }
        return (blobs, fetched, received)
    }

    /// Holds staged files to `policy`'s pickle rule: each file that may be a pickle is read, and a pickle refuses
    /// the pull, naming it.
    nonisolated func holdModelPack(_ files: [RepoFilePath: URL], to policy: DownloadPolicy, name: String) async throws {
        guard policy.refusePickle else { return }
        var findings: [PickleFinding] = []
        for (path, url) in files.sorted(by: { $0.key < $1.key }) where PickleFile.mayBePickle(path.value) {
            if let file = try await BlockingWork.run({ try PickleFile.inspect(url) }) {
                findings.append(PickleFinding(path: path.value, file: file, safetensorsAlternatives: []))
            }
        }
        guard !findings.isEmpty else { return }
        throw ModelDepotError(
            .unsafeFormat,
            "\(name) holds Python pickles, which can run code when loaded, and the policy refuses them: \(findings.map(\.description).joined(separator: "; ")). Pull without --refuse-pickle if you trust the publisher."
        )
    }

    /// Holds a staged artifact to the signature `requirement` names, as a Hub pull is held.
    nonisolated func checkModelPackSignature(
        _ staged: StagedSnapshot, _ requirement: SignatureRequirement, repository: CachedRepository, tree: RecordedTree
    ) async throws {
        let signaturePath = try RepoFilePath(requirement.path)
        // A signature is a few kilobytes: a layer claiming to be one is not read whole past 16 MiB.
        guard let signatureFile = staged.url(of: signaturePath),
            (CacheScanner.regularFileSize(signatureFile.path) ?? .max) <= 16 << 20,
            let bundle = FileManager.default.contents(atPath: signatureFile.path)
        else {
            throw ModelDepotError(
                .signatureInvalid, "\(staged.request.repo)'s signature at \(requirement.path) could not be read.")
        }
        let signed = try await ModelSignature(bundle: bundle, name: "\(staged.request.repo)/\(requirement.path)")
            .verified(
                by: requirement.trust)
        var present: [String: URL] = [:]
        for path in staged.files { present[path.value] = staged.url(of: path) }
        let commit = staged.commit
        _ = try await BlockingWork.run { [self, present] in
            try compare(
                signed, signaturePath: requirement.path, repository: repository, commit: commit, tree: tree,
                present: present)
        }
    }
}
