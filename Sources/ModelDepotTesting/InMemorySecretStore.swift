import ModelDepotHub
import Synchronization

/// A ``SecretStore`` in memory, for tests and previews: what an app keeps in the keychain, without one. A
/// failure to inject makes every call throw, as a keychain the app may not read does.
public final class InMemorySecretStore: SecretStore {
    private let secrets = Mutex<[KeychainItem: String]>([:])
    private let failure = Mutex<(any Error)?>(nil)

    public init(_ secrets: [KeychainItem: String] = [:]) {
        self.secrets.withLock { $0 = secrets }
    }

    /// Makes every later call throw `error` (nil: work again).
    public func fail(with error: (any Error)?) { failure.withLock { $0 = error } }

    public func read(_ item: KeychainItem) throws -> String? {
        if let error = failure.withLock({ $0 }) { throw error }
        return secrets.withLock { $0[item] }
    }

    public func write(_ secret: String, to item: KeychainItem) throws {
        if let error = failure.withLock({ $0 }) { throw error }
        secrets.withLock { $0[item] = secret }
    }

    public func delete(_ item: KeychainItem) throws {
        if let error = failure.withLock({ $0 }) { throw error }
        _ = secrets.withLock { $0.removeValue(forKey: item) }
    }
}
