extension DownloadRun {
    /// Moves to `phase` and reports it.
    func emit(phase: DownloadProgress.Phase) {
        let now = clock.elapsed()
        flow.withLock { flow in
            flow.enter(phase)
            report(&flow, now: now, force: true)
        }
    }

    /// Reports that the download waits (nil: no longer), at once.
    func emit(waiting: TransferWait?) {
        let now = clock.elapsed()
        flow.withLock { flow in
            guard flow.wait(waiting) else { return }
            report(&flow, now: now, force: true)
        }
    }

    func emit(force: Bool) {
        let now = clock.elapsed()
        flow.withLock { report(&$0, now: now, force: force) }
    }

    /// Reports progress if forced or if the progress interval has passed. Called with the flow locked so
    /// that events reach the handler in order.
    func report(_ flow: inout DownloadFlow, now: Duration, force: Bool) {
        if let progress = flow.progress(now: now, force: force) { progressHandler(progress) }
    }
}
