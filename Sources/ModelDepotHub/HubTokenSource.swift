import Foundation
import ModelDepotCore
import ModelDepotPlatform

/// A keychain item that holds a secret: its service and account, and the access group apps of one team share it
/// through (nil: the app's own).
public struct KeychainItem: Sendable, Hashable {
    public var service: String
    public var account: String
    public var accessGroup: String?

    public init(service: String, account: String, accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }
}

/// Where secrets are kept: Apple's keychain in apps (`SystemKeychain`, Apple platforms only), an in-memory store in tests.
public protocol SecretStore: Sendable {
    /// The item's secret; nil when there is none.
    func read(_ item: KeychainItem) throws -> String?
    /// Stores `secret`, replacing what the item held.
    func write(_ secret: String, to item: KeychainItem) throws
    /// Removes the item; nothing happens when there is none.
    func delete(_ item: KeychainItem) throws
}

#if canImport(Security)
    /// Apple's keychain: generic-password items, readable after the first unlock (a background relaunch on a
    /// locked device needs its token). Never compiled here: see `Keychain` in the platform layer.
    public struct SystemKeychain: SecretStore {
        public init() {}

        public func read(_ item: KeychainItem) throws -> String? {
            try Keychain.read(service: item.service, account: item.account, accessGroup: item.accessGroup)
        }

        public func write(_ secret: String, to item: KeychainItem) throws {
            try Keychain.write(secret, service: item.service, account: item.account, accessGroup: item.accessGroup)
        }

        public func delete(_ item: KeychainItem) throws {
            try Keychain.delete(service: item.service, account: item.account, accessGroup: item.accessGroup)
        }
    }
#endif

/// Where the Hub token comes from. Whatever the source, the token itself is never logged nor printed: this
/// type's description names the source only.
///
/// ```swift
/// var configuration = ModelManager.Configuration()
/// configuration.environment.explicitToken =
///     try HubTokenSource.keychain(KeychainItem(service: "co.huggingface", account: "me"), store: SystemKeychain())
///     .token()
/// let models = try ModelManager(configuration: configuration)
/// ```
public enum HubTokenSource: Sendable, CustomStringConvertible {
    /// As Python finds it: `HF_TOKEN`, `HUGGING_FACE_HUB_TOKEN`, then the token file.
    case environment(HubEnvironment)
    /// A file holding the token (surrounding whitespace and line breaks are ignored).
    case file(URL)
    /// A token the app already has.
    case value(String)
    /// A keychain item.
    case keychain(KeychainItem, store: any SecretStore)
    /// No token: public repositories only.
    case none

    /// The token; nil when the source holds none.
    ///
    /// - Throws: `unauthorized` when the file or the keychain cannot be read, saying which source (never the
    ///   token).
    public func token() throws -> String? {
        switch self {
        case .environment(let environment):
            return environment.token
        case .file(let url):
            guard FileManager.default.fileExists(atPath: url.path) else { return nil }
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw ModelDepotError(.unauthorized, "Cannot read the token file \(url.path); check its permissions.")
            }
            return HubEnvironment.cleanToken(String(decoding: data, as: UTF8.self))
        case .value(let token):
            return HubEnvironment.cleanToken(token)
        case .keychain(let item, let store):
            do {
                return try store.read(item).flatMap(HubEnvironment.cleanToken)
            } catch {
                throw ModelDepotError(
                    .unauthorized,
                    "Cannot read the Hub token from the keychain item \(item.service)/\(item.account): \(error). Store it again, or check the app's keychain access group.",
                    underlying: error)
            }
        case .none:
            return nil
        }
    }

    public var description: String {
        switch self {
        case .environment: "the environment (HF_TOKEN, the token file)"
        case .file(let url): "the token file \(url.path)"
        case .value: "a token the app gave"
        case .keychain(let item, _): "the keychain item \(item.service)/\(item.account)"
        case .none: "no token"
        }
    }
}

extension HubClient {
    /// A client for `endpoint` whose token comes from `tokenSource`.
    ///
    /// - Throws: what ``HubTokenSource/token()`` throws.
    package init(endpoint: URL, tokenSource: HubTokenSource, offline: Bool = false) throws {
        var token = try tokenSource.token()
        if case .environment(let environment) = tokenSource {
            if environment.explicitToken != nil {
                // A token named for the environment's hub is that hub's: another endpoint never gets it.
                token = environment.token(for: endpoint)
            } else if !HubEnvironment.sendsImplicitToken(to: endpoint, endpoint: endpoint) {
                // The implicit token goes to `endpoint` only over https, or http on this machine.
                token = nil
            }
        }
        self.init(endpoint: endpoint, token: token, offline: offline)
    }
}
