import Foundation
import ModelDepotCore
import ModelDepotTrust

/// What a cached model is, from the bytes on disk: every file of one commit hashed when the bill was made, with what
/// the download recorded (source, commit, when), the signature check and the pickle verdicts. Write it out with
/// ``cycloneDX()`` (CycloneDX 1.6 JSON, an ML-BOM).
///
/// Made by ``ModelManager/billOfMaterials(for:type:revision:selection:signaturePath:trust:)``, which refuses a snapshot that is
/// not fully downloaded. A file whose bytes do not hash to what the Hub published is in the bill as failed, never
/// as good; ``isVerified`` says whether anything failed.
package struct BillOfMaterials: Sendable, Equatable {
    /// One file of the snapshot as hashed now.
    package struct File: Sendable, Equatable {
        /// What hashing the file found, against the digest the Hub published for it.
        package enum Verification: Sendable, Hashable {
            /// Its bytes hash to the published digest (SHA-256 for LFS files, the git blob id for others).
            case verified
            /// Its bytes hash to something else: changed on disk since the download.
            case failed(expected: String, actual: String)
            /// The commit's recorded file list does not name it: put there by something else.
            case unlisted
            /// Its blob is named by something other than a digest (another server's ETag), so it cannot be checked.
            case uncheckable
            /// Its link leads outside the repository's `blobs/` (put there by hand, or by a hostile tool): not read,
            /// not hashed.
            case outsideCache
        }

        /// Its path in the repository.
        package var path: String
        /// Its size in bytes.
        package var size: Int64
        /// The SHA-256 of its bytes as they are now (lowercase hex).
        package var sha256: String
        /// Whether that is what was published.
        package var verification: Verification
        /// When its bytes were written to the cache (the blob's modification time).
        package var downloaded: Date?
        /// What it is when it is a Python pickle, with its imports; nil when it is not one.
        package var pickle: PickleFile?
        /// Why it is a pickle that could not be judged (treat it as unsafe); nil otherwise.
        package var pickleProblem: String?
        /// The git blob id of its bytes, for files the Hub does not keep in LFS.
        package var gitBlobID: String?
        /// Where its bytes are (the blob, resolved), when inside the repository; nil for a link out of it.
        package var location: URL?
    }

    /// What became of the model's signature.
    package enum Signature: Sendable, Hashable {
        /// The snapshot has no signature file.
        case absent
        /// It has one, and no trusted key or certificate was given to check it with.
        case unchecked(path: String)
        /// It verified and covers exactly the files: `signer` names the key (and certificate) that signed.
        case verified(path: String, signer: String)
        /// It did not verify, for this reason.
        case invalid(path: String, reason: String)
    }

    /// The repository.
    package var repo: RepoID
    /// Its kind.
    package var type: RepoType
    /// The commit described.
    package var commit: String
    /// Every file of the snapshot, by path.
    package var files: [File]
    /// The signature check.
    package var signature: Signature
    /// The Hub the model comes from (the manager's endpoint).
    package var endpoint: URL
    /// The branch or tag asked for, when it was not the commit itself.
    package var revision: String?
    /// What the model card's front matter claims (licence, task, base model, datasets, languages).
    package var card: ModelCardMetadata
    /// True when the commit's file list was recorded at download, so the files are known to be all of them.
    package var listIsRecorded: Bool
    /// The files the model was limited to, when it is not the whole repository.
    package var selection: FileSelection?
    /// The lock (or OCI artifact) the files were held to, and every way they differ from it.
    package var lockMatch: LockMatch?

    package struct LockMatch: Sendable, Equatable {
        /// The lock file's name, or the artifact pinned by digest (`oci://registry/name@sha256:…`).
        package var source: String
        package var problems: [String]
    }

    /// `endpoint` as a bill may show it: no user name, password, query or fragment.
    package static func publicEndpoint(_ endpoint: URL) -> URL {
        guard var parts = URLComponents(url: endpoint, resolvingAgainstBaseURL: false) else { return endpoint }
        parts.user = nil
        parts.password = nil
        parts.query = nil
        parts.fragment = nil
        while parts.path.hasSuffix("/") { parts.path.removeLast() }
        return parts.url ?? endpoint
    }

    /// True when every file hashed to what was published and no signature failed.
    package var isVerified: Bool {
        if case .invalid = signature { return false }
        if let lockMatch, !lockMatch.problems.isEmpty { return false }
        return files.allSatisfy { $0.verification == .verified }
    }
}
