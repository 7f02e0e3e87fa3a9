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
        public let task: ModelDownloadTask
        public private(set) var state: ModelDownloadTask.State
        /// The latest progress, kept through pauses.
        public private(set) var progress: SnapshotProgress?

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

        public func pause() async { await task.pause() }
        public func resume() { task.resume() }
        public func cancel() async { await task.cancel() }
    }
#endif
