#if os(iOS) && canImport(BackgroundTasks)
    // iOS and iPadOS 26 only, never compiled on the machine this package is tested on (Linux): the glue between
    // `BGTaskScheduler`'s continued-processing tasks and the engine. Every decision (whether to submit, what to do
    // on expiry) is ``ContinuedProcessing``'s, portable and tested. Each Apple API is named where it is used, from
    // the BackgroundTasks documentation ("Performing long-running tasks on iOS and iPadOS").
    import BackgroundTasks
    import Foundation
    import Synchronization

    /// Keeps a download the person started running at full speed after they leave the app, for as long as the
    /// system grants (a `BGContinuedProcessingTask`, with its progress shown by the system); when it ends the time,
    /// the files not finished go on as background pieces of ``BackgroundDownloads``, keeping their bytes.
    @available(iOS 26, *)
    public final class ContinuedDownloads: Sendable {
        /// What the task runs: the engine's download, reporting bytes done and total; and, on expiry, the files
        /// it had not finished.
        public struct Work: Sendable {
            public var run: @Sendable (_ progress: @escaping @Sendable (Int64, Int64) -> Void) async throws -> Void
            public var unfinished: @Sendable () -> [ContinuedProcessing.UnfinishedFile]

            public init(
                run: @escaping @Sendable (_ progress: @escaping @Sendable (Int64, Int64) -> Void) async throws -> Void,
                unfinished: @escaping @Sendable () -> [ContinuedProcessing.UnfinishedFile]
            ) {
                self.run = run
                self.unfinished = unfinished
            }
        }

        private let processing: ContinuedProcessing
        private let background: BackgroundDownloads
        private let pending = Mutex<Work?>(nil)

        /// Registers the launch handler: call once, before the app finishes launching
        /// (`BGTaskScheduler.register(forTaskWithIdentifier:using:launchHandler:)` must run by then).
        public init(processing: ContinuedProcessing, background: BackgroundDownloads) {
            self.processing = processing
            self.background = background
            _ = BGTaskScheduler.shared.register(forTaskWithIdentifier: processing.identifier, using: nil) {
                [weak self] task in
                guard let self, let task = task as? BGContinuedProcessingTask else {
                    task.setTaskCompleted(success: false)
                    return
                }
                self.launch(task)
            }
        }

        /// Right after the person's tap, from the foreground: asks the system to keep `work` running. When the
        /// system will not (``ContinuedProcessing/Refusal``, or the submission fails), `work` is not run here: the
        /// caller runs it in the foreground as usual.
        ///
        /// - Throws: the refusal, or `BGTaskScheduler.submit`'s error.
        public func submit(_ work: Work, title: String, subtitle: String, isInForeground: Bool) throws {
            if case .failure(let refusal) = processing.submission(
                startedByThePerson: true, isInForeground: isInForeground, supportsContinuedProcessing: true)
            {
                throw refusal
            }
            pending.withLock { $0 = work }
            // BGContinuedProcessingTaskRequest(identifier:title:subtitle:): the system shows the title and the
            // task's progress; `.fail` refuses at once when it cannot start now, rather than queue a download the
            // person is waiting for.
            let request = BGContinuedProcessingTaskRequest(
                identifier: processing.identifier, title: title, subtitle: subtitle)
            request.strategy = .fail
            try BGTaskScheduler.shared.submit(request)
        }

        private func launch(_ task: BGContinuedProcessingTask) {
            guard let work = pending.withLock({ $0.take() }) else {
                task.setTaskCompleted(success: false)
                return
            }
            let running = Task {
                do {
                    try await work.run { done, total in
                        // BGContinuedProcessingTask.progress: the system's view of how far it is.
                        task.progress.totalUnitCount = total
                        task.progress.completedUnitCount = done
                    }
                    task.setTaskCompleted(success: true)
                } catch {
                    task.setTaskCompleted(success: false)
                }
            }
            // BGTask.expirationHandler: the time is over. The engine stops (its partial files stay), and what it
            // had not finished goes on as background pieces.
            task.expirationHandler = { [background] in
                running.cancel()
                background.handOver(work.unfinished())
                task.setTaskCompleted(success: false)
            }
        }
    }
#endif
