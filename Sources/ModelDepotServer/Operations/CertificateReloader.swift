import Logging
import ServiceLifecycle
import UnixSignals

/// Reads the mirror's TLS certificate again on SIGHUP (after a renewal), for the connections made from then on;
/// a certificate that cannot be read is logged and the one in use stays.
struct CertificateReloader: Service {
    let tls: MirrorTLS
    let logger: Logger

    func run() async throws {
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
