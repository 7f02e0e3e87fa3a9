import Foundation
import Hummingbird
import Logging
import ModelDepot
import ModelDepotInference
import ModelDepotScreens
import NIOCore

/// `POST /api/ui/chat`'s answer: the reply as server-sent events, `chunk` ({"text"}) as tokens arrive, then
/// `done` (the ``ChatPlayground/Summary``) or `error` ({"error"}). When the page stops the reply (it aborts the
/// request), the next write (a token or the heartbeat) fails, the reply's task is cancelled and the model's stream
/// dropped, which closes the connection to the model: generation stops there too.
enum ChatEvents {
    static func response(
        _ reply: AsyncThrowingMapSequence<GenerationStream, [ChatPlayground.Event]>, streams: EventStreams,
        logger: Logger
    ) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: streams.body { send in
                do {
                    for try await events in reply {
                        for event in events {
                            switch event {
                            case .text(let text): send(frame("chunk", ["text": text]))
                            case .finished(let summary): send(frame("done", summary))
                            }
                        }
                    }
                } catch let error as ModelDepotError {
                    logger.info("chat reply ended: \(error.message)")
                    send(frame("error", ["error": error.message]))
                }
            })
    }

    static func frame(_ name: String, _ value: some Encodable) -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return ByteBuffer(string: "event: \(name)\ndata: \(json)\n\n")
    }
}
