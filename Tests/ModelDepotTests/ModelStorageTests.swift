import Foundation
import ModelDepot
import Testing

/// Where models live on each platform, resolved from an injected platform (no Apple device needed).
@Suite struct ModelStorageTests {
    static let container = URL(fileURLWithPath: "/var/mobile/Containers/Data/Application/ABC")

    static func platform(_ system: StoragePlatform.System, isApp: Bool, bundle: URL? = nil) -> StoragePlatform {
        StoragePlatform(
            system: system, isApp: isApp,
            applicationSupportDirectory: container.appendingPathComponent("Library/Application Support"),
            cachesDirectory: container.appendingPathComponent("Library/Caches"),
            documentsDirectory: container.appendingPathComponent("Documents"), bundleResourcesDirectory: bundle)
    }

    static let noVariables = HubEnvironment(variables: ["HOME": "/home/ana"])

    @Test func theCommandLineSharesPythonsCache() {
        for system in [StoragePlatform.System.linux, .macOS] {
            let storage = ModelStorage(platform: Self.platform(system, isApp: false), environment: Self.noVariables)
            #expect(storage.cacheDirectory.path == "/home/ana/.cache/huggingface/hub", "\(system)")
            #expect(storage.folder(for: .userAdded)?.path == "/home/ana/.cache/huggingface/models")
            #expect(storage.folder(for: .bundled) == nil)
        }
    }

    @Test func anAppKeepsDownloadsInApplicationSupportOrCachesNeverInItsBackedUpHome() {
        for system in [StoragePlatform.System.iOS, .visionOS, .macOS] {
            let platform = Self.platform(system, isApp: true, bundle: URL(fileURLWithPath: "/App.app"))
            let kept = ModelStorage(platform: platform, environment: Self.noVariables)
            #expect(kept.cacheDirectory.path == Self.container.path + "/Library/Application Support/ModelDepot/hub")
            let purgeable = ModelStorage(platform: platform, environment: Self.noVariables, placement: .caches)
            #expect(purgeable.cacheDirectory.path == Self.container.path + "/Library/Caches/ModelDepot/hub")
            #expect(kept.folder(for: .userAdded)?.path == Self.container.path + "/Documents/models")
            #expect(kept.folder(for: .bundled)?.path == "/App.app/Models")
            #expect(!kept.cacheDirectory.path.hasPrefix("/home/ana"))
        }
    }

    @Test func anExplicitCacheWinsEverywhere() {
        let environment = HubEnvironment(variables: ["HF_HUB_CACHE": "/data/hub", "HOME": "/home/ana"])
        for (system, isApp) in [(StoragePlatform.System.linux, false), (.iOS, true)] {
            let storage = ModelStorage(platform: Self.platform(system, isApp: isApp), environment: environment)
            #expect(storage.cacheDirectory.path == "/data/hub", "\(system)")
        }
        let home = HubEnvironment(variables: ["HF_HOME": "/data/hf"])
        #expect(
            ModelStorage(platform: Self.platform(.iOS, isApp: true), environment: home).cacheDirectory.path
                == "/data/hf/hub")
    }

    @Test func onlyRedownloadableModelsAreKeptOutOfBackups() {
        let storage = ModelStorage(platform: Self.platform(.iOS, isApp: true), environment: Self.noVariables)
        #expect(ModelStorage.Kind.allCases.filter(storage.isExcludedFromBackup) == [.redownloadable])
    }

    @Test func thisProcessIsACommandLineToolOnLinux() {
        #if os(Linux)
            #expect(StoragePlatform.current.system == .linux && !StoragePlatform.current.isApp)
            #expect(HubCache(environment: Self.noVariables).root.path == "/home/ana/.cache/huggingface/hub")
        #endif
    }
}
