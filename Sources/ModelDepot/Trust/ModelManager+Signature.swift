import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust

/// What checking a cached model's signature found.
public struct SignatureCheck: Sendable, Hashable {
    /// The files the signature covers, as verified.
    public var signed: SignedFiles
    /// The commit checked.
    public var commit: String
    /// Files whose digest was taken from the download's own verification (no bytes read).
    public var reusedDigests: Int
    /// Bytes hashed because no verified digest was at hand.
    public var bytesHashed: Int64
}

extension ModelManager {
    /// The signature file model-signing writes into a model folder by default (`ModelSignature/defaultPath`).
    public static let defaultSignaturePath = ModelSignature.defaultPath

    /// Checks a cached snapshot against its OpenSSF model signature: the signature must be the trusted publisher's
    /// (their key, or a certificate chaining to one you trust), and the
    /// signed files must be exactly the repository's files at that commit (the signature file and `.git*` aside),
    /// each with the signed SHA-256 — of the whole file, or of each shard when it was signed in shards.
    ///
    /// The repository's file tree as recorded at pull time is what is held to the signature, so a file the pull
    /// left out still counts (by the digest the Hub lists for it). Digests the download already verified are
    /// reused; only files without one, or signed in more than one shard, are hashed, so a check costs at most one
    /// hash of the model.
    ///
    /// - Parameters:
    ///   - repo: the repository.
    ///   - type: its kind.
    ///   - revision: the branch, tag or commit whose snapshot to check.
    ///   - signaturePath: where the signature is in the repository (`model.sig`).
    ///   - signatureFile: a signature kept outside the repository, read instead.
    ///   - trust: the publisher's key, or the certificates their signing certificate must chain to.
    /// - Throws: `notCached` without the snapshot; `signatureInvalid` naming every difference, or what is wrong
    ///   with the signature itself (missing, unreadable, another key, changed after signing).
    @discardableResult
    public nonisolated func verifySignature(
        of repo: RepoID, type: RepoType = .model, revision: String = "main",
        signaturePath: String = ModelManager.defaultSignaturePath, signatureFile: URL? = nil, trust: SignatureTrust
    ) async throws -> SignatureCheck {
        let repository = cache.repository(repo, type: type)
        guard let commit = repository.commit(forRevision: revision),
            FileManager.default.fileExists(atPath: repository.snapshotFolder(commit).path)
        else {
            throw ModelDepotError(
                .notCached, "\(repo) at \(revision) is not in the cache; pull it first.", remedy: .downloadFirst)
        }
        // Each file where its bytes are, resolved as the kernel resolves links (Foundation's resolver stops after
        // 20 and hands the path back); one whose bytes are outside the repository counts as absent.
        var present: [String: URL] = [:]
        for path in CacheScanner.repositoryFiles(below: repository.snapshotFolder(commit)) {
            if let location = Self.repositoryBytes(of: path, commit: commit, in: repository) {
                present[path.value] = location
            }
        }
        return try await verifySignature(
            of: repo, type: type, commit: commit, signaturePath: signaturePath,
            signatureFile: try signatureFile ?? repository.snapshotFile(commit, RepoFilePath(signaturePath)),
            trust: trust, present: present)
    }

    /// The check of ``verifySignature(of:type:revision:signaturePath:signatureFile:trust:)`` over the files
    /// `present` names (path → where its bytes are), which a bill of materials limits to those it hashed.
    nonisolated func verifySignature(
        of repo: RepoID, type: RepoType, commit: String, signaturePath: String, signatureFile signatureURL: URL,
        trust: SignatureTrust, present: [String: URL]
    ) async throws -> SignatureCheck {
        let repository = cache.repository(repo, type: type)
        guard let bundle = FileManager.default.contents(atPath: signatureURL.path) else {
            throw ModelDepotError(
                .signatureInvalid,
                "\(repo) has no signature at \(signaturePath) (the publisher did not sign it, or it was not pulled).")
        }
        let signed = try await ModelSignature(bundle: bundle, name: "\(repo)/\(signaturePath)").verified(by: trust)
        // Hashing what the download did not verify (whole files, or every shard) runs off the cooperative pool.
        let tree = repository.recordedTree(commit)
        return try await BlockingWork.run { [self, present] in
            try compare(
                signed, signaturePath: signaturePath, repository: repository, commit: commit, tree: tree,
                present: present)
        }
    }

    /// Holds the model's files to what `signed` lists: every file of `tree` and of `present` (the files on disk,
    /// by path, wherever their bytes are: a snapshot's links or a staged pull's blobs), the signature file and
    /// `.git*` aside. Digests the download verified are reused; a file not on disk counts by its listed SHA-256.
    ///
    /// - Throws: `signatureInvalid` naming every difference.
    nonisolated func compare(
        _ signed: SignedFiles, signaturePath: String, repository: CachedRepository, commit: String,
        tree: RecordedTree?, present: [String: URL]
    ) throws -> SignatureCheck {
        var paths = Set(tree?.files.keys.map(\.value) ?? [])
        paths.formUnion(present.keys)
        var memory = VerificationMemory(repository: repository)
        var actual: [String: [String]] = [:]
        var unknown: [String] = []
        var check = SignatureCheck(signed: signed, commit: commit, reusedDigests: 0, bytesHashed: 0)
        for path in paths.sorted() where !signed.ignores(path, signaturePath: signaturePath) {
            let recorded = try tree?.files[RepoFilePath(path)]
            guard let file = present[path] else {
                // Not pulled: the listing's SHA-256 stands for a whole file, and an empty one signed in shards has
                // no digest; a small file has only its git id there, and a file of several shards needs its bytes.
                switch (recorded.map { signed.coverage(ofFileOfSize: $0.size) }, recorded?.lfsSHA256) {
                case (.nothing?, _): actual[path] = []
                case (.whole?, let sha256?): actual[path] = [sha256]
                default: unknown.append(path)
                }
                continue
            }
            let size = FileStatus(path: file.path)?.size ?? 0
            switch signed.coverage(ofFileOfSize: size) {
            case .nothing:
                actual[path] = []
            case .whole:
                if let sha256 = recorded?.lfsSHA256, file.lastPathComponent == sha256,
                    memory.outcome(forBlob: file.path) == true
                {
                    actual[path] = [sha256]
                    check.reusedDigests += 1
                    continue
                }
                let digest = try FileDigests.sha256(ofFileAt: file.path)
                check.bytesHashed += size
                if HubEncoding.isSHA256(file.lastPathComponent) {
                    memory.remember(blob: file.path, ok: digest == file.lastPathComponent)
                }
                actual[path] = [digest]
            case .pieces(let pieceSize):
                actual[path] = try FileDigests.sha256(ofPiecesOfFileAt: file.path, pieceSize: pieceSize)
                check.bytesHashed += size
            }
        }
        memory.save()
        var problems = signed.problems(comparedWith: actual)
        problems += unknown.map { "\($0) was not pulled and its signed digests need its bytes; pull it to check it" }
        guard problems.isEmpty else {
            throw ModelDepotError(
                .signatureInvalid,
                "\(repository.id) @ \(commit.prefix(12)) does not match its signature: \(problems.joined(separator: "; "))."
            )
        }
        return check
    }
}
