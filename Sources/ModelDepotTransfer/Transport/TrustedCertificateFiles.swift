#if MODELDEPOT_SERVER_STACK
    import Foundation
    import ModelDepotCore
    import NIOSSL

    /// Reads the PEM certificates that ``TrustSettings`` names, each certificate once.
    ///
    /// The variables people set often name one system bundle several times over (`SSL_CERT_FILE`,
    /// `REQUESTS_CA_BUNDLE` and `CURL_CA_BUNDLE` the same file, `SSL_CERT_DIR` the folder that holds it beside a link
    /// to each of its certificates): a file reached twice (through a link or a second variable) is read once, and a
    /// certificate that appears in several files is parsed once.
    enum TrustedCertificateFiles {
        static let begin = "-----BEGIN CERTIFICATE-----"
        static let end = "-----END CERTIFICATE-----"

        /// The certificates `trust` adds: each file's PEM certificates, and for a folder those of every file in it
        /// that holds some.
        ///
        /// - Throws: `invalidArgument` naming the variable or flag when a file holds no certificate (or one that
        ///   does not parse), or a folder holds none.
        static func certificates(_ trust: TrustSettings) throws -> [NIOSSLCertificate] {
            var filesRead: Set<String> = []
            var filesRefused: Set<String> = []
            var blocksSeen: Set<Substring> = []
            var certificates: [NIOSSLCertificate] = []
            /// The certificates of `path` not seen before; nil when it is not a readable file of PEM certificates
            /// (however often it is named). Nothing of a file counts as seen until all of it has parsed.
            func read(_ path: String) -> [NIOSSLCertificate]? {
                let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
                if filesRefused.contains(resolved) { return nil }
                if filesRead.contains(resolved) { return [] }
                guard let data = FileManager.default.contents(atPath: resolved) else {
                    filesRefused.insert(resolved)
                    return nil
                }
                let blocks = pemBlocks(in: String(decoding: data, as: UTF8.self))
                var fresh: Set<Substring> = []
                var parsed: [NIOSSLCertificate] = []
                for block in blocks where !blocksSeen.contains(block) && fresh.insert(block).inserted {
                    guard let certificate = try? NIOSSLCertificate(bytes: Array(block.utf8), format: .pem) else {
                        filesRefused.insert(resolved)
                        return nil
                    }
                    parsed.append(certificate)
                }
                guard !blocks.isEmpty else {
                    filesRefused.insert(resolved)
                    return nil
                }
                filesRead.insert(resolved)
                blocksSeen.formUnion(fresh)
                return parsed
            }
            for source in trust.additional {
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: source.path, isDirectory: &isFolder) else {
                    _ = try TrustSettings.checked(source)  // throws: it names nothing
                    continue
                }
                if !isFolder.boolValue {
                    guard let found = read(source.path) else {
                        throw ModelDepotError(
                            .invalidArgument,
                            "\(source.origin) names \(source.path), which holds no PEM certificate (\(begin)): give the CA's certificate in PEM form."
                        )
                    }
                    certificates += found
                    continue
                }
                let names = (try? FileManager.default.contentsOfDirectory(atPath: source.path)) ?? []
                var readAny = false
                for name in names.sorted() {
                    guard let found = read(source.path + "/" + name) else { continue }
                    readAny = true
                    certificates += found
                }
                guard readAny else {
                    throw ModelDepotError(
                        .invalidArgument,
                        "\(source.origin) names the folder \(source.path), which holds no PEM certificate: put the CA's certificate there in PEM form."
                    )
                }
            }
            return certificates
        }

        /// Each `BEGIN CERTIFICATE` … `END CERTIFICATE` block of `text`, markers included, in order.
        static func pemBlocks(in text: String) -> [Substring] {
            var blocks: [Substring] = []
            var rest = text[...]
            while let start = rest.range(of: begin), let stop = rest[start.upperBound...].range(of: end) {
                blocks.append(rest[start.lowerBound..<stop.upperBound])
                rest = rest[stop.upperBound...]
            }
            return blocks
        }
    }
#endif
