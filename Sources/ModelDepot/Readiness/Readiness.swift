import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotTrust

/// Whether a model can be loaded, and if not, why — never a bare boolean.
public enum Readiness: Sendable, Equatable {
    /// Every required file is present, verified by hash, and its format checks out.
    case ready
    /// Nothing of it is in the cache.
    case notDownloaded
    /// Some files are there; these are missing.
    case partial(missing: [String])
    /// These files are present but damaged (path → reason).
    case corrupt([String: String])
    /// A download of it is under way (or was interrupted and can resume); these files are still missing.
    case downloading(missing: [String])
    /// Present and well-formed, but these files were never verified by hash (`verify` or `status --verify`).
    case unverified([String])

    /// Whether the model is ready and every file has been verified by hash.
    public var isReady: Bool { self == .ready }

    /// Whether the model can be loaded now: every file present and well-formed, whether or not it has been
    /// hashed yet (a cache Python downloaded is loadable before `verify` has looked at it).
    public var isLoadable: Bool {
        switch self {
        case .ready, .unverified: true
        case .notDownloaded, .partial, .corrupt, .downloading: false
        }
    }

    /// A stable one-word name (`ready`, `notDownloaded`, `partial`, …) for JSON and scripts.
    public var name: String {
        switch self {
        case .ready: "ready"
        case .notDownloaded: "notDownloaded"
        case .partial: "partial"
        case .corrupt: "corrupt"
        case .downloading: "downloading"
        case .unverified: "unverified"
        }
    }
}

/// The readiness of one model (a catalog entry or a whole repository) with what was checked.
public struct ReadinessReport: Sendable {
    /// The catalog name, or the repository id.
    public var name: String
    /// The repository checked.
    public var repo: RepoID
    /// The revision checked (the entry's pinned commit, or a branch).
    public var revision: String
    /// The cached commit the revision points to, when there is one.
    public var commit: String?
    /// Whether the model can be loaded, and if not, why.
    public var readiness: Readiness
    /// The files that make up the model (those present and those missing).
    public var files: [String]
    /// What the format checks read, per file (`GGUF v3 · qwen2 · Q4_K_M · 494M parameters · context 32768`).
    public var details: [String: String]
    /// The snapshot folder, when cached (the bundle's folder for a bundled model).
    public var folder: URL?
    /// Files that are Python pickles (they can run code when loaded; ``details`` says what each imports).
    public var pickles: [String] = []
    /// Where the model lives: the Hub cache (`ModelStorage.Kind.redownloadable`) or the app's bundle.
    public var storage: ModelStorage.Kind = .redownloadable
}
