import Foundation
import ModelDepot
import ModelDepotScreens
import Testing

/// Which badge and button each state gets: decided once, here, for every front end.
struct ModelStatusTests {
    static func entry(_ state: ModelDownloadTask.State, fraction: Double? = nil) -> ModelDownloads.Entry {
        let progress = fraction.map {
            SnapshotProgress(phase: .downloading, bytesCompleted: Int64($0 * 100), totalBytes: 100, totalFiles: 1)
        }
        return ModelDownloads.Entry(name: "m", state: state, progress: progress, started: Date())
    }

    @Test(arguments: [
        (Readiness.ready, ReadinessBadge.Kind.ready, ModelAction.use, true),
        (.unverified(["a.gguf"]), .unverified, .use, true),
        (.notDownloaded, .notDownloaded, .download, false),
        (.partial(missing: ["a.gguf"]), .partial, .download, false),
        (.downloading(missing: ["a.gguf"]), .partial, .download, false),
        (.corrupt(["a.gguf": "wrong magic"]), .corrupt, .repair, false),
    ])
    func readinessOnDisk(readiness: Readiness, kind: ReadinessBadge.Kind, action: ModelAction, selectable: Bool) {
        let status = ModelStatus.decide(readiness: readiness, download: nil)
        #expect(status.badge.kind == kind && status.action == action && status.selectable == selectable)
        #expect(status.actionLabel?.isEmpty == false)
    }

    @Test func reasonsNameTheFiles() {
        let partial = ModelStatus.decide(readiness: .partial(missing: ["a", "b", "c", "d", "e"]), download: nil)
        #expect(partial.badge.reason == "missing a, b, c and 2 more")
        let corrupt = ModelStatus.decide(
            readiness: .corrupt(["b.gguf": "truncated", "a.gguf": "wrong magic"]), download: nil)
        #expect(corrupt.badge.reason == "a.gguf: wrong magic; b.gguf: truncated")
        #expect(
            ModelStatus.decide(readiness: .unverified(["x"]), download: nil).badge.reason
                == "1 file not checked by hash yet")
    }

    @Test func aDownloadHereWinsOverTheDisk() {
        let running = ModelStatus.decide(
            readiness: .partial(missing: ["a"]), download: Self.entry(.pending, fraction: 0.4))
        #expect(running.badge.kind == .downloading && running.action == .pause && running.fraction == 0.4)
        #expect(running.badge.label == "Downloading 40%" && !running.selectable)
        let paused = ModelStatus.decide(
            readiness: .partial(missing: ["a"]), download: Self.entry(.paused(nil), fraction: 0.5))
        #expect(paused.badge.kind == .paused && paused.action == .resume && paused.fraction == 0.5)
        let error = ModelDepotError(.network, "The server reset the connection. Run it again to resume.")
        let failed = ModelStatus.decide(readiness: .notDownloaded, download: Self.entry(.failed(error), fraction: 0.2))
        #expect(failed.badge.kind == .failed && failed.action == .retry && failed.badge.reason == error.message)
        // Cancelling is not an error: the row shows what is on disk again.
        let cancelled = ModelStatus.decide(readiness: .partial(missing: ["a"]), download: Self.entry(.cancelled))
        #expect(cancelled.badge.kind == .partial && cancelled.action == .download)
        #expect(cancelled.actionLabel == "Download the rest")
    }
}
