import ArgumentParser
import Foundation
import ModelDepot

/// Where the cache and the Hub are, shared by every command that uses them. Unset options follow the same
/// environment variables as Python's `huggingface_hub` (HF_HUB_CACHE, HF_HOME, HF_ENDPOINT, HF_TOKEN, …).
struct HubOptions: ParsableArguments {
    @Option(help: "The cache folder (default: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub).")
    var cacheDir: String?

    @Option(help: "The Hub to use (default: HF_ENDPOINT, else https://huggingface.co).")
    var endpoint: String?

    @Option(help: "The access token (default: HF_TOKEN, else the token file HF_TOKEN_PATH or HF_HOME/token).")
    var token: String?

    @Flag(help: "Use only the cache; never touch the network (also HF_HUB_OFFLINE=1).")
    var offline = false

    @Option(help: "The repository type: model, dataset or space.")
    var repoType: String = "model"

    init() {}

    init(cacheDir: String?) {
        self.cacheDir = cacheDir
    }

    var environment: HubEnvironment { HubEnvironment() }

    var cache: HubCache {
        guard let cacheDir else { return HubCache(environment: environment) }
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let expanded = cacheDir.hasPrefix("~/") ? NSHomeDirectory() + cacheDir.dropFirst() : cacheDir
        return HubCache(root: URL(fileURLWithPath: expanded, relativeTo: cwd))
    }

    func type() throws -> RepoType {
        guard let type = RepoType(rawValue: repoType.lowercased()) else {
            throw ModelDepotError(
                .invalidArgument,
                "'\(repoType)' is not a repository type; use one of: \(RepoType.allCases.map(\.rawValue).joined(separator: ", "))."
            )
        }
        return type
    }

    func hubClient() throws -> HubClient {
        let environment = self.environment
        let base = endpoint ?? environment.endpoint
        guard let url = URL(string: base), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            url.host != nil
        else {
            throw ModelDepotError(
                .invalidURL, "'\(base)' is not a Hub URL; give one like https://huggingface.co or http://mirror:8080.")
        }
        let token = self.token.flatMap { $0.isEmpty ? nil : $0 } ?? environment.token
        return HubClient(endpoint: url, token: token, offline: offline || environment.isOffline)
    }
}
