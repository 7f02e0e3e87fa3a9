import Foundation

/// Where Python's `huggingface_hub` keeps things, resolved from the same environment variables in the same
/// order, so both tools find the same cache (the protocol note, §3).
public struct HubEnvironment: Sendable {
    /// The variables read (`HF_ENDPOINT`, `HF_TOKEN`, `HF_HOME`, `HF_HUB_CACHE`, `HF_HUB_OFFLINE`…).
    public let variables: [String: String]

    /// A token given explicitly (the command line's `--token`, an app's own): it wins over the implicit one and
    /// goes to the configured endpoint whatever its scheme, since the user named both.
    public var explicitToken: String?

    /// The settings in `variables`; the process environment by default.
    public init(variables: [String: String] = ProcessInfo.processInfo.environment, explicitToken: String? = nil) {
        self.variables = variables
        self.explicitToken = explicitToken.flatMap(Self.cleanToken)
    }

    /// `HF_HOME`, else `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`.
    public var home: URL {
        if let home = value("HF_HOME") { return URL(fileURLWithPath: expand(home)) }
        if let xdg = value("XDG_CACHE_HOME") {
            return URL(fileURLWithPath: expand(xdg)).appendingPathComponent("huggingface")
        }
        return URL(fileURLWithPath: expand("~/.cache/huggingface"))
    }

    /// `HF_HUB_CACHE`, else the legacy `HUGGINGFACE_HUB_CACHE`, else `<home>/hub`.
    public var cacheDirectory: URL {
        if let cache = value("HF_HUB_CACHE") ?? value("HUGGINGFACE_HUB_CACHE") {
            return URL(fileURLWithPath: expand(cache))
        }
        return home.appendingPathComponent("hub")
    }

    /// Whether `HF_HUB_CACHE` (or the legacy `HUGGINGFACE_HUB_CACHE`) or `HF_HOME` names the cache: an explicit
    /// choice that wins over a platform's default place for models (`ModelStorage`).
    public var hasExplicitCache: Bool {
        value("HF_HUB_CACHE") != nil || value("HUGGINGFACE_HUB_CACHE") != nil || value("HF_HOME") != nil
    }

    /// `HF_ENDPOINT` without a trailing `/`, else `https://huggingface.co`.
    public var endpoint: String {
        var endpoint = value("HF_ENDPOINT") ?? "https://huggingface.co"
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        return endpoint
    }

    /// `HF_TOKEN_PATH`, else `<home>/token`.
    public var tokenFile: URL {
        value("HF_TOKEN_PATH").map { URL(fileURLWithPath: expand($0)) } ?? home.appendingPathComponent("token")
    }

    /// The token Python would send: `HF_TOKEN`, else `HUGGING_FACE_HUB_TOKEN`, else the token file; CR/LF
    /// removed and whitespace trimmed, empty meaning none. Nil as well when `HF_HUB_DISABLE_IMPLICIT_TOKEN` is set.
    public var token: String? {
        if let explicitToken { return explicitToken }
        if flag("HF_HUB_DISABLE_IMPLICIT_TOKEN") { return nil }
        for candidate in [variables["HF_TOKEN"], variables["HUGGING_FACE_HUB_TOKEN"]] {
            if let candidate { return Self.cleanToken(candidate) }
        }
        guard let data = FileManager.default.contents(atPath: tokenFile.path) else { return nil }
        return Self.cleanToken(String(decoding: data, as: UTF8.self))
    }

    /// The token to send to `url`: the explicit one to the configured endpoint (``endpoint``); the implicit one
    /// only where ``sendsImplicitToken(to:endpoint:)`` allows; nil otherwise.
    public func token(for url: URL) -> String? {
        guard let token else { return nil }
        let endpoint = URL(string: self.endpoint)
        if explicitToken != nil, let endpoint, url.hasSameOrigin(as: endpoint) { return token }
        return Self.sendsImplicitToken(to: url, endpoint: endpoint) ? token : nil
    }

