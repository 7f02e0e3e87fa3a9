import Foundation
import ModelDepot

extension ModelDepotError.Code {
    /// The prompt plus the requested reply length do not fit the model's context: shorten the conversation or
    /// lower `maxTokens`.
    public static let contextLengthExceeded = Self("contextLengthExceeded", category: .input)
    /// The server refused the request as malformed (a bad parameter, an unknown model).
    public static let invalidRequest = Self("invalidRequest", category: .input)
    /// A streamed reply ended before the server's end marker: what arrived is all there is.
    public static let incompleteStream = Self("incompleteStream", category: .network)
    /// A provider cannot be used now (no token, endpoint unreachable, model not downloaded, no local server).
    public static let unavailable = Self("unavailable", category: .network)
    /// A model does not fit in the memory available now (the message gives the estimate); loading it anyway may
    /// still work, or make the system swap or kill a process.
    public static let insufficientMemory = Self("insufficientMemory", category: .other)
    /// Audio is empty, damaged, or in no format a transcriber reads.
    public static let invalidAudio = Self("invalidAudio", category: .input)
    /// Audio is larger than the server accepts in one upload and cannot be cut into pieces (only PCM WAV can).
    public static let audioTooLarge = Self("audioTooLarge", category: .input)
    /// The transcriber heard no speech in the audio.
    public static let noSpeech = Self("noSpeech", category: .input)
}

/// Turns an OpenAI-compatible server's error answers into ``ModelDepotError``s people can act on.
///
/// Servers disagree on the shape: OpenAI and vLLM send `{"error": {"message", "type", "code"}}`, Hugging
/// Face `{"error": "…"}`, llama.cpp's Python server `{"detail": "…"}` for a bad key and FastAPI's
/// `{"detail": [{"msg": …}]}` for schema errors. All are read.
enum InferenceErrorMapping {
    struct ServerError {
        var message: String?
        var code: String?
        var type: String?
    }

    static func serverError(in body: [UInt8]) -> ServerError {
        guard let json = try? JSONSerialization.jsonObject(with: Data(body)) else {
            let text = String(decoding: body.prefix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return ServerError(message: text.isEmpty || text.hasPrefix("<") ? nil : text)
        }
        return serverError(inJSON: json)
    }

    static func serverError(inJSON json: Any) -> ServerError {
        guard let object = json as? [String: Any] else { return ServerError() }
        if let error = object["error"] as? [String: Any] {
            let code = (error["code"] as? String) ?? (error["code"] as? Int).map(String.init)
            return ServerError(message: error["message"] as? String, code: code, type: error["type"] as? String)
        }
        if let error = object["error"] as? String {
            return ServerError(message: error, type: object["error_type"] as? String)
        }
        if let detail = object["detail"] as? String { return ServerError(message: detail) }
        // FastAPI's HTTPException wraps whatever the server raised, an OpenAI-style error included.
        if let detail = object["detail"] as? [String: Any] { return serverError(inJSON: detail) }
        if let details = object["detail"] as? [[String: Any]] {
            let messages = details.compactMap { detail -> String? in
                guard let message = detail["msg"] as? String else { return nil }
                let location = (detail["loc"] as? [Any])?.map { "\($0)" }.joined(separator: ".")
                return location.map { "\($0): \(message)" } ?? message
            }
            return ServerError(message: messages.joined(separator: "; "))
        }
        return ServerError(message: object["message"] as? String)
    }

    /// The error for a non-2xx answer.
    static func error(status: Int, retryAfter: Duration?, body: [UInt8], url: URL) -> ModelDepotError {
        let server = serverError(in: body)
        let detail = server.message.map { ": \($0)" } ?? ""
        let serverName = "\(url.host ?? url.absoluteString)"
        if isContextOverflow(server) {
            return ModelDepotError(
                .contextLengthExceeded,
                "The conversation does not fit the model's context (HTTP \(status)\(detail)). Shorten it or lower the maximum reply length."
            )
        }
        switch HTTPExchange.code(for: status) {
        case .unauthorized:
            return ModelDepotError(
                .unauthorized,
                "\(serverName) refused the credentials (HTTP \(status)\(detail)). Use the right API key (MODELDEPOT_API_KEY), or for Hugging Face set HF_TOKEN."
            )
        case .rateLimited:
            let wait = retryAfter.map { " Try again in \($0.components.seconds) s." } ?? " Try again later."
            return ModelDepotError(
                .rateLimited, "\(serverName) is rate-limiting requests (HTTP 429\(detail)).\(wait)",
                retryAfter: retryAfter)
        case .notFound where status == 404:
            return ModelDepotError(
                .notFound,
                "\(url.absoluteString) does not exist (HTTP 404\(detail)). Check the base URL (OpenAI-style servers take one ending in /v1) and the model id."
            )
        case .serverError:
            return ModelDepotError(
                .serverError, "\(serverName) failed to answer (HTTP \(status)\(detail)). Try again later.",
                retryAfter: retryAfter)
        case _ where (400..<500).contains(status):
            return ModelDepotError(.invalidRequest, "\(serverName) refused the request (HTTP \(status)\(detail)).")
        default:
            return ModelDepotError(.httpStatus, "\(serverName) answered HTTP \(status)\(detail), which is not a reply.")
        }
    }

    /// The error for an `{"error": …}` event inside a stream (the server failed after the 200).
    static func streamError(_ json: Any, url: URL) -> ModelDepotError {
        let server = serverError(inJSON: json)
        let detail = server.message ?? "no details"
        if isContextOverflow(server) {
            return ModelDepotError(
                .contextLengthExceeded,
                "The conversation does not fit the model's context (\(detail)). Shorten it or lower the maximum reply length."
            )
        }
        switch server.type ?? server.code ?? "" {
        case "invalid_request_error", "invalid_request", "400":
            return ModelDepotError(
                .invalidRequest, "\(url.host ?? "The server") refused the request mid-reply: \(detail).")
        case "rate_limit_exceeded", "429":
            return ModelDepotError(.rateLimited, "\(url.host ?? "The server") is rate-limiting requests: \(detail).")
        default:
            return ModelDepotError(
                .serverError, "\(url.host ?? "The server") failed in the middle of the reply: \(detail). Try again.")
        }
    }

    static func isContextOverflow(_ error: ServerError) -> Bool {
        if error.code == "context_length_exceeded" { return true }
        guard let message = error.message?.lowercased() else { return false }
        return message.contains("context length") || message.contains("context window")
            || message.contains("maximum context") || message.contains("exceed_context_size")
    }
}
