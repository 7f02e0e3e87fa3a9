import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer

// The initializers before `ModelManager.Configuration` (CHANGELOG.md, 0.2): kept for one release, each forwarding
// to the one way the engine is built now.
extension ModelManager {
    /// A manager that pulls from `hub` into `cache` with the engine tuned by `configuration`.
    @available(
        *, deprecated, message: "Use init(configuration:) with ModelManager.Configuration(endpoint:token:cache:)"
    )
    public init(
        hub: HubClient, cache: HubCache, configuration: DownloadConfiguration = DownloadConfiguration(),
        bundled: BundledModels? = nil
    ) {
        self.init(
            pull: SnapshotDownloader(hub: hub, cache: cache, downloader: Downloader(configuration: configuration)),
            bundled: bundled)
    }

    /// A manager for `cache`, offline when the environment's endpoint is unusable.
    @available(*, deprecated, message: "Use init(managingCache:)")
    public init(cache: HubCache, environment: HubEnvironment = HubEnvironment(), bundled: BundledModels? = nil) {
        var configuration = Configuration(environment: environment)
        configuration.cache = cache
        configuration.bundled = bundled
        self.init(managingCache: configuration)
    }

    /// A manager for the cache, endpoint, token and offline mode the environment names.
    @available(*, deprecated, message: "Use init(configuration:) with ModelManager.Configuration(environment:)")
    public init(environment: HubEnvironment, bundled: BundledModels? = nil) throws {
        var configuration = Configuration(environment: environment)
        configuration.bundled = bundled
        try self.init(configuration: configuration)
    }

    /// A manager for the environment's cache and hub, with models shipped inside the app.
    @available(*, deprecated, message: "Use init(configuration:) and set Configuration.bundled")
    public init(bundled: BundledModels) throws {
        var configuration = Configuration()
        configuration.bundled = bundled
        try self.init(configuration: configuration)
    }
}
