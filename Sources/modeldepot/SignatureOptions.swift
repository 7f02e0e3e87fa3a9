#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot
    import ModelDepotCertificates

    /// Whose OpenSSF model signatures to trust, and where a repository keeps its signature (`pull
    /// --require-signature`, `verify --signature`).
    struct SignatureOptions: ParsableArguments {
        @Option(help: "A PEM public key (ECDSA P-256/384/521) whose model signatures to trust.")
        var trustedKey: String?

        @Option(
            help:
                "PEM certificates a signature's signing certificate must chain to (signatures made with certificates).")
        var trustedCertificate: String?

        @Option(
            help: """
                With --trusted-certificate: whom the signing certificate must name (its subject, common name, or a \
                subject alternative name such as an e-mail address). Without it, any holder of a signing certificate \
                from that CA may sign.
                """)
        var certificateIdentity: String?

        @Option(help: "Where the signature is in the repository.")
        var signaturePath: String = ModelManager.defaultSignaturePath

        /// Refuses a key given without the flag that uses it, and a required check without exactly one trust anchor.
        func validate(checking: Bool, flag: String) throws {
            let given = [trustedKey, trustedCertificate].compactMap { $0 }.count
            if checking, given != 1 {
                throw ValidationError(
                    "\(flag) needs --trusted-key KEY.pem (the publisher's public key) or --trusted-certificate CA.pem, one of them."
                )
            }
            if given > 0, !checking {
                throw ValidationError("--trusted-key and --trusted-certificate are used with \(flag).")
            }
            if certificateIdentity != nil, trustedCertificate == nil {
                throw ValidationError(
                    "--certificate-identity names whom a --trusted-certificate signature must come from.")
            }
            if (try? RepoFilePath(signaturePath)) == nil {
                throw ValidationError("--signature-path '\(signaturePath)' is not a path inside a repository.")
            }
        }

        /// Whom to trust, read before anything is downloaded; nil when no signature is checked.
        func trust() throws -> SignatureTrust? {
            if let trustedKey { return .key(try TrustedKey(contentsOf: URL(fileURLWithPath: trustedKey))) }
            if let trustedCertificate {
                var certificates = try TrustedCertificates(contentsOf: URL(fileURLWithPath: trustedCertificate))
                certificates.identity = certificateIdentity
                return .certificates(certificates)
            }
            return nil
        }
    }
#endif
