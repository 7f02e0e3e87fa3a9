import Foundation
import ModelDepotCore
import ModelDepotTransfer
import ModelDepotTrust

/// A running download that an app can watch and control: pause, resume, cancel.
///
/// ```swift
/// let task = downloader.start(request)
/// for await state in task.states {
///     if case .downloading(let progress) = state { show(progress) }
/// }
/// let file = try await task.result().file
/// ```
/// Pausing and cancelling stop the transfer for real (connections close) and keep the partial data, so
/// ``resume()`` — or a new download of the same request, even in another process — continues from it.
public final class DownloadTask: Sendable {
    /// The task's state: waiting, downloading with progress, paused, or final (completed, failed, cancelled).
    public typealias State = TransferState<DownloadProgress, DownloadResult>

    /// What the task downloads.
    public let request: DownloadRequest
    private let controller: TransferController<DownloadProgress, DownloadResult>

    init(request: DownloadRequest, downloader: Downloader) {
        self.request = request
        self.controller = TransferController { report in
            try await downloader.download(request, progress: report)
        }
    }

    /// The current state.
    public var state: State { controller.state }

    /// Every state from now on, starting with the current one; ends after a final state.
    public var states: AsyncStream<State> { controller.states }

    /// How many ``states`` streams are followed now: a test's way to see that a gone observer let go.
    package var stateSubscriberCount: Int { controller.subscriberCount }

    /// Progress events (phase, bytes, speed, ETA, connections) from now on; ends when the task reaches a final
    /// state, with a `completed` event if it succeeded. The byte count never goes back, not on pause, resume or
    /// retries.
    public var progress: AsyncStream<DownloadProgress> {
        forwardProgress(of: states) { [controller] state in
            switch state {
            case .downloading(let progress): progress
            case .completed(let result): .completed(after: controller.lastProgress, size: result.size)
            default: nil
            }
        }
    }

    /// Starts (or restarts after a pause or failure) the transfer. Does nothing while it runs or once completed.
    public func resume() { controller.resume() }

    /// Stops the transfer, keeping partial data; returns once the connections are closed.
    public func pause() async { await controller.pause() }

    /// Stops the transfer for good. Partial data stays for a later download unless `discardingPartialData`.
    public func cancel(discardingPartialData: Bool = false) async {
        await controller.cancel()
        if discardingPartialData { Downloader.discardPartial(of: request) }
    }

    /// Waits for a final state and returns the file, or throws what ended the download.
    public func result() async throws -> DownloadResult { try await controller.result() }
}

extension Downloader {
    /// Starts downloading `request` and returns a handle to watch and control it.
    public func start(_ request: DownloadRequest) -> DownloadTask {
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
