import Foundation

extension ProxySettings {
    /// The settings as a `URLSessionConfiguration.connectionProxyDictionary` (CFNetwork's keys, spelled as the
    /// strings the `kCFNetworkProxies…` constants hold: the HTTPS and SOCKS ones are macOS-only as constants but
    /// honoured by iOS's URLSession as keys). Nil when no proxy is set: the system's settings then apply.
    /// `no_proxy` becomes `ExceptionsList` (names as `name` and `*.name`, addresses and ranges as written).
    /// Credentials are not in the dictionary: the transport answers the proxy's challenge with them.
    public var connectionProxyDictionary: [String: Any]? {
        guard !isEmpty else { return nil }
        var dictionary: [String: Any] = [:]
        func set(_ server: ProxyServer?, enable: String, host: String, port: String) {
            guard let server else { return }
            dictionary[enable] = 1
            dictionary[host] = server.host
            dictionary[port] = server.port
        }
        let http = http ?? all
        let https = https ?? all
        if let http, http.kind == .socks5 {
            set(http, enable: "SOCKSEnable", host: "SOCKSProxy", port: "SOCKSPort")
        } else {
            set(http, enable: "HTTPEnable", host: "HTTPProxy", port: "HTTPPort")
        }
        if let https, https.kind == .socks5 {
            set(https, enable: "SOCKSEnable", host: "SOCKSProxy", port: "SOCKSPort")
        } else {
            set(https, enable: "HTTPSEnable", host: "HTTPSProxy", port: "HTTPSPort")
        }
        let exceptions = noProxy.exceptionPatterns
        if !exceptions.isEmpty { dictionary["ExceptionsList"] = exceptions }
        return dictionary
    }
}

extension NoProxy {
    /// The entries as CFNetwork's exception patterns: a name and every name below it, addresses, ranges; `*` for
    /// everything. Ports cannot be said there: an entry with a port exempts the host on every port.
    var exceptionPatterns: [String] {
        if matchesEverything { return ["*"] }
        return entries.flatMap { entry -> [String] in
            switch entry.host {
            case .name(let name): return [name, "*." + name]
            case .address(let bytes): return [IPAddress.text(bytes)]
            case .range(let bytes, let prefix): return ["\(IPAddress.text(bytes))/\(prefix)"]
            }
        }
    }
}

extension IPAddress {
    /// `10.0.0.1`, or `fd00:0:0:0:0:0:0:1` (every group written: CFNetwork reads both forms).
    static func text(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: bytes.count, by: 2).map {
            String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
        }
        .joined(separator: ":")
    }
}
