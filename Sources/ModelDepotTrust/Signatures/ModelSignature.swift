import Crypto
import Foundation
import ModelDepotCore

/// A detached model signature in the OpenSSF Model Signing format (v1.0, what `model-signing` 1.x writes to
/// `model.sig`): a Sigstore bundle whose DSSE envelope carries an in-toto statement listing every file of the model
/// folder with its SHA-256.
///
/// ``verified(by:)-(SignatureTrust)`` checks the envelope's ECDSA signature over DSSE's pre-authentication encoding with a key the
/// user trusts, then reads the statement; ``SignedFiles/problems(comparedWith:)`` holds a model's files to it.
/// Nothing in the statement is believed before the signature over it checks out.
@usableFromInline package struct ModelSignature: Sendable {
    /// The signature file model-signing writes into a model folder by default.
    @usableFromInline package static let defaultPath = "model.sig"

    /// The DSSE payload type model signatures carry.
    static let payloadType = "application/vnd.in-toto+json"

    /// The statement's raw bytes, exactly as signed.
    let payload: Data
    let signature: Data
    let keyHint: String?
    /// The certificates the signature carries (DER, the signing one first); empty for a key signature.
    let certificateChain: [[UInt8]]

    /// Reads a signature file's bytes.
    ///
    /// - Throws: `signatureInvalid` naming what is wrong: not JSON, not a Sigstore bundle, no DSSE envelope, a
    ///   payload type other than in-toto's, no signature, or a base64 field that does not decode.
    package init(bundle data: Data, name: String = "the signature") throws {
        func refuse(_ problem: String) -> ModelDepotError {
            ModelDepotError(.signatureInvalid, "\(name) \(problem); it cannot be checked.")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw refuse("is not a JSON Sigstore bundle (truncated?)")
        }
        guard let mediaType = object["mediaType"] as? String,
            mediaType.hasPrefix("application/vnd.dev.sigstore.bundle")
        else { throw refuse("is not a Sigstore bundle (no application/vnd.dev.sigstore.bundle media type)") }
        guard let envelope = object["dsseEnvelope"] as? [String: Any] else {
            throw refuse("holds no DSSE envelope (a message signature is not a model signature)")
        }
        guard let type = envelope["payloadType"] as? String, type == Self.payloadType else {
            throw refuse("carries \(envelope["payloadType"] as? String ?? "no payload type"), not \(Self.payloadType)")
        }
        guard let payloadText = envelope["payload"] as? String, let payload = Data(base64Encoded: payloadText) else {
            throw refuse("has a payload that is not base64")
        }
        guard let signatures = envelope["signatures"] as? [[String: Any]], signatures.count == 1,
            let signatureText = signatures[0]["sig"] as? String, let signature = Data(base64Encoded: signatureText)
        else { throw refuse("does not hold exactly one base64 signature") }
        let material = object["verificationMaterial"] as? [String: Any] ?? [:]
        self.payload = payload
        self.signature = signature
        self.keyHint = (material["publicKey"] as? [String: Any])?["hint"] as? String
        var chain = (material["x509CertificateChain"] as? [String: Any])?["certificates"] as? [[String: Any]] ?? []
        if let single = material["certificate"] as? [String: Any] { chain = [single] }
        self.certificateChain = try chain.map { entry in
            guard let text = entry["rawBytes"] as? String, let der = Data(base64Encoded: text) else {
                throw refuse("holds a certificate that is not base64")
            }
            return [UInt8](der)
        }
    }

    /// DSSE's pre-authentication encoding of the payload: what the ECDSA signature is over.
    var preAuthenticationEncoding: Data {
        var bytes = Data("DSSEv1 \(Self.payloadType.utf8.count) \(Self.payloadType) \(payload.count) ".utf8)
        bytes.append(payload)
        return bytes
    }

    /// The signed file list, once the signature is the trusted publisher's over exactly this statement.
    ///
    /// - Throws: `signatureInvalid`: a key signature where certificates are trusted or the reverse, a certificate
    ///   that does not chain to a trusted one or may not sign, a key hint naming another key, a signature that
    ///   does not verify (another key, or a statement changed after signing), or a statement that is not a v1.0
    ///   model signature (see ``SignedFiles``).
    package func verified(by trust: SignatureTrust) async throws -> SignedFiles {
        switch trust {
        case .key(let key):
            return try verified(by: key)
        case .certificates(let certificates):
            guard !certificateChain.isEmpty else {
                throw ModelDepotError(
                    .signatureInvalid,
                    "The model was signed with a key, not a certificate; check it with the publisher's key (--trusted-key)."
                )
            }
            let key = try await certificates.signingKey(of: certificateChain)
            var signed = try checked(by: key)
            signed.signingCertificateSHA256 = SHA256.hash(data: certificateChain[0]).hexString
            return signed
        }
    }

    /// The signed file list, once the signature is `key`'s over exactly this statement.
    package func verified(by key: TrustedKey) throws -> SignedFiles {
        guard certificateChain.isEmpty else {
            throw ModelDepotError(
                .signatureInvalid,
                "The model was signed with a certificate; check it against the certificates you trust (--trusted-certificate)."
            )
        }
        if let keyHint, keyHint.lowercased() != key.hint {
            throw ModelDepotError(
                .signatureInvalid,
                "The model was signed with another key (its signature names key \(keyHint.prefix(16))…, the trusted key is \(key.hint.prefix(16))…)."
            )
        }
        return try checked(by: key)
    }

    /// The statement, once `key` verifies the signature over it.
    private func checked(by key: TrustedKey) throws -> SignedFiles {
        guard key.isValid(signature: signature, for: preAuthenticationEncoding) else {
            throw ModelDepotError(
                .signatureInvalid,
                "The signature does not verify with the trusted \(key.curve) key: the statement was changed after signing, or another key signed it."
            )
        }
        var signed = try SignedFiles(statement: payload)
        signed.signerKeySHA256 = SHA256.hash(data: key.derRepresentation).hexString
        signed.signerKeyCurve = key.curve
        return signed
    }
}

