import Crypto
import Foundation
import ModelDepotCore
import ModelDepotTrust
import X509

/// Certificates a user trusts to anchor model signatures made with certificates (`model_signing sign
/// certificate`): the signing certificate in a signature must chain to one of them (RFC 5280 path validation by
/// swift-certificates, at the signing certificate's start of validity, as model-signing checks it), and must be
/// allowed to sign (key usage `digitalSignature`, or the code-signing extended key usage).
///
/// A module of its own: swift-certificates brings BoringSSL (through swift-crypto's extras), which apps that check
/// key signatures only should not link.
///
/// A chain to a trusted certificate is not an identity: every holder of a signing certificate from that CA passes
/// it. ``identity`` (`--certificate-identity`, as Sigstore's tools name it) says whose signature it must be.
public struct TrustedCertificates: CertificateChainValidator {
    let certificates: [Certificate]

    /// Whom the signing certificate must name, exactly: its subject (`CN=Publisher,O=Acme`, as RFC 4514 writes
    /// it), its subject's common name, or one of its subject alternative names (an e-mail address, a DNS name, a
    /// URI). Nil accepts any signing certificate that chains to the trusted ones.
    public var identity: String?

    /// Reads one or more PEM certificates (`-----BEGIN CERTIFICATE-----` blocks).
    ///
    /// - Throws: `invalidArgument` for text holding no certificate, or one that does not parse.
    public init(pem: String) throws {
        let marker = "-----END CERTIFICATE-----"
        let blocks = pem.components(separatedBy: marker).dropLast().map { $0 + marker }
        guard !blocks.isEmpty else {
            throw ModelDepotError(
                .invalidArgument, "The trusted certificates hold no PEM certificate (-----BEGIN CERTIFICATE-----).")
        }
        certificates = try blocks.map { block in
            do {
                return try Certificate(pemEncoded: block.trimmingCharacters(in: .whitespacesAndNewlines))
            } catch {
                throw ModelDepotError(.invalidArgument, "A trusted certificate does not parse: \(error).")
            }
        }
    }

    /// Reads the PEM certificates in `file`.
    public init(contentsOf file: URL) throws {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw ModelDepotError(.invalidArgument, "Cannot read the trusted certificates \(file.path).")
        }
        try self.init(pem: String(decoding: data, as: UTF8.self))
    }

    /// The signing key of `chain` (DER certificates, the signing one first, as a signature carries them), once the
    /// chain is validated up to a trusted certificate and the leaf may sign.
    ///
    /// - Throws: `signatureInvalid` naming the problem.
    public func signingKey(of chain: [[UInt8]]) async throws -> TrustedKey {
        func refuse(_ problem: String) -> ModelDepotError {
            ModelDepotError(.signatureInvalid, "The signature's certificate \(problem).")
        }
        let parsed = try chain.map { der in
            do { return try Certificate(derEncoded: der) } catch { throw refuse("does not parse (\(error))") }
        }
        guard let leaf = parsed.first else { throw refuse("chain is empty") }
        var verifier = Verifier(rootCertificates: CertificateStore(certificates)) {
            RFC5280Policy(validationTime: leaf.notValidBefore)
        }
        let result = await verifier.validate(
            leaf: leaf, intermediates: CertificateStore(parsed.dropFirst()))
        guard case .validCertificate = result else {
            throw refuse("(\(leaf.subject)) does not chain to a trusted certificate")
        }
        let usage = try? leaf.extensions.keyUsage
        let extended = try? leaf.extensions.extendedKeyUsage
        guard usage?.digitalSignature == true || extended?.contains(.codeSigning) == true else {
            throw refuse("(\(leaf.subject)) may not be used for signing: its key usage lacks digital signatures")
        }
        if let identity, !Self.names(of: leaf).contains(identity) {
            throw refuse(
                "(\(leaf.subject)) is not the identity the signature must come from ('\(identity)'); it names \(Self.names(of: leaf).sorted().map { "'\($0)'" }.joined(separator: ", "))"
            )
        }
        guard let key = TrustedKey(leaf.publicKey) else {
            throw refuse("(\(leaf.subject)) holds a key other than ECDSA P-256, P-384 or P-521")
        }
        return key
    }
}

extension TrustedCertificates {
    /// The names a certificate goes by: its subject, the subject's common names, and its subject alternative
    /// names that are text (e-mail addresses, DNS names, URIs).
    static func names(of certificate: Certificate) -> Set<String> {
        var names: Set<String> = [certificate.subject.description]
        for name in certificate.subject {
            for attribute in name where attribute.type == .RDNAttributeType.commonName {
                if let text = String(attribute.value) { names.insert(text) }
            }
        }
        let alternatives = (try? certificate.extensions.subjectAlternativeNames).flatMap { $0 }
        for name in alternatives.map(Array.init) ?? [] {
            switch name {
            case .rfc822Name(let text), .dnsName(let text), .uniformResourceIdentifier(let text): names.insert(text)
            default: break
            }
        }
        return names
    }
}

extension TrustedKey {
    /// The key of a certificate, when it is ECDSA on P-256, P-384 or P-521.
    init?(_ key: Certificate.PublicKey) {
        if let inner = P256.Signing.PublicKey(key) {
            self.init(inner)
        } else if let inner = P384.Signing.PublicKey(key) {
            self.init(inner)
        } else if let inner = P521.Signing.PublicKey(key) {
            self.init(inner)
        } else {
            return nil
        }
    }
}
