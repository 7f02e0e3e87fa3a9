import Crypto
import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust

extension ModelManager {
    /// A bill of materials for a cached snapshot, from its bytes as they are now: every file is hashed again (the
    /// remembered verification of the download is not taken on trust, since a file can change after it), pickles
    /// are read for their imports, and the signature is checked when `trust` is given.
    ///
    /// - Parameters:
    ///   - repo: the repository.
    ///   - type: its kind.
    ///   - revision: the branch, tag or commit whose snapshot to describe.
    ///   - selection: the files the model is made of, when it is not every file of the repository (what a
    ///     catalog entry or `pull --include` selects); the others are left out of the bill.
    ///   - signaturePath: where the signature is in the repository (`model.sig`).
    ///   - trust: whose signature to accept; without it a signature present is reported as not checked.
    /// - Throws: `notCached` when the snapshot is not in the cache; `incompleteSnapshot` when it lacks selected
    ///   files its recorded list names (each named); file system errors.
    package nonisolated func billOfMaterials(
        for repo: RepoID, type: RepoType = .model, revision: String = "main",
        selection: FileSelection = .everything, signaturePath: String = ModelManager.defaultSignaturePath,
        trust: SignatureTrust? = nil
    ) async throws -> BillOfMaterials {
        var bill = try await BillOfMaterials.make(
            cache: cache, repo: repo, type: type, revision: revision, endpoint: pull.hub.endpoint,
            selection: selection, signaturePath: signaturePath)
        if case .absent = bill.signature, trust != nil {
            // Asked to hold the model to a signature, a model without one does not pass.
            bill.signature = .invalid(
                path: signaturePath, reason: "there is no signature at \(signaturePath) among the files described.")
        }
        if case .unchecked = bill.signature, let trust {
            bill.signature = await signatureVerdict(
                of: repo, type: type, commit: bill.commit, files: bill.files, signaturePath: signaturePath,
                trust: trust)
        }
        return bill
    }

    /// Bills of every repository of `lock`, each limited to its locked files and held to the lock: every locked file
    /// present with its size and digest. `source` names the lock in the bill (its file name, or the artifact).
    ///
    /// - Throws: as ``billOfMaterials(for:type:revision:selection:signaturePath:trust:)`` for each repository.
    package nonisolated func billsOfMaterials(
        for lock: ModelLock, source: String, signaturePath: String = ModelManager.defaultSignaturePath,
        trust: SignatureTrust? = nil
    ) async throws -> [BillOfMaterials] {
        var bills: [BillOfMaterials] = []
        for repository in lock.repositories {
            var bill = try await billOfMaterials(
                for: repository.repo, type: repository.type, revision: repository.commit,
                selection: FileSelection(paths: Set(repository.files.map(\.path))), signaturePath: signaturePath,
                trust: trust)
            if let endpoint = URL(string: repository.endpoint), endpoint.host != nil {
                bill.endpoint = BillOfMaterials.publicEndpoint(endpoint)
            }
            bill.revision = repository.revision == repository.commit ? nil : repository.revision
            let compared = bill
            let problems = try await BlockingWork.run { Self.differences(of: compared, from: repository) }
            bill.lockMatch = BillOfMaterials.LockMatch(source: repository.oci ?? source, problems: problems)
            bills.append(bill)
        }
        return bills
    }

