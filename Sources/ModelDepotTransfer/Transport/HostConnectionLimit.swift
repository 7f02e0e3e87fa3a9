import Foundation
import ModelDepotCore
import Synchronization

/// At most `limit` requests in flight to one origin (scheme, host and port) across every download and API call
/// that shares this value — two pulls from one host together, not each on its own. Counted in requests, not in
/// sockets: a request holds its permit from `send` until its body ends, fails, the reader that iterated it goes
/// (the engine stops at a range's last byte), or the body is dropped unread.
package final class HostConnectionLimit: Sendable {
    package let limit: Int
    private let budgets = Mutex<[String: ConnectionBudget]>([:])

    package init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// One limit per distinct value in this process, so managers built from equal configurations share it.
    package static func shared(limit: Int) -> HostConnectionLimit {
        sharedLimits.withLock { limits in
            if let existing = limits[max(1, limit)] { return existing }
            let made = HostConnectionLimit(limit: limit)
            limits[made.limit] = made
            return made
        }
    }
    private static let sharedLimits = Mutex<[Int: HostConnectionLimit]>([:])

    /// Waits for a permit for `url`'s origin, telling ``AdmissionWait/observer`` while it waits (a stall
    /// watchdog must not take a request queued here for a silent server).
    ///
    /// - Throws: `cancelled` when the task is cancelled while it waits.
    package func permit(for url: URL) async throws -> Permit {
        let budget = budget(for: Self.origin(of: url))
        if !budget.tryAcquire() {
            let observer = AdmissionWait.observer
            observer?.changed(true)
            defer { observer?.changed(false) }
            do {
                try await budget.acquire()
            } catch {
                throw ModelDepotError.cancelled()
            }
        }
        return Permit(budget)
    }

    /// Permits of `url`'s origin free right now.
    package func free(for url: URL) -> Int { budget(for: Self.origin(of: url)).free }

    /// Requests of `url`'s origin waiting for a permit right now.
    package func waiting(for url: URL) -> Int { budget(for: Self.origin(of: url)).waiting }

    private func budget(for origin: String) -> ConnectionBudget {
        budgets.withLock { budgets in
            if let existing = budgets[origin] { return existing }
            let made = ConnectionBudget(limit: limit)
            budgets[origin] = made
            return made
        }
    }

    /// `scheme://host:port`, lowercased, with the scheme's default port written out.
    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }

    /// One request's share of the limit: given back once, by ``release()`` or when the last reference goes.
    package final class Permit: Sendable {
        private let budget: ConnectionBudget
        private let held = Mutex(true)

        init(_ budget: ConnectionBudget) { self.budget = budget }

        package func release() {
            let wasHeld = held.withLock { held in
                defer { held = false }
                return held
            }
            if wasHeld { budget.release() }
        }

        deinit { release() }
    }
}

/// Where a request waiting for a ``HostConnectionLimit`` permit says so: the engine's stall watchdog binds an
/// observer for the requests it watches and counts no stall while one waits.
package enum AdmissionWait {
    // A class, not a bare closure: in release builds, Swift 6.3's specialized `TaskLocal.withValue` for an
    // optional `@Sendable` function type pushed the value with a null type and crashed every pull.
    @TaskLocal package static var observer: Observer?

    package final class Observer: Sendable {
        package let changed: @Sendable (_ waiting: Bool) -> Void
        package init(_ changed: @escaping @Sendable (_ waiting: Bool) -> Void) { self.changed = changed }
    }
}

/// A transport whose requests wait for a ``HostConnectionLimit`` permit for their origin. Redirects are
/// followed by the caller hop by hop, each hop a request of its own: a hop's response is dropped (and its permit
/// given back) before the next is sent, so chains never hold two permits.
package struct HostLimitedTransport: HTTPTransport {
    package let base: any HTTPTransport
    package let limit: HostConnectionLimit

    package init(_ base: any HTTPTransport, limit: HostConnectionLimit) {
        self.base = base
        self.limit = limit
    }

    package func send(_ request: TransportRequest) async throws -> TransportResponse {
        let permit = try await limit.permit(for: request.url)
        var response: TransportResponse
        do {
            response = try await base.send(request)
        } catch {
            permit.release()
            throw error
        }
        response.body = response.body.releasing(permit)
        return response
    }

    package func proxy(for url: URL) -> String? { base.proxy(for: url) }
}

extension TransportBody {
    /// The same body, giving `permit` back at its end, at its first error, when the reader that iterated it goes
    /// away (the engine stops at a range's last byte and never asks for the end), or when the body is dropped
    /// unread.
    func releasing(_ permit: HostConnectionLimit.Permit) -> TransportBody {
        let base = self
        return TransportBody(makeNext: {
            let next = base.makeAsyncIterator().nextChunk
            let reader = PermitLease(permit)
            return {
                do {
                    guard let chunk = try await next() else {
                        reader.permit.release()
                        return nil
                    }
                    return chunk
                } catch {
                    reader.permit.release()
                    throw error
                }
            }
        })
    }
}

/// Gives a permit back when the iterator that holds it is dropped, though the response it came with may live on.
private final class PermitLease: Sendable {
    let permit: HostConnectionLimit.Permit
    init(_ permit: HostConnectionLimit.Permit) { self.permit = permit }
    deinit { permit.release() }
}