    /// Whether the implicit token (`HF_TOKEN`, `HUGGING_FACE_HUB_TOKEN`, the token file: sent without the user
    /// naming where) may go to `url`: over https to the Hub (`huggingface.co`), its inference router
    /// (`router.huggingface.co`) or the configured endpoint `endpoint` (`HF_ENDPOINT`, `--endpoint`, or the one an
    /// app gives); over plain http only to a configured endpoint on this machine (`localhost`, 127.0.0.0/8, ::1),
    /// whose traffic never leaves it. Nowhere else: not Spaces (`*.hf.space`) or dedicated Inference Endpoints
    /// (`*.huggingface.cloud`), which run anyone's code, and not a LAN mirror over http, which anyone on the path
    /// reads. Those get a token only when it is given explicitly (`--token` for a Hub, `--api-key` for inference).
    public static func sendsImplicitToken(to url: URL, endpoint: URL?) -> Bool {
        let isEndpoint = endpoint.map { url.hasSameOrigin(as: $0) } ?? false
        switch url.scheme?.lowercased() {
        case "https":
            let hub = ["https://huggingface.co", "https://router.huggingface.co"].contains {
                url.hasSameOrigin(as: URL(string: $0)!)
            }
            return hub || isEndpoint
        case "http":
            return isEndpoint && url.isLoopback
        default:
            return false
        }
    }

    /// Where ``token`` comes from, to say so without showing it.
    public enum TokenOrigin: Sendable, Equatable {
        /// An environment variable (`HF_TOKEN` or `HUGGING_FACE_HUB_TOKEN`).
        case variable(String)
        /// The token file.
        case file(URL)
        /// `HF_HUB_DISABLE_IMPLICIT_TOKEN` turns the token off.
        case disabled
        case none
    }

    /// Where the token Python would send comes from; the same order as ``token``.
    public var tokenOrigin: TokenOrigin {
        // An explicit token is the app's or the command line's, not the environment's.
        if explicitToken != nil { return .none }
        if flag("HF_HUB_DISABLE_IMPLICIT_TOKEN") { return .disabled }
        for name in ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"] {
            if let candidate = variables[name] { return Self.cleanToken(candidate) == nil ? .none : .variable(name) }
        }
        guard let data = FileManager.default.contents(atPath: tokenFile.path),
            Self.cleanToken(String(decoding: data, as: UTF8.self)) != nil
        else { return .none }
        return .file(tokenFile)
    }

    /// Mirrors to ask before the endpoint: `MODELDEPOT_MIRRORS` (comma-separated URLs, in order), each sent
    /// `MODELDEPOT_MIRROR_TOKEN` when set (never the Hub's token).
    ///
    /// - Throws: `invalidURL` naming an entry that is not an http(s) URL.
    public func mirrors() throws -> [HubMirror] {
        guard let list = value("MODELDEPOT_MIRRORS") else { return [] }
        let token = value("MODELDEPOT_MIRROR_TOKEN")
        return try list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            .map { try HubMirror(parsing: $0, token: token) }
    }

    /// `MODELDEPOT_DISCOVER` is true: look for mirrors on the local network (DNS-SD, `_hf-mirror._tcp`) before a
    /// pull, and use what answers as content-only mirrors (`HubMirror.Trust.contentOnly`).
    public var discoversMirrors: Bool { flag("MODELDEPOT_DISCOVER") }

    /// `HF_HUB_OFFLINE` (or `TRANSFORMERS_OFFLINE`) is true: answer from the cache, never touch the network.
    public var isOffline: Bool { flag("HF_HUB_OFFLINE") || flag("TRANSFORMERS_OFFLINE") }

    /// Python's truth values: `1`, `ON`, `YES`, `TRUE`, in any case.
    package func flag(_ name: String) -> Bool {
        guard let value = variables[name] else { return false }
        return ["1", "on", "yes", "true"].contains(value.trimmingCharacters(in: .whitespaces).lowercased())
    }

    package static func cleanToken(_ raw: String) -> String? {
        let token = raw.replacingOccurrences(of: "\r", with: "").replacingOccurrences(of: "\n", with: "")
            .trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    private func value(_ name: String) -> String? {
        guard let value = variables[name], !value.isEmpty else { return nil }
        return value
    }

    /// Expands a leading `~` and `$VARIABLES`, as Python's `expanduser(expandvars(…))` does.
    private func expand(_ path: String) -> String {
        var result = path
        for (name, value) in variables.sorted(by: { $0.key.count > $1.key.count }) {
            result = result.replacingOccurrences(of: "${\(name)}", with: value).replacingOccurrences(
                of: "$\(name)", with: value)
        }
        if result == "~" || result.hasPrefix("~/") {
            let home = variables["HOME"] ?? NSHomeDirectory()
            result = home + result.dropFirst()
        }
        return result
    }
}
