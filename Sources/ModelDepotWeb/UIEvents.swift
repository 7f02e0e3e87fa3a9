import Foundation
import Hummingbird
import ModelDepotScreens
import NIOCore

/// `GET /api/ui/events`: server-sent events, one `update` at once and one after each change of a download,
/// at most four a second. Each carries what the live parts of the pages show: every model's status and the
/// Downloads screen.
enum UIEvents {
    /// One event's data.
    struct Update: Encodable {
        var models: [ModelsScreen.Row]
        var downloads: DownloadsScreen
    }

    /// The shortest time between two events: progress arrives far more often than a person can read it.
    static let interval: Duration = .milliseconds(250)

    static func response(_ downloads: ModelDownloads, streams: EventStreams) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: streams.body { send in
                let changes = await downloads.changes()
                send(try await event(downloads))
                let clock = ContinuousClock()
                var last = clock.now
                for await _ in changes {
                    let wait = last.advanced(by: interval) - clock.now
                    if wait > .zero { try await clock.sleep(for: wait) }
                    last = clock.now
                    send(try await event(downloads))
                }
            })
    }

    static func event(_ downloads: ModelDownloads) async throws -> ByteBuffer {
        let update = Update(
            models: await ModelsScreen.load(downloads).rows, downloads: await DownloadsScreen.load(downloads))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = String(decoding: try encoder.encode(update), as: UTF8.self)
        return ByteBuffer(string: "event: update\ndata: \(json)\n\n")
    }
}
