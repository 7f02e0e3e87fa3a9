import Foundation
import Logging
import ModelDepotCore
import NIOHTTP2
import NIOSSL
import Synchronization

/// A server's TLS certificate and key (`serve` and `ui` take `--tls-cert FILE --tls-key FILE`), read from PEM files,
/// and read again by ``reload()`` (SIGHUP): connections made after a reload get the new certificate, those open keep
/// theirs. Hummingbird builds its TLS context once, so the server holds the context itself and hands each new
/// connection the current one (``TLSServingChannel``). ALPN offers HTTP/2 and HTTP/1.1.
public final class ServerTLS: Sendable {
    public let certificatePath: String
    public let keyPath: String
    private let current: Mutex<NIOSSLContext>

    /// - Throws: `invalidArgument` naming the file when a certificate or key cannot be read.
    public init(certificate: String, key: String) throws {
        certificatePath = certificate
        keyPath = key
        current = Mutex(try Self.context(certificate: certificate, key: key))
    }

    /// The context new connections get.
    var context: NIOSSLContext { current.withLock { $0 } }

    /// Reads the files again; on failure the certificate in use stays, and the error says why.
    public func reload() throws {
        let fresh = try Self.context(certificate: certificatePath, key: keyPath)
        current.withLock { $0 = fresh }
    }

    private static func context(certificate: String, key: String) throws -> NIOSSLContext {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
        } catch {
            throw ModelDepotError(
                .invalidArgument,
                "--tls-cert \(certificate) holds no PEM certificate (-----BEGIN CERTIFICATE-----): give the server's certificate, then its intermediates.",
                underlying: error)
        }
        guard !chain.isEmpty else {
            throw ModelDepotError(.invalidArgument, "--tls-cert \(certificate) holds no certificate.")
        }
        let privateKey: NIOSSLPrivateKey
        do {
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw ModelDepotError(
                .invalidArgument,
                "--tls-key \(key) holds no unencrypted PEM private key (an encrypted one needs `openssl pkey -in \(key) -out plain.key` first).",
                underlying: error)
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        configuration.applicationProtocols = NIOHTTP2SupportedALPNProtocols
        // TLS 1.0 and 1.1 are deprecated (RFC 8996), and HTTP/2 must not run over them (RFC 9113 §9.2).
        configuration.minimumTLSVersion = .tlsv12
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw ModelDepotError(
                .invalidArgument,
                "--tls-cert \(certificate) and --tls-key \(key) do not make a TLS server (does the key belong to the certificate?).",
                underlying: error)
        }
    }
}