/// What a verified model signature says: the model's name and every file's SHA-256 (whole, or piece by piece), with
/// the paths signing ignored.
public struct SignedFiles: Sendable, Hashable {
    /// The name the signer gave the model (its folder's name).
    public var modelName: String
    /// Every signed file by its path in the model folder, with the lowercase hex SHA-256 of its content: one digest
    /// of the whole file (model-signing's "files" serialization), or with ``shardSize``, one for each consecutive
    /// piece of that many bytes, the last possibly shorter ("shards"; an empty file has no pieces and is not
    /// listed).
    public var files: [String: [String]]
    /// The piece size of the "shards" serialization; nil when whole files were hashed.
    public var shardSize: Int64?
    /// Paths signing skipped (the signature file itself, `.git`, `.gitattributes`, …), as the statement lists them.
    public var ignoredPaths: [String]
    /// Who signed, once verified: the SHA-256 of the signing key's DER SubjectPublicKeyInfo
    /// (`openssl pkey -pubin -outform DER | sha256sum`), its curve, and for a certificate signature the SHA-256 of
    /// the signing certificate's DER.
    package var signerKeySHA256: String?
    package var signerKeyCurve: String?
    package var signingCertificateSHA256: String?

    /// Reads an in-toto statement of model-signing's v1.0 predicate.
    ///
    /// - Throws: `signatureInvalid` naming the problem: not an in-toto v1 statement, another predicate, a
    ///   serialization other than files or shards with SHA-256, a digest of the wrong length, a path that leaves the
    ///   model folder or is listed twice, pieces that do not tile their file, or a root digest that does not match.
    init(statement: Data) throws {
        func refuse(_ problem: String) -> ModelDepotError {
            ModelDepotError(.signatureInvalid, "The signed statement \(problem).")
        }
        guard let object = try? JSONSerialization.jsonObject(with: statement) as? [String: Any] else {
            throw refuse("is not JSON")
        }
        guard object["_type"] as? String == "https://in-toto.io/Statement/v1" else {
            throw refuse("is not an in-toto v1 statement")
        }
        let predicateType = object["predicateType"] as? String ?? "none"
        guard predicateType == "https://model_signing/signature/v1.0" else {
            throw refuse("has predicate type \(predicateType), not model-signing's v1.0")
        }
        guard let subjects = object["subject"] as? [[String: Any]], subjects.count == 1,
            let name = subjects[0]["name"] as? String,
            let root = (subjects[0]["digest"] as? [String: Any])?["sha256"] as? String
        else { throw refuse("does not name exactly one model with a SHA-256 digest") }
        guard let predicate = object["predicate"] as? [String: Any],
            let serialization = predicate["serialization"] as? [String: Any],
            let resources = predicate["resources"] as? [[String: Any]]
        else { throw refuse("has no serialization or resources") }
        guard serialization["hash_type"] as? String == "sha256" else {
            throw refuse("uses hash type \(serialization["hash_type"] as? String ?? "none"), not sha256")
        }
        let method = serialization["method"] as? String ?? "none"
        switch method {
        case "files":
            shardSize = nil
        case "shards":
            // A protobuf Struct carries every number as a double: model-signing writes 1000000000.0.
            guard let size = Self.wholeNumber(serialization["shard_size"]), size > 0 else {
                throw refuse("shards files without a usable shard size")
            }
            shardSize = size
        default:
            throw refuse("hashes by \(method); only whole files (\"files\") and pieces (\"shards\") are checked")
        }
        let algorithm = shardSize.map { "sha256-sharded-\($0)" } ?? "sha256"
        var pieces: [String: [Int64: (end: Int64, digest: String)]] = [:]
        var rootHasher = SHA256()
        for resource in resources {
            guard let resourceName = resource["name"] as? String, let digest = resource["digest"] as? String else {
                throw refuse("lists a file without a name or digest")
            }
            guard let (path, start, end) = Self.piece(named: resourceName, sharded: shardSize != nil) else {
                throw refuse("lists \(resourceName), which does not name a piece as path:start:end")
            }
            guard resource["algorithm"] as? String == algorithm else {
                throw refuse(
                    "hashes \(path) with \(resource["algorithm"] as? String ?? "no algorithm"), not \(algorithm)")
            }
            guard (try? RepoFilePath(path)) != nil else {
                throw refuse("names \(path), which leaves the model folder")
            }
            guard digest.utf8.count == 64, let bytes = Data(hexString: digest) else {
                throw refuse("gives \(path) a digest that is not 64 hex digits")
            }
            guard pieces[path, default: [:]].updateValue((end, digest.lowercased()), forKey: start) == nil else {
                throw refuse("lists \(resourceName) twice")
            }
            rootHasher.update(data: bytes)
        }
        guard rootHasher.finalize().hexString == root.lowercased() else {
            throw refuse("is inconsistent: its file digests do not hash to the model's digest")
        }
        var files: [String: [String]] = [:]
        for (path, byStart) in pieces {
            let ordered = byStart.sorted { $0.key < $1.key }
            if let shardSize {
                // The pieces must tile the file from byte 0: each one shard long, the last at most that.
                let tiles = ordered.enumerated().allSatisfy { index, piece in
                    let length = piece.value.end - piece.key
                    return piece.key == Int64(index) * shardSize
                        && (index == ordered.count - 1 ? (1...shardSize).contains(length) : length == shardSize)
                }
                guard tiles else {
                    throw refuse("lists pieces of \(path) that do not tile it in \(shardSize)-byte shards")
                }
            }
            files[path] = ordered.map(\.value.digest)
        }
        self.modelName = name
        self.files = files
        self.ignoredPaths = serialization["ignore_paths"] as? [String] ?? []
    }

