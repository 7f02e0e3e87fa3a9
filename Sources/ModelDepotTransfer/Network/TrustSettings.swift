import Foundation
import ModelDepotCore

/// Which certificate authorities TLS connections trust: the system's store, plus certificates given by the
/// variables Python's and curl's users already set — `SSL_CERT_FILE`, `SSL_CERT_DIR`, `REQUESTS_CA_BUNDLE`,
/// `CURL_CA_BUNDLE` — and `--ca-cert FILE`. Where curl and Python *replace* the store with such a file, this adds
/// to it: a company bundle often holds only the company's CA (for its TLS-inspecting proxy), and replacing the
/// store would break every other host.
public struct TrustSettings: Sendable, Hashable {
    /// A file or folder of PEM certificates, and what named it (`SSL_CERT_FILE`, `--ca-cert`).
    public struct Source: Sendable, Hashable {
        public let path: String
        public let origin: String
        public init(path: String, origin: String) {
            self.path = path
            self.origin = origin
        }
    }

    /// Trusted besides the system's store.
    public var additional: [Source]
    /// No verification at all (`--insecure`): anyone on the path can read and change the traffic.
    public var insecure: Bool

    public init(additional: [Source] = [], insecure: Bool = false) {
        self.additional = additional
        self.insecure = insecure
    }

    /// The variables that name certificate files or folders, in the order they are reported.
    public static let variables = ["SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"]

    /// The certificates the variables in `environment` name.
    ///
    /// - Throws: `invalidArgument` naming the variable when its file or folder does not exist (a typo there
    ///   would otherwise surface as a certificate error on some host, far from its cause).
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> TrustSettings
    {
        var sources: [Source] = []
        for variable in variables {
            guard let value = environment[variable]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
                continue
            }
            // SSL_CERT_DIR is a list of folders, separated by colons (as OpenSSL reads it).
            let paths = variable == "SSL_CERT_DIR" ? value.split(separator: ":").map(String.init) : [value]
            for path in paths where !path.isEmpty { try sources.append(checked(Source(path: path, origin: variable))) }
        }
        return TrustSettings(additional: sources)
    }

    /// `source`, when its path exists.
    public static func checked(_ source: Source) throws -> Source {
        guard FileManager.default.fileExists(atPath: source.path) else {
            throw ModelDepotError(
                .invalidArgument,
                "\(source.origin) names \(source.path), which does not exist: give the path of a PEM file (or a folder of them) holding your CA's certificate, or unset \(source.origin)."
            )
        }
        return source
    }
}

/// How a process reaches the network: the proxies (``ProxySettings``) and the certificate authorities
/// (``TrustSettings``), decided once (by ``NetworkSettings/fromEnvironment(_:)`` or the command line's flags) and
/// handed to the transport that every outbound request of a manager goes through.
public struct NetworkSettings: Sendable, Hashable {
    public var proxies: ProxySettings
    public var trust: TrustSettings

    public init(proxies: ProxySettings = .none, trust: TrustSettings = TrustSettings()) {
        self.proxies = proxies
        self.trust = trust
    }

    /// Direct connections, the system's certificate store.
    public static let direct = NetworkSettings()

    /// The proxy and certificate variables of `environment`.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> NetworkSettings
    {
        NetworkSettings(
            proxies: try ProxySettings.fromEnvironment(environment),
            trust: try TrustSettings.fromEnvironment(environment))
    }
}
