import ModelDepotTransfer

#if canImport(Observation)
    import Observation
    import Synchronization

    /// A ``DownloadTask`` mirrored on the main actor as an `@Observable` model, for SwiftUI views.
    ///
    /// ```swift
    /// @State private var download: ObservedDownload?
    /// // in body: .task { download = ObservedDownload(downloader.start(request)) }
    /// ProgressView(value: download?.progress?.fractionCompleted ?? 0)
    /// ```
    @MainActor
    @Observable
    public final class ObservedDownload {
        /// The task observed.
        public let task: DownloadTask
        /// The task's latest state, updated on the main actor for views.
        public private(set) var state: DownloadTask.State
        /// The latest progress, kept through pauses.
        public private(set) var progress: DownloadProgress?

        /// The loop that follows the task's states; cancelled when this observer goes, which ends its
        /// subscription to the task (the task itself goes on: pausing or cancelling it is the app's decision).
        private let following = Mutex<Task<Void, Never>?>(nil)

        /// Starts observing `task`; the state follows it until the task ends or this observer is released.
        public init(_ task: DownloadTask) {
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

        private func apply(_ state: DownloadTask.State) {
            self.state = state
            switch state {
            case .downloading(let progress): self.progress = progress
            case .paused(let progress): self.progress = progress ?? self.progress
            case .completed(let result):
                self.progress = .completed(after: self.progress, size: result.size)
            default: break
            }
        }

        /// Pauses the task: connections close, the bytes that arrived stay.
        public func pause() async { await task.pause() }
        /// Resumes a paused task from the bytes on disk.
        public func resume() { task.resume() }
        /// Cancels the task; with `discardingPartialData` the bytes that arrived are deleted too.
        public func cancel(discardingPartialData: Bool = false) async {
            await task.cancel(discardingPartialData: discardingPartialData)
        }
    }
#endif
