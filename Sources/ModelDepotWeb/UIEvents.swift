import Foundation
import HTTPTypes
import Hummingbird
import ModelDepotCore
import ModelDepotScreens
import NIOCore

/// `GET /api/ui/events`: server-sent events, one `update` at once and one after each change of a download,
/// at most four a second. Each carries what the live parts of the pages show: every model's status and the
/// Downloads screen. Progress alone re-decides the statuses from memory; the models screen is read from the disk
/// again when ``ModelDownloads/generation`` moved (a download began or ended, the cache changed here), and at
/// least every ``rereadAfter`` for changes made elsewhere (another process, the command line).
enum UIEvents {
    /// One event's data.
    struct Update: Encodable {
        var models: [ModelsScreen.Row]
        var downloads: DownloadsScreen
    }

    /// The shortest time between two events: progress arrives far more often than a person can read it.
    static let interval: Duration = .milliseconds(250)
    /// An event stream's headers: never cached, and never held back by a proxy that buffers answers (nginx does
    /// unless told not to).
    static let streamHeaders: HTTPFields = [
        .contentType: "text/event-stream", .cacheControl: "no-store", HTTPField.Name("X-Accel-Buffering")!: "no",
    ]
    /// The longest a stream goes on showing readiness it read from the disk, while events keep coming.
    static let rereadAfter: Duration = .seconds(5)

    static func response(
        _ downloads: ModelDownloads, streams: EventStreams, clock: any Clock<Duration> = ContinuousClock()
    ) -> Response {
        Response(
            status: .ok,
            headers: streamHeaders,
            body: streams.body(clock: clock) { send in
                let changes = await downloads.changes()
                let time = EngineClock(clock)
                var models = Models(time: time)
                send(try await event(models.current(downloads), downloads))
                var lastSent = time.elapsed()
                for await _ in changes {
                    let wait = interval - (time.elapsed() - lastSent)
                    if wait > .zero { try await time.sleep(for: wait) }
                    lastSent = time.elapsed()
                    send(try await event(models.current(downloads), downloads))
                }
            })
    }

    /// The models screen of one stream: read from the disk when the downloads' generation moved since the last
    /// read (or ``rereadAfter`` passed), else the last one with its statuses decided again.
    struct Models {
        let time: EngineClock
        private var screen: ModelsScreen?
        private var generation = -1
        private var readAt: Duration = .zero

        init(time: EngineClock) { self.time = time }

        mutating func current(_ downloads: ModelDownloads) async -> ModelsScreen {
            // Read before loading: a change during the load moves it again, and the next event reloads.
            let now = await downloads.generation
            if let screen, now == generation, time.elapsed() - readAt < rereadAfter {
                let updated = await screen.withDownloads(downloads)
                self.screen = updated
                return updated
            }
            let loaded = await ModelsScreen.load(downloads)
            (screen, generation, readAt) = (loaded, now, time.elapsed())
            return loaded
        }
    }

    static func event(_ models: ModelsScreen, _ downloads: ModelDownloads) async throws -> ByteBuffer {
        let update = Update(models: models.rows, downloads: await DownloadsScreen.load(downloads))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = String(decoding: try encoder.encode(update), as: UTF8.self)
        return ByteBuffer(string: "event: update\ndata: \(json)\n\n")
    }
}
