import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// `pull --require-signature` and `verify --signature` against repositories signed by the reference signer, PyPI's
/// model-signing 1.1.1 (the venv `scripts/test` makes, `.venv-signing`), served by our mirror.
@Suite(.enabled(if: SigningVenv.isInstalled, "model-signing is missing (scripts/test installs it)"))
struct SignatureCommandTests {
    @Test func signaturesModelSigningMadeAreCheckedAndEveryTamperingIsRefused() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-signing")
        defer { folder.remove() }
        let keys = try await SigningVenv.prepare(in: folder)
        let trusted = try #require(keys["trusted"])

        let (mirrorURL, serving) = try await FolderMirror.start(root: folder.path("repos"))
        defer { serving.cancel() }
        let endpoint = mirrorURL.absoluteString
        func pull(_ name: String, key: String = trusted) async throws -> (CLIRunner.Output, URL) {
            let cache = folder.path("cache-\(name)")
            let output = try await CLIRunner.run([
                "pull", "acme/\(name)", "--require-signature", "--trusted-key", key, "--endpoint", endpoint,
                "--cache-dir", cache.path,
            ])
            return (output, cache)
        }

        // Signed by the trusted key: pulled, and the weights' digest is the download's own (nothing re-hashed
        // but the two small files).
        let (good, cache) = try await pull("good")
        #expect(good.status == 0, "\(good.stderr)")
        #expect(
            good.stderr.contains(
                "signature: 3 files signed by the trusted publisher match (1 digests from the download"),
            "\(good.stderr)")
        let snapshot = try #require(good.stdout.split(separator: "\n").last.map(String.init))
        #expect(snapshot.contains("/snapshots/"))
        // model-signing itself agrees that the snapshot, as the cache holds it, is what was signed.
        let signatureBlob = URL(fileURLWithPath: snapshot + "/model.sig").resolvingSymlinksInPath().path
        let theirs = try await SigningVenv.run(["verify", snapshot, trusted, signatureBlob])
        #expect(theirs.status == 0, "\(theirs.stderr)")
        let verified = try await CLIRunner.run([
            "verify", "acme/good", "--signature", "--trusted-key", trusted, "--cache-dir", cache.path,
        ])
        #expect(verified.status == 0 && verified.stdout.contains("3 files match the signature"), "\(verified.stderr)")
        // config.json's link replaced by a chain of 25 links to a copy outside the repository, byte for byte the
        // same: only the repository's bytes count (Foundation's resolver stopped at 20 links and let the kernel read
        // the copy), so the signed file is absent and the signature does not hold.
        let configLink = snapshot + "/config.json"
        let configBlob = URL(fileURLWithPath: configLink).resolvingSymlinksInPath()
        let outside = folder.path("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try Data(contentsOf: configBlob).write(to: outside.appendingPathComponent("config.json"))
        var previous = outside.appendingPathComponent("config.json").path
        for index in 1...25 {
            let link = outside.appendingPathComponent("link-\(index)").path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: previous)
            previous = link
        }
        try FileManager.default.removeItem(atPath: configLink)
        try FileManager.default.createSymbolicLink(atPath: configLink, withDestinationPath: previous)
        let elsewhere = try await CLIRunner.run([
            "verify", "acme/good", "--signature", "--trusted-key", trusted, "--cache-dir", cache.path,
        ])
        #expect(elsewhere.status == 1 && elsewhere.stderr.contains("config.json"), "\(elsewhere.stderr)")
        try FileManager.default.removeItem(atPath: configLink)
        try FileManager.default.createSymbolicLink(atPath: configLink, withDestinationPath: configBlob.path)
        // A byte of the cached weights flipped: the remembered verification no longer holds, so it is hashed again.
        let weights = URL(fileURLWithPath: snapshot + "/weights.bin").resolvingSymlinksInPath()
        var bytes = try Data(contentsOf: weights)
        bytes[4096] ^= 1
        try bytes.write(to: weights)
        let flipped = try await CLIRunner.run([
            "verify", "acme/good", "--signature", "--trusted-key", trusted, "--cache-dir", cache.path,
        ])
        #expect(
            flipped.status == 1 && flipped.stderr.contains("weights.bin differs from what was signed"),
            "\(flipped.stderr)")

        let (p384, _) = try await pull("p384", key: try #require(keys["p384"]))
        #expect(p384.status == 0, "\(p384.stderr)")

        // Signed in shards: every piece of the weights hashed (one pass), the empty file covered by having none;
        // model-signing agrees about the snapshot we pulled.
        let (sharded, _) = try await pull("sharded")
        #expect(sharded.status == 0, "\(sharded.stderr)")
        #expect(
            sharded.stderr.contains("signature: 3 files signed by the trusted publisher match"), "\(sharded.stderr)")
        let shardedSnapshot = try #require(sharded.lastLine)
        #expect(FileManager.default.fileExists(atPath: shardedSnapshot + "/empty.txt"))
        let theirsSharded = try await SigningVenv.run([
            "verify", shardedSnapshot, trusted,
            URL(fileURLWithPath: shardedSnapshot + "/model.sig").resolvingSymlinksInPath().path,
        ])
        #expect(theirsSharded.status == 0, "\(theirsSharded.stderr)")

        // Each refusal names its reason; no snapshot folder is printed; those refused on the signature alone
        // download none of the weights.
        let refusals: [(String, String, Bool)] = [
            ("tampered", "config.json differs from what was signed", false),
            ("extra", "extra.txt is not covered by the signature", false),
            ("removed", "sub/notes.txt is signed but not in the model", false),
            ("otherkey", "signed with another key", true),
            ("altered", "does not verify with the trusted P-256 key", true),
            ("forged", "does not verify with the trusted P-256 key", true),
            ("unsigned", "has no signature at model.sig", true),
            ("truncated", "is not a JSON Sigstore bundle", true),
            ("climbing", "names ../outside.json, which leaves the model folder", true),
            ("othermethod", "hashes by merkle", true),
            ("sharded-tampered", "weights.bin differs from what was signed (its shard from byte 1048576)", false),
            ("sharded-gap", "lists pieces of weights.bin that do not tile it in 1048576-byte shards", true),
        ]
        for (name, reason, beforeWeights) in refusals {
            let (refused, cache) = try await pull(name)
            #expect(refused.status == 1 && refused.stderr.contains(reason), "\(name): \(refused.stderr)")
            #expect(!refused.stdout.contains("/snapshots/"), "\(name): \(refused.stdout)")
            // Nothing anyone would load: no ref, no snapshot (the signature-only step used to set `refs/main` and
            // link the files before the check threw).
            let repository = cache.appendingPathComponent("models--acme--\(name)")
            #expect(
                !FileManager.default.fileExists(atPath: repository.appendingPathComponent("refs/main").path),
                "\(name) moved refs/main")
            let snapshots =
                (try? FileManager.default.contentsOfDirectory(
                    atPath: repository.appendingPathComponent("snapshots").path)) ?? []
            #expect(snapshots.isEmpty, "\(name) left snapshots \(snapshots)")
            if beforeWeights {
                let blobs = cache.appendingPathComponent("models--acme--\(name)/blobs")
                let sizes = ((try? FileManager.default.contentsOfDirectory(atPath: blobs.path)) ?? []).compactMap {
                    FileManager.default.fileSize(blobs.appendingPathComponent($0))
                }
                #expect(sizes.allSatisfy { $0 < 1 << 20 }, "\(name) downloaded the weights: \(sizes)")
            }
        }

        // Signed with certificates: the publisher's certificate chains to the trusted root (model-signing agrees);
        // a stranger's does not; a certificate that may not sign is refused; a key signature is not a certificate's.
        let root = try #require(keys["root"])
        func pullCertified(_ name: String) async throws -> CLIRunner.Output {
            try await CLIRunner.run([
                "pull", "acme/\(name)", "--require-signature", "--trusted-certificate", root, "--endpoint", endpoint,
                "--cache-dir", folder.path("cache-\(name)").path,
            ])
        }
        let certified = try await pullCertified("cert-good")
        #expect(certified.status == 0, "\(certified.stderr)")
        let certifiedSnapshot = try #require(certified.lastLine)
        let theirVerdict = try await SigningVenv.run([
            "verify", certifiedSnapshot, root,
            URL(fileURLWithPath: certifiedSnapshot + "/model.sig").resolvingSymlinksInPath().path,
        ])
        #expect(theirVerdict.status == 0, "\(theirVerdict.stderr)")
        for (name, reason) in [
            ("cert-stranger", "does not chain to a trusted certificate"),
            ("cert-encipherer", "may not be used for signing"), ("good", "signed with a key, not a certificate"),
        ] {
            let refused = try await pullCertified(name)
            #expect(refused.status == 1 && refused.stderr.contains(reason), "\(name): \(refused.stderr)")
        }
        // Any holder of a signing certificate from the trusted root passes the chain check; only
        // --certificate-identity (the leaf's subject, its common name, or a subject alternative name) says whose
        // signature it must be.
        func pullIdentified(_ name: String, _ identity: String) async throws -> CLIRunner.Output {
            try await CLIRunner.run([
                "pull", "acme/\(name)", "--require-signature", "--trusted-certificate", root, "--certificate-identity",
                identity, "--endpoint", endpoint, "--cache-dir", folder.path("cache-\(name)-\(identity)").path,
            ])
        }
        let intruder = try await pullIdentified("cert-intruder", "Publisher")
        #expect(
            intruder.status == 1 && intruder.stderr.contains("not the identity"), "intruder: \(intruder.stderr)")
        for identity in ["Publisher", "publisher@example.com", "CN=Publisher"] {
            let publisher = try await pullIdentified("cert-good", identity)
            #expect(publisher.status == 0, "\(identity): \(publisher.stderr)")
        }
        let wrongIdentity = try await pullIdentified("cert-good", "intruder@example.com")
        #expect(
            wrongIdentity.status == 1 && wrongIdentity.stderr.contains("not the identity"), "\(wrongIdentity.stderr)")
        let keyForCertificate = try await pull("cert-good")
        #expect(keyForCertificate.0.stderr.contains("signed with a certificate"), "\(keyForCertificate.0.stderr)")

        // Bad keys and flags, before anything is downloaded.
        let (rsa, _) = try await pull("good", key: try #require(keys["rsa"]))
        #expect(rsa.status == 1 && rsa.stderr.contains("not an ECDSA key"), "\(rsa.stderr)")
        let noKey = try await CLIRunner.run(["pull", "acme/good", "--require-signature", "--endpoint", endpoint])
        #expect(noKey.status != 0 && noKey.stderr.contains("needs --trusted-key KEY.pem"), "\(noKey.stderr)")
    }
}

enum SigningVenv {
    static let python = PythonVenv.packageRoot.appendingPathComponent(".venv-signing/bin/python")
    static let isInstalled = FileManager.default.isExecutableFile(atPath: python.path)

    /// Writes the signed repositories and keys into `folder` (`signing_peer.py prepare`): the keys' paths by name.
    static func prepare(in folder: TemporaryDirectory) async throws -> [String: String] {
        let prepared = try await run(["prepare", folder.url.path])
        try #require(prepared.status == 0, "\(prepared.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(prepared.stdout.utf8)) as? [String: String])
    }

    /// Runs the signing peer with `arguments`.
    static func run(_ arguments: [String]) async throws -> CLIRunner.Output {
        try await run(script: "signing_peer.py", arguments)
    }
}

extension FileManager {
    func fileSize(_ url: URL) -> Int64? {
        (try? attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
    }
}
