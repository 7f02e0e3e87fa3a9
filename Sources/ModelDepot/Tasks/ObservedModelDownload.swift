#if canImport(Observation)
    import Observation

    /// A ``ModelDownloadTask`` mirrored on the main actor as an `@Observable` model, for SwiftUI views:
    /// state, byte-weighted progress, files done and the file in flight.
    ///
    /// ```swift
    /// @State var download = ObservedModelDownload(await models.download(entry))
    /// ProgressView(value: download.progress?.fractionCompleted ?? 0)
    /// Text("\(download.progress?.filesCompleted ?? 0) of \(download.progress?.totalFiles ?? 0) files")
    /// ```
    @MainActor
    @Observable
    public final class ObservedModelDownload {
        /// The task observed.
        public let task: ModelDownloadTask
        /// The task's latest state, updated on the main actor for views.
        public private(set) var state: ModelDownloadTask.State
        /// The latest progress, kept through pauses.
        public private(set) var progress: SnapshotProgress?

        /// Starts observing `task`; the state follows it until the task ends.
        public init(_ task: ModelDownloadTask) {
            self.task = task
            self.state = task.state
            Task { [weak self] in
                for await state in task.states {
                    guard let self else { return }
                    self.state = state
                    switch state {
                    case .downloading(let progress): self.progress = progress
                    case .paused(let progress): self.progress = progress ?? self.progress
                    case .completed(let snapshot):
                        self.progress = .completed(after: self.progress, snapshot: snapshot)
                    default: break
                    }
                }
            }
        }

        /// Pauses the task: connections close, the bytes that arrived stay.
        public func pause() async { await task.pause() }
        /// Resumes a paused task from the bytes on disk.
        public func resume() { task.resume() }
        /// Cancels the task; the bytes that arrived stay for a later pull.
        public func cancel() async { await task.cancel() }
    }
#endif
