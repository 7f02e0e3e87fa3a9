import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotTrust

extension ModelManager {
    /// Starts a download that `policy` holds to, returned at once like every other download.
    ///
    /// With `DownloadPolicy/refusePickle` the selected files are probed first and a pickle among them fails the
    /// task (`unsafeFormat`, naming every pickle and the safetensors files beside them) before a byte of it is
    /// fetched. With `DownloadPolicy/signature` the signature is fetched and checked first (failing before the
    /// weights when it is missing or not the trusted publisher's), the commit it was read at is pinned, and the
    /// files are staged (downloaded and verified into `blobs/`, nothing linked) and held to the signature; only
    /// then are they published as the revision's snapshot. A refused pull leaves the cache as it was: the revision
    /// still names the snapshot it named before, which Python and ``localPath(_:type:revision:file:)`` keep loading.
    ///
    /// A download under a policy is in the registry like any other (``cancelDownload(_:type:)``,
    /// ``overallProgress``), but a plain request never joins it, nor it a plain one: what it publishes has passed
    /// its checks. A second pickle-refusing download of the same request joins the first; a signed one never
    /// joins (it may trust another publisher). Without a check to make, it is the plain `download(_:)` of the request.
    public func download(_ request: SnapshotRequest, policy: DownloadPolicy) -> ModelDownloadTask {
        guard policy.signature != nil || policy.refusePickle else { return download(request) }
        // Two pickle-refusing downloads of one request are one download, as two plain ones are. Signed ones are
        // never joined: another call may trust another publisher.
        if policy.signature == nil, let running = registry.task(for: request, kind: .refusingPickles),
            !running.state.isFinal
        {
            return running
        }
        let task = ModelDownloadTask(request: request) { report in
            if let requirement = policy.signature {
                guard request.localDirectory == nil else {
                    throw ModelDepotError(
                        .invalidArgument,
                        "A signature is checked on the cache's snapshot; \(request.repo) names a local directory instead."
                    )
                }
                return try await self.pullVerifyingSignature(
                    request, requirement, refusingPickles: policy.refusePickle, progress: report)
            }
            var pinned = request
            pinned.revision = try await self.plan(request).commit
            try await self.refusePickles(in: pinned)
            return try await self.pull.download(pinned, progress: report)
        }
        registry.add(task, kind: policy.signature == nil ? .refusingPickles : .signed)
        task.resume()
        return task
    }

    /// Probes the files `request` (pinned to a commit) selects and throws `unsafeFormat` naming each pickle.
    nonisolated func refusePickles(in request: SnapshotRequest) async throws {
        let plan = try await self.plan(request)
        let findings = try await pickles(
            in: request.repo, type: request.type, commit: plan.commit, paths: plan.files.map(\.path))
        try Self.refuse(findings, of: request.repo)
    }

    /// The signed pull: the signature staged and checked, then the model staged at the signature's commit, held
    /// to it, and published together.
    nonisolated func pullVerifyingSignature(
        _ request: SnapshotRequest, _ requirement: SignatureRequirement, refusingPickles: Bool,
        progress: @escaping @Sendable (SnapshotProgress) -> Void
    ) async throws -> Snapshot {
        let signaturePath = try RepoFilePath(requirement.path)
        var signatureOnly = request
        signatureOnly.selection = .everything
        signatureOnly.files = [requirement.path]
        let signatureStage: StagedSnapshot
        do {
            signatureStage = try await pull.stage(signatureOnly, progress: progress)
        } catch let error as ModelDepotError where error.code == .entryNotFound {
            throw ModelDepotError(
                .signatureInvalid,
                "\(request.repo) has no signature at \(requirement.path); refusing it (a signature is required). Ask the publisher to sign it with model_signing, or name where the signature is (--signature-path)."
            )
        }
        guard let signatureFile = signatureStage.url(of: signaturePath),
            let bundle = FileManager.default.contents(atPath: signatureFile.path)
        else {
            throw ModelDepotError(
                .signatureInvalid, "\(request.repo)'s signature at \(requirement.path) could not be read.")
        }
        let signed = try await ModelSignature(bundle: bundle, name: "\(request.repo)/\(requirement.path)").verified(
            by: requirement.trust)

        var pinned = request
        pinned.revision = signatureStage.commit
        if pinned.files != nil { pinned.files?.append(requirement.path) }
        if refusingPickles { try await refusePickles(in: pinned) }
        let staged = try signatureStage.adding(try await pull.stage(pinned, progress: progress))

        // What the revision will show once published: the files a snapshot of this commit already holds, and the
        // staged ones in their blobs.
        let repository = cache.repository(request.repo, type: request.type)
        var present: [String: URL] = [:]
        for path in CacheScanner.repositoryFiles(below: repository.snapshotFolder(staged.commit)) {
            present[path.value] = repository.snapshotFile(staged.commit, path).resolvingSymlinksInPath()
        }
        for path in staged.files { present[path.value] = staged.url(of: path) }
        let tree = staged.recordedTree ?? repository.recordedTree(staged.commit)
        let commit = staged.commit
        let check = try await BlockingWork.run { [self, present] in
            try compare(
                signed, signaturePath: requirement.path, repository: repository, commit: commit, tree: tree,
                present: present)
        }
        var snapshot = try await pull.publish(staged)
        snapshot.signatureCheck = check
        return snapshot
    }
}
