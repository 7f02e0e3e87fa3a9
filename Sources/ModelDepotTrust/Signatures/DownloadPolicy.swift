import Foundation
import ModelDepotCore

/// What a download must satisfy before anything of it is used: ``refusePickle`` keeps out weights that can run code
/// when loaded; ``signature`` requires the publisher's signature over exactly the files pulled.
public struct DownloadPolicy: Sendable {
    /// Refuse a download that selects a Python pickle (raw, in a PyTorch ZIP, or in a NumPy file), judged by its
    /// bytes.
    public var refusePickle: Bool
    /// When set, the pull is refused unless the repository's signature is the trusted publisher's and covers
    /// exactly its files; a refused pull leaves the cache as it was (nothing linked, no ref moved).
    public var signature: SignatureRequirement?

    public init(refusePickle: Bool = false, signature: SignatureRequirement? = nil) {
        self.refusePickle = refusePickle
        self.signature = signature
    }
}

/// Whose signature a pull requires, and where the signature is in the repository.
public struct SignatureRequirement: Sendable {
    /// The publisher's key, or the certificates their signing certificate must chain to.
    public var trust: SignatureTrust
    /// The signature's path in the repository (`model.sig`, model-signing's default).
    public var path: String

    public init(trust: SignatureTrust, path: String = ModelSignature.defaultPath) {
        self.trust = trust
        self.path = path
    }
}
