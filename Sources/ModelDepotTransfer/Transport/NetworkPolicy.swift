import Foundation
import ModelDepotCore

/// What the network looks like right now, as Apple's `NWPath` describes it: usable or not, expensive (cellular,
/// a personal hotspot), constrained (Low Data Mode).
package struct NetworkPathStatus: Sendable, Equatable {
    package var isSatisfied: Bool
    package var isExpensive: Bool
    package var isConstrained: Bool

    package init(isSatisfied: Bool = true, isExpensive: Bool = false, isConstrained: Bool = false) {
        self.isSatisfied = isSatisfied
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
    }

    /// Wi-Fi or Ethernet without Low Data Mode: what every policy allows.
    package static let unmetered = NetworkPathStatus()
}

/// Tells the engine what the network is like and when that changes. Apple apps give one over
/// `NWPathMonitor` (part 2 of the Apple-native work); without one, the network counts as usable and unmetered,
/// which is all Linux can say.
package protocol NetworkConditions: Sendable {
    /// The path now.
    func current() async -> NetworkPathStatus
    /// Each later change of the path.
    func changes() -> AsyncStream<NetworkPathStatus>
}

/// Which networks downloads may use: a portable value the engine enforces before each file, and that Apple code
/// also hands to URLSession (`allowsExpensiveNetworkAccess`, `allowsConstrainedNetworkAccess`,
/// `waitsForConnectivity`, which Linux's URLSession does not have).
public struct NetworkPolicy: Sendable, Hashable {
    /// Cellular data and personal hotspots may be used.
    public var allowsExpensive: Bool
    /// Networks in Low Data Mode may be used.
    public var allowsConstrained: Bool
    /// With no usable network, wait for one (visibly) rather than fail.
    public var waitsForConnectivity: Bool

    public init(allowsExpensive: Bool = true, allowsConstrained: Bool = true, waitsForConnectivity: Bool = true) {
        self.allowsExpensive = allowsExpensive
        self.allowsConstrained = allowsConstrained
        self.waitsForConnectivity = waitsForConnectivity
    }

    /// Any network.
    public static let any = NetworkPolicy()
    /// Wi-Fi (or Ethernet) only, and not in Low Data Mode: the usual setting for multi-gigabyte models.
    public static let unmeteredOnly = NetworkPolicy(allowsExpensive: false, allowsConstrained: false)

    /// What a download does on `path`.
    package enum Decision: Sendable, Equatable {
        case proceed
        /// Wait for another network; the reason is for people.
        case wait(String)
        /// Give up now; the reason is for people.
        case fail(String)
    }

    /// The decision for `path`.
    package func decision(for path: NetworkPathStatus) -> Decision {
        guard path.isSatisfied else {
            let reason = "no network connection"
            return waitsForConnectivity ? .wait(reason) : .fail(reason)
        }
        if path.isExpensive && !allowsExpensive {
            return .wait("cellular data is off for downloads; waiting for Wi-Fi")
        }
        if path.isConstrained && !allowsConstrained { return .wait("Low Data Mode is on; waiting for another network") }
        return .proceed
    }

    /// The network stopped being one the policy allows while a file was downloading: the file stops where it is
    /// (its bytes and resume record kept) and goes on once ``waitUntilAllowed(by:waiting:)`` returns.
    package struct Interrupted: Error, Equatable {
        package let reason: String
    }

    /// Runs `operation` while `conditions` allow downloads: the first change of the path to one the policy does not
    /// allow cancels it and throws ``Interrupted``. Without `conditions`, just runs it.
    package func whileAllowed<T: Sendable>(
        by conditions: (any NetworkConditions)?, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard let conditions else { return try await operation() }
        let changes = conditions.changes()
        // A change between the caller's check and the subscription would be missed: look again once subscribed.
        switch decision(for: await conditions.current()) {
        case .proceed: break
        case .wait(let reason), .fail(let reason): throw Interrupted(reason: reason)
        }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                for await path in changes {
                    switch decision(for: path) {
                    case .proceed: continue
                    case .wait(let reason), .fail(let reason): throw Interrupted(reason: reason)
                    }
                }
                return nil
            }
            defer { group.cancelAll() }
            while let finished = try await group.next() {
                if let value = finished { return value }
            }
            throw ModelDepotError.cancelled()
        }
    }

    /// Returns once `conditions` allow a download, telling `waiting` why it waits (and nil when the wait ends).
    ///
    /// - Throws: `network` when there is no connection and the policy does not wait; `cancelled` when the task
    ///   is cancelled while waiting.
    package func waitUntilAllowed(
        by conditions: (any NetworkConditions)?, waiting: (TransferWait?) -> Void
    ) async throws {
        guard let conditions else { return }
        let changes = conditions.changes()
        var path = await conditions.current()
        var waited = false
        while true {
            switch decision(for: path) {
            case .proceed:
                if waited { waiting(nil) }
                return
            case .fail(let reason):
                throw ModelDepotError(
                    .network, "Cannot download: \(reason). Connect to a network and try again.")
            case .wait(let reason):
                waiting(.network(reason))
                waited = true
            }
            var next: NetworkPathStatus?
            for await change in changes {
                next = change
                break
            }
            guard let next, !Task.isCancelled else { throw ModelDepotError.cancelled() }
            path = next
        }
    }
}