    /// A resource's path and byte range: the name itself for whole files; `path:start:end` for shards (the path
    /// may hold colons; the range is the last two fields).
    private static func piece(named name: String, sharded: Bool) -> (String, Int64, Int64)? {
        guard sharded else { return (name, 0, 0) }
        let fields = name.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count >= 3, let start = Int64(fields[fields.count - 2]), let end = Int64(fields[fields.count - 1]),
            start >= 0, end > start
        else { return nil }
        return (fields.dropLast(2).joined(separator: ":"), start, end)
    }

    /// A JSON number that is a whole number (`1000`, or `1000.0` as protobuf writes it).
    private static func wholeNumber(_ value: Any?) -> Int64? {
        if let integer = value as? Int { return Int64(integer) }
        if let double = value as? Double, double.rounded() == double, abs(double) < 1e18 { return Int64(double) }
        return nil
    }

    /// The paths model-signing 1.1.1 skips in every model unless told not to: `ignore_git_paths` in
    /// `model_signing/hashing.py` (`Config.hash`), each the path itself or anything below it
    /// (`_serialization/serialization.py`'s `should_ignore`). Exactly these: a `.gitmodules` or `.git_loader.py`
    /// beside the weights is a file like any other, and must be signed.
    package static let modelSigningGitPaths = [".git", ".gitattributes", ".github", ".gitignore"]

