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

/// What the playground pages say when the app was started without a model for them.
enum PlaygroundText {
    static let noChat =
        "No chat model: start `modeldepot ui` with --chat-endpoint URL (an OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1) or --chat-local NAME (a downloaded GGUF model)."
    static let noTranscriber =
        "No transcription model: start `modeldepot ui` with --transcribe-endpoint URL (an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1) or --transcribe-local NAME (a downloaded Whisper model such as whisper-tiny-en-ct2)."
    static let noEmbeddings =
        "No embedding model: start `modeldepot ui` with --embed-local NAME (all-minilm-l6-v2, gte-small), or give a chat model whose server also embeds."
}
