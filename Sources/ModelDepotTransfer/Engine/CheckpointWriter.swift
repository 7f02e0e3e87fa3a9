import Dispatch
import Synchronization

/// Runs resume-sidecar saves on a thread of their own, so connections never wait for the file system.
///
/// A 256 MiB download asks for ~256 saves; done inline, when each still wrote a file and renamed it (~1 ms
/// here), they held the cooperative pool's threads for a quarter of a second while every socket backed up. A request that arrives while a save runs is folded into one more save
/// afterwards; each save reads the state when it starts, so it records everything written until then.
final class CheckpointWriter: Sendable {
    private struct State {
        var running = false
        var pending = false
        var closed = false
        var save: (@Sendable () -> Void)?
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "ModelDepot.checkpoint")

    /// Asks for `save` to run soon; returns at once.
    func request(_ save: @escaping @Sendable () -> Void) {
        let start = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.save = save
            if state.running {
                state.pending = true
                return false
            }
            state.running = true
            return true
        }
        if start { queue.async { self.drain() } }
    }

    private func drain() {
        while true {
            state.withLock { $0.save }?()
            let (again, waiters) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                if state.pending && !state.closed {
                    state.pending = false
                    return (true, [])
                }
                state.running = false
                state.pending = false
                defer { state.waiters = [] }
                return (false, state.waiters)
            }
            for waiter in waiters { waiter.resume() }
            if !again { return }
        }
    }

    /// Refuses further requests and waits for the save in progress, if any. After it returns no save of
    /// this writer touches the sidecar again (the run may delete it, or start a new file over it).
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                state.closed = true
                guard state.running else { return true }
                state.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
