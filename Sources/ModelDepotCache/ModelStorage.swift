import Foundation
import ModelDepotCore

/// Where models live, per platform and per kind of model.
///
/// - On Linux and for the macOS command line, downloaded models go to Python's Hub cache (`HF_HUB_CACHE`,
///   `HF_HOME/hub`, `~/.cache/huggingface/hub`), so `modeldepot` and `huggingface_hub` share one cache.
/// - In an app (iOS, iPadOS, tvOS, watchOS, visionOS, or a macOS `.app`) the home folder is the app's container,
///   which iOS backs up: downloaded models go to Application Support (kept, excluded from backup) or Caches
///   (the system may purge them when space runs low), as the app chooses. `HF_HUB_CACHE` still wins when set.
///
/// The three kinds of models an app handles, as the reference apps name them:
/// ``Kind/bundled`` (read-only, shipped inside the app), ``Kind/userAdded`` (the user's own files, backed up)
/// and ``Kind/redownloadable`` (what ModelDepot downloads into its Hub cache).
///
/// Pure: every answer comes from a ``StoragePlatform`` value, so each platform's rules are tested anywhere.
public struct ModelStorage: Sendable {
    /// The kinds of models an app holds, each with its own place and backup rule.
    public enum Kind: Sendable, Hashable, CaseIterable {
        /// Shipped in the app bundle: read-only, never downloaded or deleted.
        case bundled
        /// Added by the user (imported files): the user's data, backed up.
        case userAdded
        /// Downloaded and verified by ModelDepot; can be downloaded again, so never backed up.
        case redownloadable
    }

    /// Where an app keeps re-downloadable models.
    public enum AppPlacement: Sendable, Hashable {
        /// Application Support: kept until the app deletes them, excluded from backup. The default.
        case applicationSupport
        /// Caches: the system may delete them when the device runs low on space (the app downloads again).
        case caches
    }

    /// The platform resolved for.
    public let platform: StoragePlatform
    /// The environment, whose `HF_HUB_CACHE` or `HF_HOME` wins over the platform's default.
    public let environment: HubEnvironment
    /// Where an app wants its re-downloadable models.
    public let placement: AppPlacement

    /// A resolver for `platform`; apps use the defaults, tests inject a platform.
    public init(
        platform: StoragePlatform = .current, environment: HubEnvironment = HubEnvironment(),
        placement: AppPlacement = .applicationSupport
    ) {
        self.platform = platform
        self.environment = environment
        self.placement = placement
    }

    /// The Hub cache downloads go into.
    public var cacheDirectory: URL {
        if environment.hasExplicitCache || !platform.isApp { return environment.cacheDirectory }
        let base: URL
        switch placement {
        case .applicationSupport: base = platform.applicationSupportDirectory
        case .caches: base = platform.cachesDirectory
        }
        return base.appendingPathComponent("ModelDepot", isDirectory: true).appendingPathComponent(
            "hub", isDirectory: true)
    }

    /// The folder for one kind of model: the bundle's `Models` folder (nil without a bundle), the user's
    /// `models` folder in Documents (apps) or next to the Hub cache (`HF_HOME/models`, command line), or the
    /// Hub cache.
    public func folder(for kind: Kind) -> URL? {
        switch kind {
        case .bundled:
            return platform.bundleResourcesDirectory?.appendingPathComponent("Models", isDirectory: true)
        case .userAdded:
            return platform.isApp
                ? platform.documentsDirectory.appendingPathComponent("models", isDirectory: true)
                : environment.home.appendingPathComponent("models", isDirectory: true)
        case .redownloadable:
            return cacheDirectory
        }
    }

    /// Where ModelDepot remembers which bundled models it has verified, and for which build of the app: the
    /// app's Application Support (apps), or beside the Hub cache in `HF_HOME` (command line) — never inside the
    /// cache, whose every top-level folder Python reads as a repository.
    package var verificationRecordsDirectory: URL {
        let base =
            platform.isApp
            ? platform.applicationSupportDirectory.appendingPathComponent("ModelDepot", isDirectory: true)
            : environment.home.appendingPathComponent("modeldepot", isDirectory: true)
        return base.appendingPathComponent("bundled-verified", isDirectory: true)
    }

    /// Whether the system or a backup tool should skip the folder: only re-downloadable models.
    public func isExcludedFromBackup(_ kind: Kind) -> Bool { kind == .redownloadable }
}

/// The facts about the running platform that decide where models live; ``current`` reads them, tests make
/// their own.
public struct StoragePlatform: Sendable, Hashable {
    /// The operating system.
    public enum System: String, Sendable, Hashable { case linux, macOS, iOS, tvOS, watchOS, visionOS, other }

    /// The system resolved for.
    public var system: System
    /// True for an app (every Apple platform but a macOS command-line tool): its home is a container.
    public var isApp: Bool
    /// The app's Application Support folder.
    public var applicationSupportDirectory: URL
    /// The app's Caches folder.
    public var cachesDirectory: URL
    /// The app's Documents folder.
    public var documentsDirectory: URL
    /// The app bundle's resources, when there is a bundle.
    public var bundleResourcesDirectory: URL?
    /// The app's build number (`CFBundleVersion` in its Info.plist), when there is one: bundled models are
    /// verified once per build.
    public var bundleVersion: String?

    /// A platform; ``current`` is this process's.
    public init(
        system: System, isApp: Bool, applicationSupportDirectory: URL, cachesDirectory: URL,
        documentsDirectory: URL, bundleResourcesDirectory: URL? = nil, bundleVersion: String? = nil
    ) {
        self.system = system
        self.isApp = isApp
        self.applicationSupportDirectory = applicationSupportDirectory
        self.cachesDirectory = cachesDirectory
        self.documentsDirectory = documentsDirectory
        self.bundleResourcesDirectory = bundleResourcesDirectory
        self.bundleVersion = bundleVersion
    }

    /// This process: the system it was built for, whether it runs as an app (on macOS: from a `.app` bundle),
    /// and the user-domain folders `FileManager.urls(for:in:)` gives.
    public static var current: StoragePlatform {
        #if os(Linux)
            let system = System.linux
        #elseif os(macOS)
            let system = System.macOS
        #elseif os(iOS)
            let system = System.iOS
        #elseif os(tvOS)
            let system = System.tvOS
        #elseif os(watchOS)
            let system = System.watchOS
        #elseif os(visionOS)
            let system = System.visionOS
        #else
            let system = System.other
        #endif
        let isBundledApp = Bundle.main.bundleURL.pathExtension == "app"
        let isApp = system == .macOS ? isBundledApp : system != .linux && system != .other
        let files = FileManager.default
        let home = URL(fileURLWithPath: NSHomeDirectory())
        func folder(_ directory: FileManager.SearchPathDirectory, _ fallback: String) -> URL {
            files.urls(for: directory, in: .userDomainMask).first ?? home.appendingPathComponent(fallback)
        }
        return StoragePlatform(
            system: system, isApp: isApp,
            applicationSupportDirectory: folder(.applicationSupportDirectory, "Library/Application Support"),
            cachesDirectory: folder(.cachesDirectory, "Library/Caches"),
            documentsDirectory: folder(.documentDirectory, "Documents"),
            bundleResourcesDirectory: isBundledApp ? Bundle.main.resourceURL : nil,
            // Bundle.object(forInfoDictionaryKey:) reads the app's Info.plist; command-line tools have none.
            bundleVersion: isApp ? Bundle.main.object(forInfoDictionaryKey: "CFBundleVersion") as? String : nil)
    }
}