    /// How the files of `bill` differ from what `repository` locks: each locked file missing, of another size, or
    /// with another digest.
    nonisolated static func differences(of bill: BillOfMaterials, from repository: ModelLock.Repository) -> [String] {
        let files = Dictionary(bill.files.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var problems: [String] = []
        for locked in repository.files {
            guard let file = files[locked.path] else {
                problems.append("\(locked.path) is locked but not in the cache")
                continue
            }
            if file.size != locked.size {
                problems.append("\(locked.path) is \(file.size) bytes, locked at \(locked.size)")
            } else if let sha256 = locked.sha256, file.sha256 != sha256.lowercased() {
                problems.append("\(locked.path) hashes to \(file.sha256), locked at \(sha256)")
            } else if let gitBlob = locked.gitBlob {
                // The bill computed a git id only where the Hub names the blob by one: otherwise take it now.
                let actual = file.gitBlobID ?? file.location.flatMap { try? FileDigests.gitBlobID(ofFileAt: $0.path) }
                if actual != gitBlob.lowercased() {
                    problems.append("\(locked.path) has git blob id \(actual ?? "unknown"), locked at \(gitBlob)")
                }
            }
        }
        return problems
    }

    /// One file hashed: its SHA-256 (and git blob id when the Hub names it so), held to the digest published for it.
    nonisolated static func describe(
        _ path: RepoFilePath, commit: String, in repository: CachedRepository, tree: RecordedTree?
    ) throws -> BillOfMaterials.File {
        let link = repository.snapshotFile(commit, path).path
        let blob = CacheScanner.blobPath(of: link)
        let status = FileStatus(path: link, followingLinks: true)
        // Only bytes inside the repository are read: a link out of it (to /etc, to another repository) is named,
        // never hashed, so a bill cannot be made to tell anything about a file elsewhere.
        guard let target = repositoryBytes(of: path, commit: commit, in: repository) else {
            return BillOfMaterials.File(
                path: path.value, size: 0, sha256: "", verification: .outsideCache, downloaded: nil, pickle: nil,
                pickleProblem: nil, gitBlobID: nil)
        }
        let sha256 = try FileDigests.sha256(ofFileAt: target.path)
        // What was published: the recorded list's digest, else the blob's name (which the download checked).
        let listed = tree?.files[path]
        let published = listed?.etag ?? (blob as NSString).lastPathComponent
        var gitBlobID: String?
        let verification: BillOfMaterials.File.Verification
        if tree != nil, listed == nil {
            verification = .unlisted
        } else if HubEncoding.isSHA256(published) {
            verification = sha256 == published ? .verified : .failed(expected: published, actual: sha256)
        } else if HubEncoding.isGitID(published) {
            let actual = try FileDigests.gitBlobID(ofFileAt: target.path)
            gitBlobID = actual
            verification = actual == published ? .verified : .failed(expected: published, actual: actual)
        } else {
            verification = .uncheckable
        }
        var file = BillOfMaterials.File(
            path: path.value, size: status?.size ?? 0, sha256: sha256, verification: verification,
            downloaded: FileStatus(path: blob, followingLinks: true).map {
                Date(timeIntervalSince1970: TimeInterval($0.modifiedNanoseconds / 1_000_000_000))
            }, pickle: nil, pickleProblem: nil, gitBlobID: gitBlobID, location: target)
        if PickleFile.mayBePickle(path.value) {
            do {
                file.pickle = try PickleFile.inspect(target)
            } catch {
                file.pickleProblem = (error as? ModelDepotError)?.message ?? "\(error)"
            }
        }
        return file
    }

    /// The signature's verdict: verified with its signer, or why it failed. Only the bill's own files are read —
    /// the bytes just hashed, inside the repository — and each is held to the signature as hashed now.
    nonisolated func signatureVerdict(
        of repo: RepoID, type: RepoType, commit: String, files: [BillOfMaterials.File], signaturePath: String,
        trust: SignatureTrust
    ) async -> BillOfMaterials.Signature {
        guard let signatureFile = files.first(where: { $0.path == signaturePath }),
            let location = signatureFile.location
        else {
            return .invalid(path: signaturePath, reason: "\(signaturePath) leads outside the repository; not read.")
        }
        var present: [String: URL] = [:]
        for file in files { if let location = file.location { present[file.path] = location } }
        do {
            let check = try await verifySignature(
                of: repo, type: type, commit: commit, signaturePath: signaturePath, signatureFile: location,
                trust: trust, present: present)
            // The check may take digests from the download; the bill holds the signature to the bytes hashed now:
            // every file signed whole (with shards, a file no larger than a shard) by its one digest.
            for file in files {
                guard let signed = check.signed.files[file.path], signed.count == 1,
                    check.signed.shardSize.map({ file.size <= $0 }) ?? true
                else { continue }
                if signed != [file.sha256] {
                    return .invalid(
                        path: signaturePath, reason: "\(file.path) differs from what was signed (hashed now).")
                }
            }
            for file in files where file.location == nil && check.signed.files[file.path] != nil {
                return .invalid(path: signaturePath, reason: "\(file.path) leads outside the repository; not read.")
            }
            return .verified(path: signaturePath, signer: Self.signer(of: check.signed))
        } catch {
            return .invalid(path: signaturePath, reason: (error as? ModelDepotError)?.message ?? "\(error)")
        }
    }

    /// Where the bytes of `path` at `commit` are — a blob of the repository, or a copy in the snapshot itself (a
    /// cache written where links are not allowed) — resolved with realpath(3), as the kernel follows links
    /// (Foundation's resolver gives up after 20 links and returns the path unresolved, which would look inside and
    /// then be followed when read). Nil when they are anywhere else. The repository folder is resolved (the cache
    /// may sit behind a link); the folders in it are expected to be real ones, as a bill checks.
    nonisolated static func repositoryBytes(of path: RepoFilePath, commit: String, in repository: CachedRepository)
        -> URL?
    {
        let folder = URL(fileURLWithPath: realPath(repository.folder.path) ?? repository.folder.path)
        let blobs = folder.appendingPathComponent("blobs").path
        let snapshot = folder.appendingPathComponent("snapshots").appendingPathComponent(commit).path
        guard let resolved = realPath(repository.snapshotFile(commit, path).path) else { return nil }
        let target = URL(fileURLWithPath: resolved)
        guard target.deletingLastPathComponent().path == blobs || target.path.hasPrefix(snapshot + "/") else {
            return nil
        }
        return target
    }

    /// `path` with every link resolved as the kernel resolves it; nil when it cannot be.
    nonisolated static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `ECDSA P-256 key sha256:…` (the SHA-256 of its DER SubjectPublicKeyInfo), with `, certificate sha256:…` (of
    /// its DER) when a certificate signed.
    nonisolated static func signer(of signed: SignedFiles) -> String {
        var text = "ECDSA \(signed.signerKeyCurve ?? "") key sha256:\(signed.signerKeySHA256 ?? "")"
        if let certificate = signed.signingCertificateSHA256 { text += ", certificate sha256:\(certificate)" }
        return text
    }
}

extension BillOfMaterials {
    /// The bill of `repo` at `revision` in `cache`, every file hashed now; a signature present is `unchecked`
    /// (``ModelManager/billOfMaterials(for:type:revision:selection:signaturePath:trust:)`` checks it when given whom to
    /// trust). The mirror's `/api/{type}s/{repo}/bom/{revision}` uses it directly.
    ///
    /// - Throws: `notCached` when the snapshot is not in the cache; `incompleteSnapshot` when it lacks selected
    ///   files its recorded list names (each named); file system errors.
    package static func make(
        cache: HubCache, repo: RepoID, type: RepoType, revision: String, endpoint: URL,
        selection: FileSelection = .everything, signaturePath: String = ModelSignature.defaultPath
    ) async throws -> BillOfMaterials {
        let repository = cache.repository(repo, type: type)
        guard let commit = repository.commit(forRevision: revision),
            FileStatus(path: repository.snapshotFolder(commit).path, followingLinks: true)?.kind == .folder
        else {
            throw ModelDepotError(
                .notCached, "\(repo) at \(revision) is not in the cache; pull it first.", remedy: .downloadFirst)
        }
        // The folders a bill reads are the repository's own, not links to elsewhere: bounds checked after
        // resolving a link would move with it (a snapshot linked to /etc would make /etc the snapshot).
        for folder in [
            repository.folder, repository.snapshotsFolder, repository.snapshotFolder(commit), repository.blobsFolder,
        ] where FileStatus(path: folder.path, followingLinks: false).map({ $0.kind != .folder }) ?? false {
            throw ModelDepotError(
                .invalidModelFile,
                "\(folder.path) is a link, not a folder as huggingface_hub and ModelDepot write the cache; a bill of materials reads only the repository's own folders."
            )
        }
        let tree = repository.recordedTree(commit)
        let present = CacheScanner.repositoryFiles(below: repository.snapshotFolder(commit)).filter {
            selection.selects($0.value)
                && FileStatus(path: repository.snapshotFile(commit, $0).path, followingLinks: true)?.kind == .file
        }
        guard !present.isEmpty else {
            throw ModelDepotError(
                .incompleteSnapshot,
                "\(repo) @ \(commit.prefix(12)) has no file \(selection == .everything ? "in its snapshot" : "that the selection names"); a bill of nothing proves nothing.",
                remedy: .changePatterns)
        }
        let listed = Set(tree?.files.keys.filter { selection.selects($0.value) } ?? [])
        let missing = listed.subtracting(present).map(\.value).sorted()
        guard missing.isEmpty else {
            throw ModelDepotError(
                .incompleteSnapshot,
                "\(repo) @ \(commit.prefix(12)) is not fully downloaded: \(missing.count) of its files are missing (\(missing.prefix(10).joined(separator: ", "))\(missing.count > 10 ? ", …" : "")); pull it again first.",
                remedy: .downloadFirst)
        }
        // Gigabytes hashed and pickles walked: off the cooperative pool.
        let files = try await BlockingWork.run {
            try present.map { path in try ModelManager.describe(path, commit: commit, in: repository, tree: tree) }
        }
        let signature: Signature =
            files.contains(where: { $0.path == signaturePath }) ? .unchecked(path: signaturePath) : .absent
        // The card's claims, read only from the bytes just verified (the same SHA-256), and only from a card of
        // a sensible size.
        var card = ModelCardMetadata()
        if let readme = files.first(where: { $0.path == "README.md" }), readme.verification == .verified,
            readme.size <= 1 << 20,
            let data = FileManager.default.contents(
                atPath: repository.snapshotFile(commit, try RepoFilePath("README.md")).path),
            SHA256.hash(data: data).hexString == readme.sha256
        {
            card = ModelCardMetadata(readme: data)
        }
        return BillOfMaterials(
            repo: repo, type: type, commit: commit, files: files, signature: signature,
            endpoint: BillOfMaterials.publicEndpoint(endpoint),
            revision: revision == commit ? nil : revision, card: card, listIsRecorded: tree != nil,
            selection: selection == .everything ? nil : selection)
    }
}