    /// Whether signing skipped `path`: listed in the statement's ignored paths (or below one), the signature file
    /// `signaturePath`, or one of model-signing's own git paths (``modelSigningGitPaths``) or below one.
    package func ignores(_ path: String, signaturePath: String) -> Bool {
        if path == signaturePath { return true }
        return (ignoredPaths + Self.modelSigningGitPaths).contains { path == $0 || path.hasPrefix($0 + "/") }
    }

    /// What a file's signed digests are made of.
    package enum Coverage: Sendable, Equatable {
        /// No digest: an empty file signed in shards has no pieces.
        case nothing
        /// One SHA-256 of the whole file (whole-file signing, or a file of at most one shard).
        case whole
        /// One SHA-256 per piece of the given size.
        case pieces(Int64)
    }

    /// What the digests of a file of `size` bytes are made of under this signature.
    package func coverage(ofFileOfSize size: Int64) -> Coverage {
        guard let shardSize else { return .whole }
        if size == 0 { return .nothing }
        return size <= shardSize ? .whole : .pieces(shardSize)
    }

    /// The digests a file of `size` bytes is signed by, given its whole-file SHA-256 (`sha256`) and, for files of
    /// more than one shard, its pieces' (`pieces`, asked only then): what ``files`` would hold for it.
    package func digests(size: Int64, sha256: () throws -> String, pieces: () throws -> [String]) rethrows -> [String] {
        switch coverage(ofFileOfSize: size) {
        case .nothing: []
        case .whole: [try sha256()]
        case .pieces: try pieces()
        }
    }

    /// How a model's files (path → digests as ``files`` holds them, ignored ones left out) differ from what was
    /// signed; empty when they are exactly the signed ones.
    package func problems(comparedWith actual: [String: [String]]) -> [String] {
        var problems: [String] = []
        for (path, digests) in actual.sorted(by: { $0.key < $1.key }) {
            guard let signed = files[path] else {
                // With shards an empty file has no pieces, so signing listed nothing for it.
                if shardSize != nil && digests.isEmpty { continue }
                problems.append("\(path) is not covered by the signature")
                continue
            }
            let lowercased = digests.map { $0.lowercased() }
            guard signed != lowercased else { continue }
            if let shardSize, signed.count > 1, signed.count == lowercased.count,
                let index = signed.indices.first(where: { signed[$0] != lowercased[$0] })
            {
                problems.append(
                    "\(path) differs from what was signed (its shard from byte \(Int64(index) * shardSize))")
            } else {
                problems.append("\(path) differs from what was signed")
            }
        }
        for path in files.keys.sorted() where actual[path] == nil {
            problems.append("\(path) is signed but not in the model")
        }
        return problems
    }
}

extension Data {
    /// Bytes from an even number of hex digits; nil for anything else.
    init?(hexString text: String) {
        var bytes = [UInt8]()
        bytes.reserveCapacity(text.utf8.count / 2)
        var high: UInt8?
        for character in text.utf8 {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        guard high == nil else { return nil }
        self.init(bytes)
    }
}
