import Foundation
import HTTPTypes
import Hummingbird
import ModelDepot
import Testing

@testable import ModelDepotHTTP
@testable import ModelDepotServer

/// The shortcuts a small answer takes (issue 63) give exactly what the long way gives, for every input of a small
/// alphabet that covers each case they decide on.
@Suite struct SmallAnswerShortcutTests {
    /// Every string up to `length` characters over `alphabet`.
    static func strings(over alphabet: [String], upTo length: Int) -> [String] {
        var all = [""]
        var last = [""]
        for _ in 0..<length {
            last = last.flatMap { prefix in alphabet.map { prefix + $0 } }
            all += last
        }
        return all
    }

    @Test func theResolveScanFindsWhatContainsFinds() {
        for suffix in Self.strings(over: ["/", "r", "resolve", "e", "x"], upTo: 4) {
            for path in ["/acme" + suffix, suffix, "/resolve" + suffix] {
                #expect(MirrorAccessLog.containsResolveSegment(path) == path.contains("/resolve/"), "\(path)")
            }
        }
        #expect(MirrorAccessLog.routeClass("/acme/tiny/resolve/main/config.json") == .file)
        #expect(MirrorAccessLog.routeClass("/resolve/") == .file)
        #expect(MirrorAccessLog.routeClass("/acme/tiny/resolv/main") == .other)
    }

    @Test func aPlainCatchAllIsTheSplitAndJoinedOne() {
        for raw in Self.strings(over: ["a", "/", "%2F", "%", "é"], upTo: 5) where !raw.isEmpty {
            var parameters = Parameters()
            parameters.setCatchAll(Substring(raw))
            let longWay = parameters.getCatchAll().map { Parameters.decode(String($0)) }.joined(separator: "/")
            #expect(parameters.decodedCatchAll() == longWay, "\(raw)")
        }
    }

    @Test func theFileNameIsTheLastComponent() {
        #expect(FileResponseHeads.fileName("config.json") == "config.json")
        #expect(FileResponseHeads.fileName("sub/dir/model.safetensors") == "model.safetensors")
        #expect(FileResponseHeads.fileName("") == "file")
    }

    /// The remembered heads are keyed by all they are made of: another commit, a changed file or another name is
    /// another head, never the one built first.
    @Test func rememberedHeadsFollowTheFileAndCommit() throws {
        let heads = FileResponseHeads()
        let commit = String(repeating: "a", count: 40)
        let file = ServedFile(
            path: try RepoFilePath("sub/config.json"), diskPath: "/nowhere/config.json", size: 2,
            modified: Date(timeIntervalSince1970: 1_000_000_000), gitOID: String(repeating: "1", count: 40),
            sha256: nil)
        let first = heads.fields(for: file, commit: commit, lastModified: file.modified)
        #expect(first[.eTag] == "\"\(file.gitOID)\"")
        #expect(first[.contentDisposition] == "inline; filename=\"config.json\"")
        #expect(first[FileResponseHeads.repoCommit] == commit)
        #expect(heads.fields(for: file, commit: commit, lastModified: file.modified) == first)

        let otherCommit = String(repeating: "b", count: 40)
        #expect(
            heads.fields(for: file, commit: otherCommit, lastModified: file.modified)[FileResponseHeads.repoCommit]
                == otherCommit)
        let later = Date(timeIntervalSince1970: 1_000_000_060)
        #expect(heads.fields(for: file, commit: commit, lastModified: later)[.lastModified] == HTTPDate.string(later))
        let changed = ServedFile(
            path: file.path, diskPath: file.diskPath, size: 3, modified: file.modified,
            gitOID: String(repeating: "2", count: 40), sha256: nil)
        #expect(
            heads.fields(for: changed, commit: commit, lastModified: file.modified)[.eTag]
                == "\"\(changed.gitOID)\"")
        let renamed = ServedFile(
            path: try RepoFilePath("other.json"), diskPath: file.diskPath, size: 2, modified: file.modified,
            gitOID: file.gitOID, sha256: nil)
        #expect(
            heads.fields(for: renamed, commit: commit, lastModified: file.modified)[.contentDisposition]
                == "inline; filename=\"other.json\"")
    }
}
