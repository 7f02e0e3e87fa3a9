import Foundation
import ModelDepotTesting
import ModelDepotTransfer
import Testing

@testable import ModelDepot
@testable import ModelDepotTrust

/// How a model-signing statement's resources become signed files: whole files, or pieces of `shard_size` bytes
/// that must tile each file; and how a model's files are compared with them.
@Suite struct SignedFilesTests {
    static func digest(_ text: String) -> String { SampleData.sha256(Array(text.utf8)) }

    /// A statement over `resources` (name, digest) with a root digest that matches them.
    static func statement(
        method: String = "shards", shardSize: Any? = 4.0, algorithm: String = "sha256-sharded-4",
        _ resources: [(String, String)]
    ) throws -> Data {
        let root = SampleData.sha256(resources.flatMap { Array(Data(hexString: $0.1)!) })
        var serialization: [String: Any] = ["method": method, "hash_type": "sha256", "allow_symlinks": false]
        serialization["shard_size"] = shardSize
        let object: [String: Any] = [
            "_type": "https://in-toto.io/Statement/v1", "predicateType": "https://model_signing/signature/v1.0",
            "subject": [["name": "model", "digest": ["sha256": root]]],
            "predicate": [
                "serialization": serialization,
                "resources": resources.map { ["name": $0.0, "algorithm": algorithm, "digest": $0.1] },
            ],
        ]
        return try JSONSerialization.data(withJSONObject: object)
    }

    static func refusal(_ statement: Data) -> String {
        do {
            _ = try SignedFiles(statement: statement)
            return "accepted"
        } catch {
            return (error as? ModelDepotError)?.message ?? "\(error)"
        }
    }

    @Test func piecesTileEachFileAndPathsMayHoldColons() throws {
        let (a, b, c) = (Self.digest("a"), Self.digest("b"), Self.digest("c"))
        let signed = try SignedFiles(
            statement: Self.statement([("w:1.bin:4:8", b), ("w:1.bin:0:4", a), ("w:1.bin:8:10", c), ("x.txt:0:3", a)]))
        #expect(signed.shardSize == 4)
        #expect(signed.files == ["w:1.bin": [a, b, c], "x.txt": [a]])
    }

    @Test func badPiecesAreRefusedByName() throws {
        let (a, b) = (Self.digest("a"), Self.digest("b"))
        let cases: [(Data, String)] = [
            (try Self.statement([("w:0:4", a), ("w:8:10", b)]), "do not tile it in 4-byte shards"),
            (try Self.statement([("w:0:4", a), ("w:4:10", b)]), "do not tile it in 4-byte shards"),
            (try Self.statement([("w:2:4", a)]), "do not tile it in 4-byte shards"),
            (try Self.statement([("w:0:4", a), ("w:0:4", b)]), "lists w:0:4 twice"),
            (try Self.statement([("w.bin", a)]), "does not name a piece as path:start:end"),
            (try Self.statement([("w:4:4", a)]), "does not name a piece as path:start:end"),
            (try Self.statement(algorithm: "sha256", [("w:0:4", a)]), "not sha256-sharded-4"),
            (try Self.statement(shardSize: 4.5, [("w:0:4", a)]), "without a usable shard size"),
            (try Self.statement(shardSize: nil, [("w:0:4", a)]), "without a usable shard size"),
            (try Self.statement([("../w:0:4", a)]), "leaves the model folder"),
            (try Self.statement(method: "merkle", [("w:0:4", a)]), "hashes by merkle"),
        ]
        for (statement, message) in cases {
            let refusal = Self.refusal(statement)
            #expect(refusal.contains(message), "\(message): \(refusal)")
        }
    }

    @Test func filesAreComparedWholeOrByShard() throws {
        let (a, b, c) = (Self.digest("a"), Self.digest("b"), Self.digest("c"))
        let sharded = try SignedFiles(statement: Self.statement([("w:0:4", a), ("w:4:8", b)]))
        #expect(sharded.problems(comparedWith: ["w": [a, b], "empty.txt": []]).isEmpty)
        #expect(
            sharded.problems(comparedWith: ["w": [a, c]]) == ["w differs from what was signed (its shard from byte 4)"])
        #expect(sharded.problems(comparedWith: ["w": [a]]) == ["w differs from what was signed"])
        #expect(sharded.problems(comparedWith: [:]) == ["w is signed but not in the model"])
        let whole = try SignedFiles(
            statement: Self.statement(method: "files", shardSize: nil, algorithm: "sha256", [("w", a)]))
        #expect(whole.shardSize == nil && whole.files == ["w": [a]])
        #expect(
            whole.problems(comparedWith: ["w": [a], "empty.txt": []]) == ["empty.txt is not covered by the signature"])

        // Which digests a file is compared by: whole below one shard, by piece above, none when empty and sharded.
        var piecesAsked = 0
        func digests(_ signed: SignedFiles, size: Int64) -> [String] {
            signed.digests(
                size: size, sha256: { "whole" },
                pieces: {
                    piecesAsked += 1; return ["p1", "p2"]
                })
        }
        #expect(digests(sharded, size: 0) == [] && digests(sharded, size: 4) == ["whole"])
        #expect(digests(sharded, size: 5) == ["p1", "p2"] && piecesAsked == 1)
        #expect(digests(whole, size: 0) == ["whole"] && digests(whole, size: 1 << 40) == ["whole"])
    }

    @Test func piecesOfAFileAreHashedInOnePass() throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-pieces")
        defer { folder.remove() }
        let bytes = Array("0123456789".utf8)
        let file = folder.path("w.bin")
        try Data(bytes).write(to: file)
        #expect(
            try FileDigests.sha256(ofPiecesOfFileAt: file.path, pieceSize: 4)
                == [bytes[0..<4], bytes[4..<8], bytes[8..<10]].map { SampleData.sha256(Array($0)) })
        #expect(try FileDigests.sha256(ofPiecesOfFileAt: file.path, pieceSize: 10) == [SampleData.sha256(bytes)])
        let empty = folder.path("empty")
        try Data().write(to: empty)
        #expect(try FileDigests.sha256(ofPiecesOfFileAt: empty.path, pieceSize: 4) == [])
    }

    /// Skipped files are exactly model-signing 1.1.1's git paths, not every top-level name starting with `.git`:
    /// an unsigned `.gitmodules` or `.git_loader.py` put beside signed weights is a file the signature does not
    /// cover, and the check must say so.
    @Test func onlyModelSigningsOwnGitPathsAreSkipped() throws {
        let signed = try SignedFiles(
            statement: Self.statement(method: "files", shardSize: nil, algorithm: "sha256", [("a", Self.digest("a"))]))
        for skipped in [".git", ".git/config", ".gitattributes", ".github/workflows/ci.yml", ".gitignore", "model.sig"]
        {
            #expect(signed.ignores(skipped, signaturePath: "model.sig"), "\(skipped)")
        }
        for covered in [".gitmodules", ".git_loader.py", ".gitconfig", ".github.py", ".gitignore2", "sub/.git/config"] {
            #expect(!signed.ignores(covered, signaturePath: "model.sig"), "\(covered) went unchecked")
        }
    }

}
