import Foundation
import ModelDepotCore
import ModelDepotTransfer

/// A transfer an app can watch and control: pause, resume, cancel. One type for one file (``DownloadTask``) and
/// for a repository (``ModelDownloadTask``): they differ only in what they are asked for, what progress they
/// report and what they produce.
///
/// ```swift
/// let task = await manager.download(try RepoID("acme/tiny"), matching: ["*.gguf"])
/// for await progress in task.progress {
///     print(progress.filesCompleted, "/", progress.totalFiles, progress.fractionCompleted ?? 0)
/// }
/// let folder = try await task.result().folder
/// ```
/// Pausing and cancelling stop the transfer for real (connections close) and keep the partial data, so
/// ``resume()`` — or a new download of the same request, even in another process — continues from it.
///
/// `Output` is what the transfer produces: a verified file, a snapshot, or a lock's snapshots.
public final class TransferTask<Request: Sendable, Progress: Sendable & Equatable, Output: Sendable>: Sendable {
    /// The task's state: waiting, downloading with progress, paused, or final (completed, failed, cancelled).
    public typealias State = TransferState<Progress, Output>

    /// What the task transfers.
    public let request: Request
    private let controller: TransferController<Progress, Output>
    /// The last progress shown, as the final event of a transfer that produced the output
    /// (`TransferProgress.completed(after:output:)`).
    private let finalProgress: @Sendable (_ last: Progress?, _ output: Output) -> Progress

    /// A task that runs `operation` (a download, or a pull with checks around it), reporting through `report`.
    init(
        request: Request,
        operation: @escaping @Sendable (_ report: @escaping @Sendable (Progress) -> Void) async throws -> Output
    ) where Progress: TransferProgress, Progress.Output == Output {
        self.request = request
        self.controller = TransferController(operation: operation)
        self.finalProgress = { last, output in .completed(after: last, output: output) }
    }

    /// `last` as the final progress event of a transfer that produced `output`.
    func completedProgress(after last: Progress?, output: Output) -> Progress { finalProgress(last, output) }

    /// The current state.
    public var state: State { controller.state }

    /// Every state from now on, starting with the current one; ends after a final state.
    public var states: AsyncStream<State> { controller.states }

    /// How many ``states`` streams are followed now: a test's way to see that a gone observer let go.
    package var stateSubscriberCount: Int { controller.subscriberCount }

    /// The last progress reported, kept through pauses (nil before the first): what an overall bar adds up.
    public var latestProgress: Progress? { controller.lastProgress }

    /// Progress from now on; ends with the task, with a `completed` event if it succeeded. The figures never go
    /// back: not on pause, resume or retries, nor in the final `completed` event.
    public var progress: AsyncStream<Progress> {
        forwardProgress(of: states) { [controller, finalProgress] state in
            switch state {
            case .downloading(let progress): progress
            case .completed(let output): finalProgress(controller.lastProgress, output)
            default: nil
            }
        }
    }

    /// Starts the task, or resumes it after a pause or failure from the bytes on disk. Does nothing while it runs
    /// or once completed.
    public func resume() { controller.resume() }
    /// Pauses: every connection closes and what arrived stays; ``resume()`` continues from there.
    public func pause() async { await controller.pause() }
    /// Cancels the transfer; what arrived stays for a later one.
    public func cancel() async { await controller.cancel() }

    /// Waits for the end and returns what the transfer produced, or throws what ended it.
    public func result() async throws -> Output { try await controller.result() }
}

/// One file from a URL: the verified file when it completes.
///
/// ```swift
/// let task = models.download(from: url, to: file, sha256: sha256)
/// for await state in task.states {
///     if case .downloading(let progress) = state { show(progress) }
/// }
/// let file = try await task.result().file
/// ```
public typealias DownloadTask = TransferTask<DownloadRequest, DownloadProgress, DownloadResult>

/// A repository pulled into the cache: progress weighted by bytes across its files, the snapshot when it completes.
public typealias ModelDownloadTask = TransferTask<SnapshotRequest, SnapshotProgress, Snapshot>

extension TransferTask where Request == DownloadRequest, Progress == DownloadProgress, Output == DownloadResult {
    convenience init(request: DownloadRequest, downloader: Downloader) {
        self.init(request: request) { report in try await downloader.download(request, progress: report) }
    }

    /// Stops the transfer for good; with `discardingPartialData` the bytes that arrived are deleted too.
    public func cancel(discardingPartialData: Bool) async {
        await cancel()
        if discardingPartialData { Downloader.discardPartial(of: request) }
    }
}

extension TransferTask where Request == SnapshotRequest, Progress == SnapshotProgress, Output == Snapshot {
    convenience init(request: SnapshotRequest, pull: SnapshotDownloader) {
        self.init(request: request) { report in try await pull.download(request, progress: report) }
    }
}

extension Downloader {
    /// Starts downloading `request` and returns a handle to watch and control it.
    package func start(_ request: DownloadRequest) -> DownloadTask {
        let task = DownloadTask(request: request, downloader: self)
        task.resume()
        return task
    }
}

/// The progress values carried by a stream of states, ending with the states.
func forwardProgress<State: Sendable, Progress: Sendable & Equatable>(
    of states: AsyncStream<State>, _ extract: @escaping @Sendable (State) -> Progress?
) -> AsyncStream<Progress> {
    AsyncStream { continuation in
        let forwarding = Task {
            // The final state repeats the last progress when the engine's own last event was already final:
            // each value is told once.
            var last: Progress?
            for await state in states {
                guard let progress = extract(state), progress != last else { continue }
                last = progress
                continuation.yield(progress)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in forwarding.cancel() }
    }
}
