import Foundation
import ModelDepotCore

/// Which proxy, if any, each request goes through: read from the environment as Python reads it (our users come
/// from `huggingface_hub`), or given with `--proxy`.
///
/// Variables: `https_proxy` for https URLs, `http_proxy` for http URLs, `all_proxy` for either when the first is
/// not set, and `no_proxy` for the hosts that go around (``NoProxy``). Each is read in lower case first, then in
/// upper case (`HTTPS_PROXY`…): the lower-case one wins when it is set, also set empty (which unsets it). Unlike
/// curl, `HTTP_PROXY` in upper case is read too, as Python does.
public struct ProxySettings: Sendable, Hashable {
    /// For `https://` URLs.
    public var https: ProxyServer?
    /// For `http://` URLs.
    public var http: ProxyServer?
    /// For URLs of either scheme that the two above leave without one.
    public var all: ProxyServer?
    public var noProxy: NoProxy

    /// No proxy for anything.
    public static let none = ProxySettings(https: nil, http: nil, all: nil, noProxy: .none)

    public init(https: ProxyServer?, http: ProxyServer?, all: ProxyServer?, noProxy: NoProxy) {
        self.https = https
        self.http = http
        self.all = all
        self.noProxy = noProxy
    }

    /// One proxy for every request (`--proxy URL`, as curl's `-x`), still minus `no_proxy`'s hosts.
    public init(proxy: ProxyServer, noProxy: NoProxy = .none) {
        self.init(https: nil, http: nil, all: proxy, noProxy: noProxy)
    }

    /// The settings the variables in `environment` make.
    ///
    /// - Throws: `invalidArgument` naming the variable when one holds a proxy URL this client cannot use.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> ProxySettings
    {
        func value(_ name: String) -> (name: String, value: String)? { variable(name, in: environment) }
        func proxy(_ name: String) throws -> ProxyServer? {
            guard let (spelled, text) = value(name) else { return nil }
            return try ProxyServer(parsing: text, setting: spelled)
        }
        return ProxySettings(
            https: try proxy("https_proxy"), http: try proxy("http_proxy"), all: try proxy("all_proxy"),
            noProxy: NoProxy(value("no_proxy")?.value ?? ""))
    }

    /// The variable `name` (`no_proxy`) as read here and by Python: the lower-case spelling wins when it is set at
    /// all — set empty, it unsets the upper-case one; nil when neither is set to something. Returns the spelling
    /// found, for messages.
    public static func variable(_ name: String, in environment: [String: String]) -> (name: String, value: String)? {
        for spelled in [name.lowercased(), name.uppercased()] {
            guard let value = environment[spelled]?.trimmingCharacters(in: .whitespaces) else { continue }
            return value.isEmpty ? nil : (spelled, value)
        }
        return nil
    }

    /// The proxy for a request to `url`; nil to connect directly.
    public func proxy(for url: URL) -> ProxyServer? {
        guard let host = url.host else { return nil }
        let scheme = url.scheme?.lowercased()
        let chosen = (scheme == "https" ? https : scheme == "http" ? http : nil) ?? all
        guard let chosen else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return noProxy.bypasses(host: host, port: port) ? nil : chosen
    }

    /// Whether any proxy is set.
    public var isEmpty: Bool { https == nil && http == nil && all == nil }
}
