import Foundation
import ModelDepotCore
import ModelDepotTransfer

/// Runs `operation`, failing with `stalled` if it takes longer than `seconds`: a guard that turns a hang into
/// a failure, never a measurement (the operation ends as soon as it can).
public func withTimeLimit<T: Sendable>(
    _ seconds: Int = 90, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw ModelDepotError(.stalled, "The operation did not finish within \(seconds) s.")
        }
        return value
    }
}

/// Runs blocking `work` (a pipe read, a process wait) on a thread of its own and awaits its result. Neither
/// the cooperative pool nor Dispatch's global queues are used: both have only as many threads as cores (two
/// here), so a test blocking them for seconds stalls every other test, and the servers under test with them.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.start()
    }
}
