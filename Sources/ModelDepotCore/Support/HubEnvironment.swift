import Foundation

/// Where Python's `huggingface_hub` keeps things, resolved from the same environment variables in the same
/// order, so both tools find the same cache (the protocol note, §3).
///
/// The variables are read once, here; a front end lays its flags over them as typed settings (``endpoint``,
/// ``isOffline``, ``mirrorURLs``, ``discoversMirrors``, ``explicitToken``), never by writing variables back.
public struct HubEnvironment: Sendable {
    /// The variables as read (`HF_ENDPOINT`, `HF_TOKEN`, `HF_HOME`, `HF_HUB_CACHE`, `HF_HUB_OFFLINE`…): the raw input.
    /// What is in effect is the typed settings, which flags and apps may have changed since.
    package let variables: [String: String]

    /// A token given explicitly (the command line's `--token`, an app's own): it wins over the implicit one and
    /// goes to the configured endpoint whatever its scheme, since the user named both, and nowhere else (but the
    /// Hub's inference router when the endpoint is the Hub). Line breaks and surrounding whitespace are removed;
    /// empty means none, and the implicit token is then used where it may be (set ``usesImplicitToken`` to false
    /// for none at all).
    public var explicitToken: String? {
        get { explicitTokenValue }
        set { explicitTokenValue = newValue.flatMap(Self.cleanToken) }
    }
    private var explicitTokenValue: String?

    /// The Hub: `HF_ENDPOINT` without a trailing `/`, else `https://huggingface.co`; set it to use another (empty
    /// is the Hub, as an empty `HF_ENDPOINT` is).
    public var endpoint: String {
        get { endpointValue }
        set { endpointValue = Self.withoutTrailingSlashes(newValue.isEmpty ? Self.hub : newValue) }
    }
    private var endpointValue: String

    /// Answer from the cache, never touch the network: `HF_HUB_OFFLINE` (or `TRANSFORMERS_OFFLINE`) is true.
    public var isOffline: Bool

    /// Look for mirrors on the local network (DNS-SD, `_hf-mirror._tcp`) before a pull, and use what answers as
    /// content-only mirrors (`HubMirror.Trust.contentOnly`): `MODELDEPOT_DISCOVER` is true.
    public var discoversMirrors: Bool

    /// The mirrors to ask before the endpoint, in order: `MODELDEPOT_MIRRORS` (comma-separated URLs). Checked when the
    /// manager is made: an entry that is not an http(s) URL is an `invalidURL` error naming it.
    public var mirrorURLs: [String]

    /// The token every mirror of ``mirrorURLs`` is sent, never the Hub's: `MODELDEPOT_MIRROR_TOKEN`. Cleaned as
    /// ``explicitToken`` is; empty means none.
    public var mirrorToken: String? {
        get { mirrorTokenValue }
        set { mirrorTokenValue = newValue.flatMap(Self.cleanToken) }
    }
    private var mirrorTokenValue: String?

    /// Whether the implicit token (`HF_TOKEN`, `HUGGING_FACE_HUB_TOKEN`, the token file) may be used: false when
    /// `HF_HUB_DISABLE_IMPLICIT_TOKEN` is true.
    public var usesImplicitToken: Bool

