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

    /// The credentials for `baseURL`: an explicit API key wins; otherwise Hugging Face hosts (and the
    /// configured `HF_ENDPOINT`) get the token the Hub client would use — `HF_TOKEN`, `HUGGING_FACE_HUB_TOKEN`,
    /// the token file — and any other host gets none.
    public static func resolve(for baseURL: URL, apiKey: String?, environment: HubEnvironment) -> InferenceCredentials {
        if let apiKey, !apiKey.isEmpty { return .apiKey(apiKey) }
        guard isHuggingFace(baseURL, environment: environment), let token = environment.token else { return .none }
        return .huggingFaceToken(token)
    }

    /// Hosts run by Hugging Face (the Hub, its inference router, dedicated endpoints, Spaces), or the
    /// endpoint `HF_ENDPOINT` names.
    public static func isHuggingFace(_ url: URL, environment: HubEnvironment) -> Bool {
        guard let host = url.host?.lowercased() else { return false }
        let suffixes = [".huggingface.co", ".huggingface.cloud", ".hf.space"]
        if host == "huggingface.co" || suffixes.contains(where: host.hasSuffix) { return true }
        guard let endpoint = URL(string: environment.endpoint) else { return false }
        return url.scheme == endpoint.scheme && host == endpoint.host?.lowercased() && url.port == endpoint.port
    }

    var bearerToken: String? {
        switch self {
        case .none: nil
        case .apiKey(let key), .huggingFaceToken(let key): key
        }
    }
}
