import Foundation
import ModelDepot
import ModelDepotCore
import Testing

@Suite struct RepoIDTests {
    @Test(arguments: [
        "gpt2", "Qwen/Qwen2.5-0.5B-Instruct-GGUF", "a/b", "org_1/model.v2", String(repeating: "a", count: 96),
    ])
    func acceptsHubIDs(_ text: String) throws {
        #expect(try RepoID(text).description == text)
    }

    @Test(arguments: [
        "", "a/b/c", "/a", "a/", "-a", "a.", "a--b", "a..b", "x.git", "a b", "a/b\u{0}", "../etc", "ü/x",
        String(repeating: "a", count: 97),
    ])
    func refusesEverythingElse(_ text: String) {
        #expect(throws: ModelDepotError.self) { try RepoID(text) }
    }

    /// Every string of up to five characters from an alphabet that meets each rule: accepted exactly when the
    /// rules, checked one by one here, allow it, and split at its `/`.
    @Test func acceptsExactlyWhatTheRulesAllow() {
        let alphabet: [Character] = ["a", "-", ".", "/", "g", "i", "t"]
        var strings = [""]
        var frontier = [""]
        for _ in 1...5 {
            frontier = frontier.flatMap { prefix in alphabet.map { prefix + String($0) } }
            strings += frontier
        }
        for text in strings {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            let allowed =
                !text.isEmpty && parts.count <= 2
                && parts.allSatisfy { part in
                    guard let first = part.first, let last = part.last else { return false }
                    return !".-".contains(first) && !".-".contains(last)
                }
                && !text.contains("--") && !text.contains("..") && !text.hasSuffix(".git")
            let parsed = try? RepoID(text)
            #expect((parsed != nil) == allowed, "'\(text)'")
            if let parsed {
                #expect(parsed.description == text)
                #expect(parsed.namespace == (parts.count == 2 ? String(parts[0]) : nil), "'\(text)'")
                #expect(parsed.name == String(parts[parts.count - 1]), "'\(text)'")
            }
        }
    }

    @Test func cacheFolderNamesRoundTrip() throws {
        let qwen = try RepoID("Qwen/Qwen2.5-0.5B")
        #expect(qwen.cacheFolderName(type: .model) == "models--Qwen--Qwen2.5-0.5B")
        #expect(try RepoID("gpt2").cacheFolderName(type: .model) == "models--gpt2")
        #expect(try RepoID("org/ds").cacheFolderName(type: .dataset) == "datasets--org--ds")
        let parsed = try #require(RepoID.fromCacheFolderName("datasets--org--ds"))
        let dataset = try RepoID("org/ds")
        #expect(parsed.0 == .dataset && parsed.1 == dataset)
        #expect(RepoID.fromCacheFolderName("models--Qwen--Qwen2.5-0.5B")?.1 == qwen)
        #expect(RepoID.fromCacheFolderName("widgets--x") == nil)
        #expect(RepoID.fromCacheFolderName(".locks") == nil)
        #expect(RepoType.dataset.urlPrefix == "datasets/" && RepoType.model.urlPrefix.isEmpty)
    }
}

@Suite struct RepoFilePathTests {
    @Test(arguments: [
        "config.json", "tokenizer/tokenizer.json", "a b/c#d.txt", "weights/model-00001-of-00002.safetensors",
    ])
    func acceptsRepoPaths(_ path: String) throws {
        #expect(try RepoFilePath(path).value == path)
    }

    @Test(arguments: [
        "", "../x", "a/../../x", "/etc/passwd", "a//b", "./a", "a/.", "C:/x", "C:", "a\\b", "a\nb", "a\u{0}b",
        "a/\u{7F}",
    ])
    func refusesHostilePaths(_ path: String) {
        #expect(throws: ModelDepotError.self) { try RepoFilePath(path) }
    }

    @Test func hiddenComponentsAreRecognised() throws {
        let git = try RepoFilePath(".git/config")
        let cache = try RepoFilePath("a/.cache/b")
        let plain = try RepoFilePath("a/b.c")
        #expect(git.isHidden && cache.isHidden && !plain.isHidden)
    }
}

@Suite struct HubEncodingTests {
    @Test func revisionsAndPathsAreEncodedAsTheHubDoes() {
        #expect(HubEncoding.encodeSegment("refs/pr/1") == "refs%2Fpr%2F1")
        #expect(HubEncoding.encodeSegment("main") == "main")
        #expect(HubEncoding.encodePath("a b/c#d") == "a%20b/c%23d")
        #expect(HubEncoding.encodeSegment("a/b") == "a%2Fb")
    }

    @Test func etagsAreNormalised() {
        #expect(HubEncoding.normalizeETag("\"abc\"") == "abc")
        #expect(HubEncoding.normalizeETag("W/\"abc\"") == "abc")
        #expect(HubEncoding.normalizeETag("abc") == "abc")
        #expect(HubEncoding.isSHA256(String(repeating: "a", count: 64)))
        #expect(!HubEncoding.isSHA256(String(repeating: "a", count: 40)))
        #expect(!HubEncoding.isSHA256(String(repeating: "A", count: 64)))
    }

    @Test func gitBlobIDsMatchGit() {
        // `printf 'hello\n' | git hash-object --stdin`
        #expect(GitBlob.id(of: Array("hello\n".utf8)) == "ce013625030ba8dba906f756967f9e9ca394464a")
        #expect(GitBlob.id(of: [UInt8]()) == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")
        #expect(
            GitBlob.lfsPointer(sha256: "ab", size: 3)
                == "version https://git-lfs.github.com/spec/v1\noid sha256:ab\nsize 3\n")
    }
}

/// What a log line may say of a URL in an error message: never a password, never a signed URL's query.
@Suite struct URLRedactionTests {
    @Test func messagesLoseEveryPasswordAndQueryAndKeepTheRest() {
        let message =
            "The answer from https://cas.example/xorbs/default/abc?X-Amz-Signature=deadbeef&X-Amz-Expires=60 was cut off; mirror http://ci:S3cret@mirror.lan:8080/acme (\"https://h.example/f?token=t\") said 503."
        let shown = URLRedaction.redacted(in: message)
        for secret in ["deadbeef", "X-Amz", "S3cret", "token=t"] {
            #expect(!shown.contains(secret), "\(shown)")
        }
        #expect(shown.contains("https://cas.example/xorbs/default/abc?…"), "\(shown)")
        #expect(shown.contains("http://ci:***@mirror.lan:8080/acme"), "\(shown)")
        #expect(shown.hasPrefix("The answer from ") && shown.hasSuffix(") said 503."), "\(shown)")
        #expect(URLRedaction.redacted(in: "no link here: a://") == "no link here: a://")
    }
}
