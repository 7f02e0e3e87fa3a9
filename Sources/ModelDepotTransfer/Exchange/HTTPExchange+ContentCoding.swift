import Foundation
import ModelDepotCore

#if MODELDEPOT_SERVER_STACK
    import CompressNIO
    import NIOCore
#endif

extension HTTPExchange {
    /// The most an API answer may inflate to: past it the answer is refused, not decoded (a compression bomb).
    package static let maximumDecodedBytes = 64 << 20

    /// The body of an API answer as the server meant it: every client here asks for `identity`, but a Hub or
    /// proxy may gzip JSON regardless (Python copes, so such servers exist). `gzip`, `x-gzip` and `deflate`
    /// (zlib-wrapped, or raw as some servers send it) are decoded, in the order they were applied;
    /// `identity` and no header leave the body as it is.
    ///
    /// - Throws: `protocolViolation` for an encoding ModelDepot cannot decode (`br`, `zstd`), a body that does
    ///   not decode, or one that inflates past ``maximumDecodedBytes``.
    package static func decodedBody(_ body: [UInt8], contentEncoding: String?, from url: URL) throws -> [UInt8] {
        let codings = (contentEncoding ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty && $0 != "identity" }
        var bytes = body
        for coding in codings.reversed() {
            guard ["gzip", "x-gzip", "deflate"].contains(coding) else {
                throw ModelDepotError(
                    .protocolViolation,
                    "\(URLRedaction.redacted(url)) answered with Content-Encoding '\(coding)', which ModelDepot did not ask for and cannot decode; a proxy in between may be compressing answers."
                )
            }
            bytes = try inflate(bytes, coding: coding, from: url)
        }
        return bytes
    }

    #if MODELDEPOT_SERVER_STACK
        /// `bytes` inflated as `coding` says (gzip; deflate zlib-wrapped, or raw as some servers send it).
        private static func inflate(_ bytes: [UInt8], coding: String, from url: URL) throws -> [UInt8] {
            let algorithms: [CompressionAlgorithm] = coding == "deflate" ? [.zlib(), .deflate()] : [.gzip()]
            var lastError: (any Error)?
            for algorithm in algorithms {
                var buffer = ByteBuffer(bytes: bytes)
                do {
                    // The library's limit counts requested capacity, which the allocator rounds up: check the result too.
                    let decoded = try buffer.decompress(with: algorithm, maxSize: maximumDecodedBytes)
                    guard decoded.readableBytes <= maximumDecodedBytes else { throw CompressNIOError.bufferOverflow }
                    return Array(decoded.readableBytesView)
                } catch let error as CompressNIOError where error == .bufferOverflow {
                    throw ModelDepotError(
                        .protocolViolation,
                        "\(URLRedaction.redacted(url)) sent a \(coding)-compressed answer that inflates past \(maximumDecodedBytes >> 20) MiB; it was refused.",
                        underlying: error)
                } catch {
                    lastError = error
                }
            }
            throw ModelDepotError(
                .protocolViolation,
                "\(URLRedaction.redacted(url)) said its answer was \(coding)-compressed, but it does not decode (\(lastError.map { "\($0)" } ?? "corrupt data")).",
                underlying: lastError)
        }
    #else
        /// Without compress-nio (apps on iOS and the like, whose URLSession transport decodes answers itself and
        /// drops the header), a body still compressed came through a transport that did not decode it.
        private static func inflate(_ bytes: [UInt8], coding: String, from url: URL) throws -> [UInt8] {
            throw ModelDepotError(
                .protocolViolation,
                "\(URLRedaction.redacted(url)) answered \(coding)-compressed through a transport that did not decode it; on this platform answers are decoded by URLSession."
            )
        }
    #endif

    /// Refuses a file body in a content coding: files are asked for as they are (`Accept-Encoding: identity`),
    /// and a compressed body would be written, and hashed, compressed.
    package static func refuseEncodedFile(_ response: TransportResponse, from url: URL) throws {
        guard let coding = response.header("Content-Encoding")?.trimmingCharacters(in: .whitespaces),
            !coding.isEmpty, coding.lowercased() != "identity", (200..<300).contains(response.status)
        else { return }
        throw ModelDepotError(
            .protocolViolation,
            "\(URLRedaction.redacted(url)) sent the file with Content-Encoding '\(coding)' although it was asked for as it is (Accept-Encoding: identity); nothing of it was written. A proxy in between is compressing downloads: turn that off for this host."
        )
    }
}
