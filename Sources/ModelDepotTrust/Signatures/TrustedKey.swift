import Crypto
import Foundation
import ModelDepotCore

/// A public key a model's publisher signs with, as OpenSSF Model Signing's key method uses it: ECDSA on P-256,
/// P-384 or P-521, each with the SHA-2 of its size (what `model-signing` picks for the curve).
public struct TrustedKey: Sendable {
    enum Key: Sendable {
        case p256(P256.Signing.PublicKey)
        case p384(P384.Signing.PublicKey)
        case p521(P521.Signing.PublicKey)
    }

    let key: Key

    /// The curve's name, for messages (`P-256`).
    public var curve: String {
        switch key {
        case .p256: "P-256"
        case .p384: "P-384"
        case .p521: "P-521"
        }
    }

    /// A P-256 key.
    public init(_ key: P256.Signing.PublicKey) { self.key = .p256(key) }
    /// A P-384 key.
    public init(_ key: P384.Signing.PublicKey) { self.key = .p384(key) }
    /// A P-521 key.
    public init(_ key: P521.Signing.PublicKey) { self.key = .p521(key) }

    /// Reads a PEM public key (`-----BEGIN PUBLIC KEY-----`, SubjectPublicKeyInfo, as `openssl ec -pubout` writes).
    ///
    /// - Throws: `invalidArgument` for text that is no PEM public key, or a key of another algorithm (RSA,
    ///   Ed25519): model signatures made with keys are ECDSA.
    public init(pem: String) throws {
        guard pem.contains("-----BEGIN PUBLIC KEY-----") else {
            throw ModelDepotError(
                .invalidArgument,
                "The trusted key is not a PEM public key (-----BEGIN PUBLIC KEY-----); export it with `openssl ec -in KEY -pubout`."
            )
        }
        if let key = try? P256.Signing.PublicKey(pemRepresentation: pem) {
            self.key = .p256(key)
        } else if let key = try? P384.Signing.PublicKey(pemRepresentation: pem) {
            self.key = .p384(key)
        } else if let key = try? P521.Signing.PublicKey(pemRepresentation: pem) {
            self.key = .p521(key)
        } else {
            throw ModelDepotError(
                .invalidArgument,
                "The trusted key is not an ECDSA key on P-256, P-384 or P-521, the keys model signatures use.")
        }
    }

    /// Reads the PEM public key in `file`.
    public init(contentsOf file: URL) throws {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw ModelDepotError(.invalidArgument, "Cannot read the trusted key \(file.path).")
        }
        try self.init(pem: String(decoding: data, as: UTF8.self))
    }

    /// The key's DER SubjectPublicKeyInfo.
    var derRepresentation: Data {
        switch key {
        case .p256(let key): key.derRepresentation
        case .p384(let key): key.derRepresentation
        case .p521(let key): key.derRepresentation
        }
    }

    /// The identifier a signature's `publicKey.hint` holds: the SHA-256 of the key's PEM text, in the exact form
    /// Python's `cryptography` writes (64-column base64, a newline after each line).
    package var hint: String {
        let base64 = derRepresentation.base64EncodedString()
        var lines = ["-----BEGIN PUBLIC KEY-----"]
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(64)))
            rest = rest.dropFirst(64)
        }
        lines.append("-----END PUBLIC KEY-----")
        return SHA256.hash(data: Data((lines.joined(separator: "\n") + "\n").utf8)).hexString
    }

    /// Whether `signature` (DER-encoded ECDSA) is this key's over `message`.
    func isValid(signature: Data, for message: Data) -> Bool {
        switch key {
        case .p256(let key):
            guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: message)
        case .p384(let key):
            guard let signature = try? P384.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: message)
        case .p521(let key):
            guard let signature = try? P521.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: message)
        }
    }
}

/// Turns the certificate chain a signature carries (DER, the signing certificate first) into the key to check it
/// with, once the chain leads to certificates the user trusts. `ModelDepotCertificates`' `TrustedCertificates`
/// implements it with swift-certificates.
public protocol CertificateChainValidator: Sendable {
    /// The signing certificate's key, or `signatureInvalid` naming why the chain is not trusted.
    func signingKey(of chain: [[UInt8]]) async throws -> TrustedKey
}

/// Whom a model signature must come from.
public enum SignatureTrust: Sendable {
    /// A publisher's public key (`model_signing sign key`).
    case key(TrustedKey)
    /// Certificates a publisher's signing certificate must chain to (`model_signing sign certificate`).
    case certificates(any CertificateChainValidator)
}
