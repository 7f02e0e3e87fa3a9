extension DownloadRun {
    /// Moves to `phase` and reports it.
    func emit(phase: DownloadProgress.Phase) {
        let now = clock.elapsed()
        state.withLock { state in
            state.phase = phase
            emitLocked(&state, now: now, force: true)
        }
    }

    /// Reports that the download waits (nil: no longer), at once.
    func emit(waiting: TransferWait?) {
        let now = clock.elapsed()
        state.withLock { state in
            guard state.waiting != waiting else { return }
            state.waiting = waiting
            emitLocked(&state, now: now, force: true)
        }
    }

    func emit(force: Bool) {
        let now = clock.elapsed()
        state.withLock { emitLocked(&$0, now: now, force: force) }
    }

    /// Reports progress if forced or if the progress interval has passed. Called with the state locked so
    /// that events reach the handler in order.
    func emitLocked(_ state: inout State, now: Duration, force: Bool) {
        if !force, let last = state.lastEmit, now - last < configuration.progressInterval { return }
        state.lastEmit = now
        let speed = state.speed.record(elapsed: now, bytes: state.bytesCompleted - state.bytesResumed)
        var eta: Double?
        if let total = state.total, speed > 0 { eta = Double(total - state.bytesCompleted) / speed }
        progressHandler(
            DownloadProgress(
                phase: state.phase, bytesCompleted: state.bytesCompleted, totalBytes: state.total,
                bytesPerSecond: speed, estimatedSecondsRemaining: eta, activeConnections: state.activeConnections,
                waiting: state.waiting))
    }
}
