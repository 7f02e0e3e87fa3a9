import Foundation
import ModelDepotCore
import Synchronization

/// What the background session's glue asks of the system: on Apple platforms a background `URLSession`, in tests a
/// simulation that behaves as Apple documents it.
package protocol BackgroundTaskSystem: Sendable {
    /// Creates a download task for `request`, not yet resumed, and returns its `taskIdentifier`
    /// (`URLSession.downloadTask(with:)`, or `downloadTask(withResumeData:)` when the request carries resume data;
    /// `earliestBeginDate` and `countOfBytesClientExpectsToReceive` set from it).
    func makeTask(_ request: BackgroundTransfer.PieceRequest) -> Int
    /// Lets task `task` run (`URLSessionTask.resume()`).
    func resume(_ task: Int)
    /// Stops task `task` (`URLSessionTask.cancel()`); its `didCompleteWithError` still arrives, with
    /// `NSURLErrorCancelled`, and is ignored.
    func cancel(_ task: Int)
}

/// Every background download of the app and what the system reported about them, in one place behind one lock:
/// the glue (`BackgroundDownloads`, Apple only) forwards each delegate call and each of the app's requests here, and performs
/// what comes back. Portable, and tested on Linux through the same calls.
///
/// A record is saved before the tasks it names are resumed, so a relaunch never meets a task it does not know of
/// its own making; tasks the system still runs but no record names are cancelled, and pieces whose task the system
/// no longer has are asked for again (``reconcile(runningTasks:)``).
package final class BackgroundSessionState: Sendable {
    /// A file that ended: placed and verified, or failed with the reason.
    package typealias Finished = @Sendable (URL, Result<URL, any Error>) -> Void

    struct State {
        var transfers: [String: BackgroundTransfer] = [:]
        /// Which transfer (by destination path) each task out belongs to.
        var owners: [Int: String] = [:]
        /// The system's completion handler for this launch's events, until they are all delivered.
        var systemCompletion: (@Sendable () -> Void)?
        /// Whether the session said every event is delivered before the app handed over the system's handler.
        var eventsDelivered = false
        /// Tasks this launch made: a relaunch's list of the session's tasks, taken before some of them existed,
        /// must not make them forgotten.
        var madeHere: Set<Int> = []

        /// Forgets every task out of transfer `key` (their answers are then ignored) and returns them to cancel.
        mutating func dropTasks(of key: String) -> [Int] {
            guard var transfer = transfers[key] else { return [] }
            let tasks = transfer.tasksOut
            transfer.forget(tasksNotIn: [])
            transfers[key] = transfer
            for task in tasks { owners[task] = nil }
            return tasks
        }
    }

    private let state = Mutex(State())
    private let system: any BackgroundTaskSystem
    private let onFinished: Finished
    private let now: @Sendable () -> Date

    /// Reads back the records of `destinations` (downloads earlier launches started).
    package init(
        system: any BackgroundTaskSystem, resuming destinations: [URL] = [],
        now: @escaping @Sendable () -> Date = Date.init,
        onFinished: @escaping Finished
    ) {
        self.system = system
        self.onFinished = onFinished
        self.now = now
        state.withLock { state in
            for destination in destinations {
                guard let transfer = try? BackgroundTransfer.load(for: destination) else { continue }
                state.transfers[destination.path] = transfer
                for task in transfer.tasksOut { state.owners[task] = destination.path }
            }
        }
    }

    /// The transfer of `destination`, as it stands.
    package func transfer(of destination: URL) -> BackgroundTransfer? {
        state.withLock { $0.transfers[destination.path] }
    }

    /// Starts (or goes on with) downloading `url` to `destination`: `size` bytes whose SHA-256 is `sha256`. A
    /// transfer that failed starts over its counts (the person asked again), keeping its pieces; an empty file is
    /// placed at once.
    ///
    /// - Throws: when the record cannot be written.
    package func download(url: URL, to destination: URL, size: Int64, sha256: String, pieceSize: Int64 = 64 << 20)
        throws
    {
        try settle(destination.path) { state in
            let key = destination.path
            if let known = state.transfers[key], known.size == size, known.sha256 == sha256.lowercased() {
                var transfer = known
                if transfer.failure != nil || transfer.url != url {
                    transfer.retry(from: url)
                    try transfer.save()
                }
                state.transfers[key] = transfer
                return []
            }
            // Another file at this destination (a new revision): what was fetched of the old one goes.
            let cancel = state.dropTasks(of: key)
            if let old = state.transfers[key] { try? FileManager.default.removeItem(at: old.partialFile) }
            state.transfers[key] = BackgroundTransfer(
                url: url, destination: destination, size: size, sha256: sha256, pieceSize: pieceSize)
            return cancel
        }
    }

    /// Takes over `transfer` (a file handed over from the engine, ``ContinuedProcessing/handOver(_:to:pieceSize:)``)
    /// and starts its missing pieces; one already complete is verified and placed.
    ///
    /// - Throws: when the record cannot be written.
    package func adopt(_ transfer: BackgroundTransfer) throws {
        try settle(transfer.destination.path) { state in
            let cancel = state.dropTasks(of: transfer.destination.path)
            state.transfers[transfer.destination.path] = transfer
            return cancel
        }
    }

    /// Puts the transfer of `key` in place with `change` (which returns tasks to cancel), then places it when
    /// complete or starts its missing pieces; the system is told after the lock is released.
    private func settle(_ key: String, _ change: (inout State) throws -> [Int]) throws {
        let (cancel, resume, ended) = try state.withLock { state -> ([Int], [Int], (URL, Result<URL, any Error>)?) in
            let cancel = try change(&state)
            if state.transfers[key]?.isComplete == true { return (cancel, [], Self.finish(key, in: &state)) }
            return (cancel, try start(key, in: &state), nil)
        }
        cancel.forEach(system.cancel)
        resume.forEach(system.resume)
        if let (destination, result) = ended { onFinished(destination, result) }
    }

    /// The delegate's `urlSession(_:downloadTask:didFinishDownloadingTo:)`: `location` is deleted when it returns,
    /// so the piece is checked and spliced now.
    package func didFinishDownloading(task: Int, status: Int, headers: [String: String], location: URL) {
        let cancel = state.withLock { state -> [Int] in
            guard let key = state.owners[task], var transfer = state.transfers[key] else { return [] }
            let outcome =
                (try? transfer.finished(task: task, status: status, headers: headers, location: location, now: now()))
                ?? transfer.failed(task: task, reason: "the piece could not be written", now: now())
            state.transfers[key] = transfer
            var cancel: [Int] = []
            switch outcome {
            case .restarted(_, let tasks):
                cancel = tasks
                for task in tasks { state.owners[task] = nil }
            case .failed:
                // The others would fail alike or be wasted: stopped; the failure is told with this task's end.
                cancel = state.dropTasks(of: key).filter { $0 != task }
            default: break
            }
            try? state.transfers[key]?.save()
            return cancel
        }
        cancel.forEach(system.cancel)
    }

    /// The delegate's `urlSession(_:task:didCompleteWithError:)`. `error` is a client-side failure (HTTP statuses
    /// are not errors there), with the resume data the system offered; nil when the task ended normally. A file whose
    /// pieces are all in is verified and placed; pieces refused or failed are asked for again after their wait.
    package func didComplete(task: Int, error: (reason: String, resumeData: Data?)?) {
        let (cancel, resume, ended) = state.withLock { state -> ([Int], [Int], [(URL, Result<URL, any Error>)]) in
            guard let key = state.owners.removeValue(forKey: task), var transfer = state.transfers[key] else {
                return ([], [], [])
            }
            var cancel: [Int] = []
            if let error,
                case .failed = transfer.failed(
                    task: task, reason: error.reason, resumeData: error.resumeData, now: now())
            {
                state.transfers[key] = transfer
                cancel = state.dropTasks(of: key)
                transfer = state.transfers[key]!
            }
            state.transfers[key] = transfer
            var ended: [(URL, Result<URL, any Error>)] = []
            if let failure = transfer.failure, transfer.tasksOut.isEmpty {
                try? transfer.save()
                ended.append((transfer.destination, .failure(Self.stopped(transfer, failure))))
                return (cancel, [], ended)
            }
            if transfer.isComplete, let finished = Self.finish(key, in: &state) { ended.append(finished) }
            var resume: [Int] = []
            for key in state.transfers.keys.sorted() {
                resume += (try? start(key, in: &state)) ?? []
            }
            return (cancel, resume, ended)
        }
        cancel.forEach(system.cancel)
        resume.forEach(system.resume)
        for (destination, result) in ended { onFinished(destination, result) }
    }

    /// After a relaunch, with the tasks the session still has (`URLSession.getAllTasks`): those no record names are
    /// cancelled, pieces whose task is gone are asked for again.
    ///
    /// A transfer whose pieces were all in when the app was killed is verified and placed; one that had failed is
    /// reported again (the app that heard of it is gone).
    package func reconcile(runningTasks: [Int]) {
        let (cancel, resume, ended) = state.withLock { state -> ([Int], [Int], [(URL, Result<URL, any Error>)]) in
            let running = Set(runningTasks).union(state.madeHere)
            let cancel = Set(runningTasks).filter { state.owners[$0] == nil }.sorted()
            for key in state.transfers.keys.sorted() {
                state.transfers[key]!.forget(tasksNotIn: running)
            }
            state.owners = state.owners.filter { running.contains($0.key) }
            var resume: [Int] = []
            var ended: [(URL, Result<URL, any Error>)] = []
            for key in state.transfers.keys.sorted() {
                guard let transfer = state.transfers[key] else { continue }
                if let failure = transfer.failure, transfer.tasksOut.isEmpty {
                    ended.append((transfer.destination, .failure(Self.stopped(transfer, failure))))
                } else if transfer.isComplete, transfer.tasksOut.isEmpty {
                    if let finished = Self.finish(key, in: &state) { ended.append(finished) }
                } else {
                    resume += (try? start(key, in: &state)) ?? []
                }
            }
            return (cancel, resume, ended)
        }
        cancel.forEach(system.cancel)
        resume.forEach(system.resume)
        for (destination, result) in ended { onFinished(destination, result) }
    }

    /// The app delegate's `application(_:handleEventsForBackgroundURLSession:completionHandler:)`: the handler runs
    /// once every event is delivered — at once if the session already said so.
    package func handleEvents(completionHandler: @escaping @Sendable () -> Void) {
        let delivered = state.withLock { state -> Bool in
            guard state.eventsDelivered else {
                state.systemCompletion = completionHandler
                return false
            }
            state.eventsDelivered = false
            return true
        }
        if delivered { completionHandler() }
    }

    /// The delegate's `urlSessionDidFinishEvents(forBackgroundURLSession:)`: returns the system's handler to call
    /// (on the main queue), or nil when the app has not handed it over yet (it is then called when it does).
    package func eventsDelivered() -> (@Sendable () -> Void)? {
        state.withLock { state in
            guard let completion = state.systemCompletion else {
                state.eventsDelivered = true
                return nil
            }
            state.systemCompletion = nil
            return completion
        }
    }

    /// Creates the tasks for the pieces of transfer `key` no task fetches and saves the record naming them; returns
    /// them to resume once the lock is released (a record is on disk before any task it names runs).
    private func start(_ key: String, in state: inout State) throws -> [Int] {
        guard var transfer = state.transfers[key] else { return [] }
        var made: [Int] = []
        for request in transfer.requestsToStart() {
            let task = system.makeTask(request)
            transfer.assign(task: task, to: request.piece)
            made.append(task)
        }
        if !made.isEmpty || !FileManager.default.fileExists(atPath: transfer.recordFile.path) {
            do {
                try transfer.save()
            } catch {
                // No record, no task: a task that runs unrecorded would be unknown to the next launch.
                made.forEach(system.cancel)
                throw error
            }
        }
        state.transfers[key] = transfer
        for task in made { state.owners[task] = key }
        state.madeHere.formUnion(made)
        return made
    }

    /// What a transfer that stopped tells the app.
    private static func stopped(_ transfer: BackgroundTransfer, _ failure: String) -> ModelDepotError {
        ModelDepotError(
            .network,
            "\(transfer.destination.lastPathComponent) stopped downloading in the background: \(failure). Its \(transfer.bytesDone) bytes are kept; download it again to go on."
        )
    }

    /// Verifies and places a complete transfer: what to report — nil when the bytes were wrong the first time and
    /// the file is simply fetched again (the app hears of it only if that happens twice).
    private static func finish(_ key: String, in state: inout State) -> (URL, Result<URL, any Error>)? {
        guard var transfer = state.transfers[key] else { return nil }
        let result = Result { try transfer.finish() }
        if case .success = result {
            state.transfers[key] = nil
            return (transfer.destination, result)
        }
        state.transfers[key] = transfer
        try? transfer.save()
        if transfer.failure == nil, Self.isMismatch(result) { return nil }
        return (transfer.destination, result)
    }

    private static func isMismatch(_ result: Result<URL, any Error>) -> Bool {
        if case .failure(let error as ModelDepotError) = result { return error.code == .checksumMismatch }
        return false
    }
}
