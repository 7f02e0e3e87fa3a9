import Foundation
import ModelDepot

/// What proves who is calling: nothing (a local server), a plain API key, or a Hugging Face token.
///
/// Whatever it is goes only to the provider's base URL: requests never follow redirects, so a key cannot
/// leak to another host.
public enum InferenceCredentials: Sendable, Equatable {
    case none
    /// Sent as `Authorization: Bearer <key>`.
    case apiKey(String)
    /// A Hugging Face token, sent as `Authorization: Bearer <token>`.
    case huggingFaceToken(String)

    /// The credentials for `baseURL`: an explicit API key wins; otherwise the Hub token the Hub client would use
    /// (`HF_TOKEN`, `HUGGING_FACE_HUB_TOKEN`, the token file) goes only where
    /// `HubEnvironment.token(for:)` allows — https to the Hub, its router
    /// (`router.huggingface.co`) or the configured `HF_ENDPOINT`, http only to a configured endpoint on this
    /// machine — and any other host gets none: Spaces and dedicated Inference Endpoints run anyone's code, so
    /// they need `--api-key`.
    public static func resolve(for baseURL: URL, apiKey: String?, environment: HubEnvironment) -> InferenceCredentials {
        if let apiKey, !apiKey.isEmpty { return .apiKey(apiKey) }
        guard let token = environment.token(for: baseURL) else { return .none }
        return .huggingFaceToken(token)
    }

    /// Whether `baseURL` is a place the Hub token may go without being given (see ``resolve(for:apiKey:environment:)``).
    public static func isHuggingFace(_ url: URL, environment: HubEnvironment) -> Bool {
        HubEnvironment.sendsImplicitToken(to: url, endpoint: URL(string: environment.endpoint))
    }

    var bearerToken: String? {
        switch self {
        case .none: nil
        case .apiKey(let key), .huggingFaceToken(let key): key
        }
    }
}
