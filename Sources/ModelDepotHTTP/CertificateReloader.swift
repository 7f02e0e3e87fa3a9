import Logging
import ServiceLifecycle
import UnixSignals

/// Reads a server's TLS certificate again on SIGHUP (after a renewal), for the connections made from then on;
/// a certificate that cannot be read is logged and the one in use stays.
public struct CertificateReloader: Service {
    let tls: ServerTLS
    let logger: Logger

    public init(tls: ServerTLS, logger: Logger) {
        self.tls = tls
        self.logger = logger
    }

    public func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        for await _ in hangups.cancelOnGracefulShutdown() {
            do {
                try tls.reload()
                logger.notice("TLS certificate read again", metadata: ["certificate": "\(tls.certificatePath)"])
            } catch {
                logger.error(
                    "the TLS certificate could not be read again; the one in use stays",
                    metadata: ["error": "\(error)"])
            }
        }
    }
}
