import ArgumentParser
import Foundation
import ModelDepot

/// Whose OpenSSF model signatures to trust, and where a repository keeps its signature (`pull
/// --require-signature`, `verify --signature`).
struct SignatureOptions: ParsableArguments {
    @Option(help: "A PEM public key (ECDSA P-256/384/521) whose model signatures to trust.")
    var trustedKey: String?

    @Option(help: "Where the signature is in the repository.")
    var signaturePath: String = ModelManager.defaultSignaturePath

    /// Refuses a key given without the flag that uses it, and a required check without a key.
    func validate(checking: Bool, flag: String) throws {
        if checking, trustedKey == nil {
            throw ValidationError("\(flag) needs --trusted-key KEY.pem, the publisher's public key.")
        }
        if trustedKey != nil, !checking {
            throw ValidationError("--trusted-key is used with \(flag).")
        }
        if (try? RepoFilePath(signaturePath)) == nil {
            throw ValidationError("--signature-path '\(signaturePath)' is not a path inside a repository.")
        }
    }

    /// The trusted key, read before anything is downloaded; nil without one.
    func key() throws -> TrustedKey? {
        try trustedKey.map { try TrustedKey(contentsOf: URL(fileURLWithPath: $0)) }
    }
}
