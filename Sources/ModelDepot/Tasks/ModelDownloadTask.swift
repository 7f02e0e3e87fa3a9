import ModelDepotCore
import ModelDepotTransfer
import ModelDepotTrust

/// A repository download an app can watch and control: pause, resume, cancel.
///
/// ```swift
/// let task = await manager.download(try RepoID("acme/tiny"), matching: ["*.gguf"])
/// for await progress in task.progress {
///     print(progress.filesCompleted, "/", progress.totalFiles, progress.fractionCompleted ?? 0)
/// }
/// let folder = try await task.result().folder
/// ```
/// Progress is weighted by bytes across the files. Pausing closes every connection and keeps what arrived;
/// ``resume()`` (or a later pull, even by another process) continues from there.
public final class ModelDownloadTask: Sendable {
    /// The task's state: waiting, downloading with progress, paused, or final (completed, failed, cancelled).
    public typealias State = TransferState<SnapshotProgress, Snapshot>

    /// What the task pulls.
    public let request: SnapshotRequest
    private let controller: TransferController<SnapshotProgress, Snapshot>

    convenience init(request: SnapshotRequest, pull: SnapshotDownloader) {
        self.init(request: request) { report in try await pull.download(request, progress: report) }
    }

    /// A task that runs `operation` (a pull with checks around it), reporting progress through `report`.
    init(
        request: SnapshotRequest,
        operation:
            @escaping @Sendable (_ report: @escaping @Sendable (SnapshotProgress) -> Void) async throws
            -> Snapshot
    ) {
        self.request = request
        self.controller = TransferController(operation: operation)
    }

    /// The current state.
    public var state: State { controller.state }

    /// Every state from now on, starting with the current one; ends after a final state.
    public var states: AsyncStream<State> { controller.states }

    /// The last progress reported, kept through pauses (nil before the first): what an overall bar adds up.
    public var latestProgress: SnapshotProgress? { controller.lastProgress }

    /// How many ``states`` streams are followed now: a test's way to see that a gone observer let go.
    package var stateSubscriberCount: Int { controller.subscriberCount }

    /// Progress from now on; ends with the task, with a `completed` event if it succeeded.
    /// The figures never go back: not on pause, resume or retries, nor in the final `completed` event.
    public var progress: AsyncStream<SnapshotProgress> {
        forwardProgress(of: states) { [controller] state in
            switch state {
            case .downloading(let progress): progress
            case .completed(let snapshot): .completed(after: controller.lastProgress, snapshot: snapshot)
            default: nil
            }
        }
    }

    /// Starts the task, or resumes it after a pause from the bytes on disk.
    public func resume() { controller.resume() }
    /// Pauses: every connection closes and what arrived stays; ``resume()`` continues from there.
    public func pause() async { await controller.pause() }
    /// Cancels the pull; what arrived stays in the cache for a later pull.
    public func cancel() async { await controller.cancel() }

    /// Waits for the end and returns the snapshot, or throws what ended the download.
    public func result() async throws -> Snapshot { try await controller.result() }
}