    /// The settings in `variables`; the process environment by default.
    public init(variables: [String: String] = ProcessInfo.processInfo.environment, explicitToken: String? = nil) {
        self.variables = variables
        explicitTokenValue = explicitToken.flatMap(Self.cleanToken)
        let endpoint = variables["HF_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.hub
        endpointValue = Self.withoutTrailingSlashes(endpoint)
        isOffline = Self.isTrue(variables["HF_HUB_OFFLINE"]) || Self.isTrue(variables["TRANSFORMERS_OFFLINE"])
        discoversMirrors = Self.isTrue(variables["MODELDEPOT_DISCOVER"])
        mirrorURLs = (variables["MODELDEPOT_MIRRORS"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        usesImplicitToken = !Self.isTrue(variables["HF_HUB_DISABLE_IMPLICIT_TOKEN"])
        mirrorTokenValue = variables["MODELDEPOT_MIRROR_TOKEN"].flatMap(Self.cleanToken)
    }

    /// A hub at `endpoint` with nothing read from the process environment: no implicit token (only `token`, if
    /// given), no mirrors, online unless `offline`. For an app with its own hub or mirror, a mirror's upstream, a
    /// test's server; the cache must be given separately (the default one is `~/.cache/huggingface/hub`).
    public init(endpoint: URL, token: String? = nil, offline: Bool = false) {
        self.init(variables: [:], explicitToken: token)
        self.endpoint = endpoint.absoluteString
        isOffline = offline
        usesImplicitToken = false
    }

    /// `HF_HOME`, else `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`.
    package var home: URL {
        if let home = value("HF_HOME") { return URL(fileURLWithPath: expand(home)) }
        if let xdg = value("XDG_CACHE_HOME") {
            return URL(fileURLWithPath: expand(xdg)).appendingPathComponent("huggingface")
        }
        return URL(fileURLWithPath: expand("~/.cache/huggingface"))
    }

    /// `HF_HUB_CACHE`, else the legacy `HUGGINGFACE_HUB_CACHE`, else `<home>/hub`.
    package var cacheDirectory: URL {
        if let cache = value("HF_HUB_CACHE") ?? value("HUGGINGFACE_HUB_CACHE") {
            return URL(fileURLWithPath: expand(cache))
        }
        return home.appendingPathComponent("hub")
    }

    /// Whether `HF_HUB_CACHE` (or the legacy `HUGGINGFACE_HUB_CACHE`) or `HF_HOME` names the cache: an explicit
    /// choice that wins over a platform's default place for models (`ModelStorage`).
    package var hasExplicitCache: Bool {
        value("HF_HUB_CACHE") != nil || value("HUGGINGFACE_HUB_CACHE") != nil || value("HF_HOME") != nil
    }

    /// `HF_TOKEN_PATH`, else `<home>/token`.
    package var tokenFile: URL {
        value("HF_TOKEN_PATH").map { URL(fileURLWithPath: expand($0)) } ?? home.appendingPathComponent("token")
    }

    /// The token Python would send: `HF_TOKEN`, else `HUGGING_FACE_HUB_TOKEN`, else the token file; CR/LF
    /// removed and whitespace trimmed, empty meaning none. Nil as well when `HF_HUB_DISABLE_IMPLICIT_TOKEN` is set.
    package var token: String? {
        if let explicitToken { return explicitToken }
        if !usesImplicitToken { return nil }
        for candidate in [variables["HF_TOKEN"], variables["HUGGING_FACE_HUB_TOKEN"]] {
            if let candidate { return Self.cleanToken(candidate) }
        }
        guard let data = FileManager.default.contents(atPath: tokenFile.path) else { return nil }
        return Self.cleanToken(String(decoding: data, as: UTF8.self))
    }

    /// The token to send to `url`: the explicit one to the configured endpoint (``endpoint``); the implicit one
    /// only where the rules for the implicit token allow (the Hub, its router, the configured endpoint over https, or
    /// over http on this machine); nil otherwise.
    package func token(for url: URL) -> String? {
        guard let token else { return nil }
        let endpoint = URL(string: self.endpoint)
        if explicitToken != nil {
            // A token named for one hub is that hub's: it never falls through to the implicit token's places (a
            // company hub's token must not reach Hugging Face's router). One for the Hub is also its router's.
            guard let endpoint else { return nil }
            if url.hasSameOrigin(as: endpoint) { return token }
            let isTheHub = endpoint.hasSameOrigin(as: URL(string: Self.hub)!)
            return isTheHub && Self.sendsImplicitToken(to: url, endpoint: endpoint) ? token : nil
        }
        return Self.sendsImplicitToken(to: url, endpoint: endpoint) ? token : nil
    }

    /// Whether the implicit token (`HF_TOKEN`, `HUGGING_FACE_HUB_TOKEN`, the token file: sent without the user
    /// naming where) may go to `url`: over https to the Hub (`huggingface.co`), its inference router
    /// (`router.huggingface.co`) or the configured endpoint `endpoint` (`HF_ENDPOINT`, `--endpoint`, or the one an
    /// app gives); over plain http only to a configured endpoint on this machine (`localhost`, 127.0.0.0/8, ::1),
    /// whose traffic never leaves it. Nowhere else: not Spaces (`*.hf.space`) or dedicated Inference Endpoints
    /// (`*.huggingface.cloud`), which run anyone's code, and not a LAN mirror over http, which anyone on the path
    /// reads. Those get a token only when it is given explicitly (`--token` for a Hub, `--api-key` for inference).
    package static func sendsImplicitToken(to url: URL, endpoint: URL?) -> Bool {
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

    /// Where the token comes from, to say so without showing it.
    public enum TokenOrigin: Sendable, Equatable {
        /// An environment variable (`HF_TOKEN` or `HUGGING_FACE_HUB_TOKEN`).
        case variable(String)
        /// The token file.
        case file(URL)
        /// `HF_HUB_DISABLE_IMPLICIT_TOKEN` turns the token off.
        case disabled
        case none
    }

    /// Where the token Python would send comes from; the order Python reads them in.
    public var tokenOrigin: TokenOrigin {
        // An explicit token is the app's or the command line's, not the environment's.
        if explicitToken != nil { return .none }
        if !usesImplicitToken { return .disabled }
        for name in ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"] {
            if let candidate = variables[name] { return Self.cleanToken(candidate) == nil ? .none : .variable(name) }
        }
        guard let data = FileManager.default.contents(atPath: tokenFile.path),
            Self.cleanToken(String(decoding: data, as: UTF8.self)) != nil
        else { return .none }
        return .file(tokenFile)
    }

    /// The mirrors to ask before the endpoint (``mirrorURLs``, in order), each sent `MODELDEPOT_MIRROR_TOKEN` when
    /// set (never the Hub's token).
    ///
    /// - Throws: `invalidURL` naming an entry that is not an http(s) URL.
    package func mirrors() throws -> [HubMirror] {
        try mirrorURLs.map { try HubMirror(parsing: $0, token: mirrorToken) }
    }

    /// The Hub itself.
    static let hub = "https://huggingface.co"

    /// Python's truth values: `1`, `ON`, `YES`, `TRUE`, in any case.
    private static func isTrue(_ value: String?) -> Bool {
        guard let value else { return false }
        return ["1", "on", "yes", "true"].contains(value.trimmingCharacters(in: .whitespaces).lowercased())
    }

    private static func withoutTrailingSlashes(_ endpoint: String) -> String {
        var endpoint = endpoint
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        return endpoint
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
