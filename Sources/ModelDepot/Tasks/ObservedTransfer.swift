import ModelDepotTransfer

#if canImport(Observation)
    import Observation
    import Synchronization

    /// A ``TransferTask`` mirrored on the main actor as an `@Observable` model, for SwiftUI views: its state and
    /// its latest progress, kept through pauses.
    ///
    /// ```swift
    /// @State private var download: ObservedModelDownload?
    /// // in body: .task { download = ObservedModelDownload(await models.download(entry)) }
    /// ProgressView(value: download?.progress?.fractionCompleted ?? 0)
    /// Text("\(download?.progress?.filesCompleted ?? 0) of \(download?.progress?.totalFiles ?? 0) files")
    /// ```
    @MainActor
    @Observable
    public final class ObservedTransfer<Request: Sendable, Progress: Sendable & Equatable, Output: Sendable> {
        /// The task observed.
        public let task: TransferTask<Request, Progress, Output>
        /// The task's latest state, updated on the main actor for views.
        public private(set) var state: TransferTask<Request, Progress, Output>.State
        /// The latest progress, kept through pauses.
        public private(set) var progress: Progress?

        /// The loop that follows the task's states; cancelled when this observer goes, which ends its
        /// subscription to the task (the task itself goes on: pausing or cancelling it is the app's decision).
        private let following = Mutex<Task<Void, Never>?>(nil)

        /// Starts observing `task`; the state follows it until the task ends or this observer is released.
        public init(_ task: TransferTask<Request, Progress, Output>) {
            self.task = task
            self.state = task.state
            let loop = Task { [weak self] in
                for await state in task.states {
                    guard let self else { return }
                    self.apply(state)
                }
            }
            following.withLock { $0 = loop }
        }

        deinit {
            following.withLock { $0?.cancel() }
        }

        private func apply(_ state: TransferTask<Request, Progress, Output>.State) {
            self.state = state
            switch state {
            case .downloading(let progress): self.progress = progress
            case .paused(let progress): self.progress = progress ?? self.progress
            case .completed(let output): self.progress = task.completedProgress(after: self.progress, output: output)
            default: break
            }
        }

        /// Pauses the task: connections close, the bytes that arrived stay.
        public func pause() async { await task.pause() }
        /// Resumes a paused task from the bytes on disk.
        public func resume() { task.resume() }
        /// Cancels the task; the bytes that arrived stay for a later one.
        public func cancel() async { await task.cancel() }
    }

    /// A ``DownloadTask`` (one file) observed for SwiftUI.
    public typealias ObservedDownload = ObservedTransfer<DownloadRequest, DownloadProgress, DownloadResult>
    /// A ``ModelDownloadTask`` (a repository) observed for SwiftUI: files done and the file in flight too.
    public typealias ObservedModelDownload = ObservedTransfer<SnapshotRequest, SnapshotProgress, Snapshot>

    extension ObservedTransfer
    where Request == DownloadRequest, Progress == DownloadProgress, Output == DownloadResult {
        /// Cancels the task; with `discardingPartialData` the bytes that arrived are deleted too.
        public func cancel(discardingPartialData: Bool) async {
            await task.cancel(discardingPartialData: discardingPartialData)
        }
    }
#endif
