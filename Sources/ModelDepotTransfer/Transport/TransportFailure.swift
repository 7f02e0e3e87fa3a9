import Foundation
import ModelDepotCore
import ModelDepotPlatform

#if MODELDEPOT_SERVER_STACK
    import AsyncHTTPClient
    import NIOSSL
    import NIOCore
    import NIOHTTP1
    import NIOPosix
#endif

/// Turns what async-http-client, SwiftNIO and Network.framework throw into a ``ModelDepotError`` a person can act on, and decides
/// whether trying again can help: a refused or reset connection may heal (`network`, retried); a reply that
/// is not HTTP, or headers past every limit, will not (`protocolViolation`, failed at once).
package enum TransportFailure {
    /// - Parameter proxy: the proxy the request went through, when it did: a failure to connect is the proxy's.
    package static func error(from error: any Error, url: URL, proxy: ProxyServer? = nil) -> any Error {
        if error is ModelDepotError || error is CancellationError { return error }
        let host = serverName(url)
        let server = proxy.map { "the proxy \($0) (on the way to \(host))" } ?? host
        #if MODELDEPOT_SERVER_STACK
            if let proxy, let mapped = proxyError(error, proxy: proxy, host: host) { return mapped }
            if let mapped = certificateError(error, host: host) { return mapped }
            if let mapped = asyncHTTPClientError(error, server: server, url: url) { return mapped }
        #endif
        if let code = NetworkFrameworkError.posixCode(of: error) {
            return socketError(code, server: server, underlying: error)
        }
        return ModelDepotError(.network, "The connection to \(server) failed: \(error).", underlying: error)
    }

    #if MODELDEPOT_SERVER_STACK
        /// The proxy's refusals: it wants credentials (407), or answered `CONNECT` with something else than 200.
        private static func proxyError(_ error: any Error, proxy: ProxyServer, host: String) -> ModelDepotError? {
            guard let client = error as? HTTPClientError else { return nil }
            switch client {
            case .proxyAuthenticationRequired:
                let sent = proxy.username == nil ? "none were sent" : "it refused the ones in the proxy URL"
                return ModelDepotError(
                    .proxyRefused,
                    "The proxy \(proxy) wants credentials (407 Proxy Authentication Required) and \(sent): give them in the proxy URL, http://user:password@host:port (percent-encode special characters).",
                    underlying: error)
            case .invalidProxyResponse:
                return ModelDepotError(
                    .proxyRefused,
                    "The proxy \(proxy) refused to connect to \(host) (it answered CONNECT with an error; a proxy may allow only port 443, or block the host). Add \(host) to no_proxy if it should be reached directly.",
                    underlying: error)
            default:
                return nil
            }
        }

        /// A TLS handshake that failed on the server's certificate: named, with what to set.
        private static func certificateError(_ error: any Error, host: String) -> ModelDepotError? {
            guard let tls = error as? NIOSSLError, case .handshakeFailed(let reason) = tls else { return nil }
            let detail = "\(reason)"
            guard detail.contains("CERTIFICATE_VERIFY_FAILED") || detail.lowercased().contains("certificate") else {
                return ModelDepotError(
                    .network, "The TLS handshake with \(host) failed: \(detail).", underlying: error)
            }
            return ModelDepotError(
                .untrustedCertificate,
                "The certificate \(host) presented is not signed by an authority this machine trusts (a company's TLS-inspecting proxy, or a server with its own CA). If your organisation gave you a CA certificate, add it: SSL_CERT_FILE, SSL_CERT_DIR, REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE, or --ca-cert FILE; they add to the system's store.",
                underlying: error)
        }

        /// What async-http-client and SwiftNIO throw, worded; nil for anything else.
        private static func asyncHTTPClientError(_ error: any Error, server: String, url: URL) -> (any Error)? {
            if let parser = error as? HTTPParserError, parser == .invalidEOFState {
                return ModelDepotError(
                    .network, "The server at \(server) closed the connection in the middle of its answer.",
                    underlying: error)
            }
            if let parser = error as? HTTPParserError {
                let detail =
                    parser == .headerOverflow
                    ? "sent response headers larger than any client accepts" : "did not answer with HTTP (\(parser))"
                return ModelDepotError(
                    .protocolViolation,
                    "The server at \(server) \(detail). Check the URL's scheme and port; retrying will not help.",
                    underlying: error)
            }
            if let client = error as? HTTPClientError {
                switch client {
                case .readTimeout:
                    return ModelDepotError(
                        .network, "The server at \(server) stopped sending (read timeout).", underlying: error)
                case .connectTimeout:
                    return ModelDepotError(
                        .network, "Could not connect to \(server) in time (connect timeout).", underlying: error)
                case .remoteConnectionClosed:
                    return ModelDepotError(
                        .network, "The server at \(server) closed the connection before answering.", underlying: error)
                case .cancelled, .requestStreamCancelled:
                    return CancellationError()
                case .invalidURL, .emptyHost, .emptyScheme:
                    return ModelDepotError(.invalidURL, "Cannot request \(URLRedaction.redacted(url)): \(client).")
                default: break
                }
            }
            if let connection = error as? NIOConnectionError {
                if let failure = connection.connectionErrors.lazy.compactMap({ $0.error as? IOError }).first {
                    return socketError(failure.errnoCode, server: server, underlying: error)
                }
                if connection.dnsAError != nil || connection.dnsAAAAError != nil {
                    return ModelDepotError(
                        .network, "Cannot resolve the host name \(connection.host); check the URL and the network.",
                        underlying: error)
                }
            }
            if let io = error as? IOError {
                return socketError(io.errnoCode, server: server, underlying: error)
            }
            return nil
        }
    #endif

    private static func socketError(_ code: Int32, server: String, underlying: any Error) -> ModelDepotError {
        let message: String
        switch code {
        case ECONNREFUSED: message = "Nothing answers at \(server) (connection refused); is the server running?"
        case ECONNRESET: message = "The server at \(server) reset the connection."
        case ETIMEDOUT: message = "The connection to \(server) timed out."
        case ENETUNREACH, EHOSTUNREACH: message = "\(server) cannot be reached from this network."
        default: message = "The connection to \(server) failed: \(String(cString: strerror(code)))."
        }
        return ModelDepotError(.network, message, underlying: underlying)
    }

    /// Whether `error` (or the error it wraps) is a refused connection: the host answered that nothing listens
    /// at that port.
    package static func isRefusedConnection(_ error: any Error) -> Bool {
        if let error = error as? ModelDepotError { return error.underlying.map(isRefusedConnection) ?? false }
        #if MODELDEPOT_SERVER_STACK
            if let io = error as? IOError { return io.errnoCode == ECONNREFUSED }
            if let connection = error as? NIOConnectionError {
                return connection.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
            }
        #endif
        switch error {
        case let other where NetworkFrameworkError.posixCode(of: other) == ECONNREFUSED:
            return true
        case let other where URLSessionFailure.isRefusedConnection(other):
            return true
        default: return false
        }
    }

    /// `host:port`, as people type it.
    package static func serverName(_ url: URL) -> String {
        let host = url.host ?? "the server"
        return url.port.map { "\(host):\($0)" } ?? host
    }
}
