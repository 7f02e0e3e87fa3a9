import ModelDepotTransfer

/// What makes a progress value one a ``TransferTask`` can report, so that an app can bind a bar to it: its figures
/// never go back, through pauses, resumes, retries and completion. A run that restarts (after a resume) first
/// reports "resolving, nothing known yet"; that event keeps the figures already shown and only changes the phase.
/// The package's own: an app reads the progress values, it does not define new ones.
package protocol TransferProgress: Sendable, Equatable {
    /// What the transfer produces.
    associatedtype Output: Sendable
    /// This event as shown after `earlier`: no counter below what `earlier` showed, known totals kept.
    func continuing(from earlier: Self) -> Self
    /// The last event shown, as the final one of a transfer that produced `output`.
    static func completed(after last: Self?, output: Output) -> Self
}

extension DownloadProgress: TransferProgress {
    package func continuing(from earlier: DownloadProgress) -> DownloadProgress {
        var shown = self
        if shown.totalBytes == nil { shown.totalBytes = earlier.totalBytes }
        if shown.totalBytes == earlier.totalBytes {
            shown.bytesCompleted = max(shown.bytesCompleted, earlier.bytesCompleted)
        }
        return shown
    }

    package static func completed(after last: DownloadProgress?, output: DownloadResult) -> DownloadProgress {
        completed(after: last, size: output.size)
    }

    /// The last event shown, as the final one of a successful download of `size` bytes.
    static func completed(after last: DownloadProgress?, size: Int64) -> DownloadProgress {
        var final = last ?? DownloadProgress(phase: .completed)
        final.phase = .completed
        final.bytesCompleted = size
        final.totalBytes = size
        final.estimatedSecondsRemaining = 0
        final.activeConnections = 0
        return final
    }
}

extension SnapshotProgress: TransferProgress {
    package func continuing(from earlier: SnapshotProgress) -> SnapshotProgress {
        var shown = self
        if shown.totalBytes == nil {
            shown.totalBytes = earlier.totalBytes
            shown.totalFiles = max(shown.totalFiles, earlier.totalFiles)
        }
        if shown.totalBytes == earlier.totalBytes {
            shown.bytesCompleted = max(shown.bytesCompleted, earlier.bytesCompleted)
            shown.filesCompleted = max(shown.filesCompleted, earlier.filesCompleted)
        }
        return shown
    }

    package static func completed(after last: SnapshotProgress?, output: Snapshot) -> SnapshotProgress {
        completed(after: last, snapshot: output)
    }

    /// The last event shown, as the final one of a pull that produced `snapshot`.
    public static func completed(after last: SnapshotProgress?, snapshot: Snapshot) -> SnapshotProgress {
        var final = last ?? SnapshotProgress(phase: .completed)
        final.phase = .completed
        final.totalFiles = max(final.totalFiles, snapshot.files.count)
        final.filesCompleted = final.totalFiles
        if let total = final.totalBytes { final.bytesCompleted = total }
        final.currentFile = nil
        final.estimatedSecondsRemaining = 0
        return final
    }
}
