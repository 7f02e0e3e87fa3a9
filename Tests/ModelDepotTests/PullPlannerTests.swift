import Foundation
import ModelDepotCache
import Testing

@testable import ModelDepot

/// The pure half of a pull, without a socket or a file: selection, what to fetch and in what order, bytes and disk
/// need, the dry run's report, and which file starts next.
@Suite struct PullPlannerTests {
    static let tree = RecordedTree(
        files: Dictionary(
            uniqueKeysWithValues: [
                ("model-00001.safetensors", 5 << 20), ("model-00002.safetensors", 5 << 20), ("config.json", 700),
                ("tokenizer/vocab.txt", 230_000), ("tokenizer/merges.txt", 450_000), ("README.md", 3_000),
                ("onnx/model.onnx", 9 << 20),
            ].map {
                (
                    try! RepoFilePath($0.0),
                    RecordedTree.File(size: Int64($0.1), blobID: String(repeating: "a", count: 40))
                )
            }
        ))
    static let repo = try! RepoID("acme/tiny")

    func paths(_ names: [String]) -> [RepoFilePath] { names.map { try! RepoFilePath($0) } }

    @Test func patternsAndNamedFilesSelect() throws {
        let safetensors = SnapshotRequest(repo: Self.repo, include: ["*.safetensors", "*.json"])
        #expect(
            try PullPlanner.select(safetensors, from: Self.tree)
                == paths(["config.json", "model-00001.safetensors", "model-00002.safetensors"]))
        // A named folder counts all its files; names narrow the patterns.
        let named = SnapshotRequest(repo: Self.repo, exclude: ["*.txt"], files: ["tokenizer/", "config.json"])
        #expect(try PullPlanner.select(named, from: Self.tree) == paths(["config.json"]))
        let folder = SnapshotRequest(repo: Self.repo, files: ["tokenizer"])
        #expect(
            try PullPlanner.select(folder, from: Self.tree) == paths(["tokenizer/merges.txt", "tokenizer/vocab.txt"]))
    }

    @Test func aSelectionOfNothingSaysWhatThereIs() throws {
        let none = SnapshotRequest(repo: Self.repo, include: ["*.gguf"])
        let error = #expect(throws: ModelDepotError.self) { try PullPlanner.select(none, from: Self.tree) }
        #expect(error?.code == .invalidArgument && error?.remedy == .changePatterns)
        #expect(error?.message.contains("config.json") == true)
        let absent = SnapshotRequest(repo: Self.repo, files: ["config.json", "weights.bin", "nothing/"])
        let missing = #expect(throws: ModelDepotError.self) { try PullPlanner.select(absent, from: Self.tree) }
        #expect(missing?.code == .entryNotFound)
        #expect(missing?.message.contains("'weights.bin', 'nothing/'") == true)
        // An empty repository selects nothing without an error (there is nothing to name).
        #expect(try PullPlanner.select(none, from: RecordedTree(files: [:])).isEmpty)
    }

    @Test func whatIsHeldIsNotFetchedAndTheRestGoesLargestFirst() throws {
        let request = SnapshotRequest(repo: Self.repo)
        let selected = try PullPlanner.select(request, from: Self.tree)
        let held: Set = [try RepoFilePath("model-00001.safetensors"), try RepoFilePath("README.md")]
        let resumable: Set = [try RepoFilePath("onnx/model.onnx")]
        let work = PullPlanner.work(
            for: request, tree: Self.tree, selected: selected, present: held, resumable: resumable)
        // Size descending, ties by path: the same order every time.
        #expect(
            work.toFetch
                == paths([
                    "onnx/model.onnx", "model-00002.safetensors", "tokenizer/merges.txt", "tokenizer/vocab.txt",
                    "config.json",
                ]))
        let total = Int64(19 << 20) + 700 + 230_000 + 450_000 + 3_000
        #expect(work.totalBytes == total)
        #expect(work.heldFiles == 2 && work.heldBytes == Int64(5 << 20) + 3_000)
        #expect(work.fetchBytes == total - work.heldBytes)
        // The interrupted download's file already has its room.
        #expect(work.diskNeeded == work.fetchBytes - Int64(9 << 20))

        // Forced: everything is fetched again, nothing counts as held.
        var forced = request
        forced.forceDownload = true
        let again = PullPlanner.work(for: forced, tree: Self.tree, selected: selected, present: held)
        #expect(again.toFetch.count == selected.count && again.heldFiles == 0 && again.heldBytes == 0)

        // The dry run reports the same decisions.
        let report = again.report(
            repo: Self.repo, commit: String(repeating: "c", count: 40), present: held, freeBytes: 1 << 30)
        #expect(report.files.count == selected.count && report.downloadBytes == total)
        #expect(report.files.first { $0.path == "README.md" }.map { $0.cached && $0.willDownload } == true)
        #expect(report.freeBytesAfter == Int64(1 << 30) - total)
    }

    @Test func theQueueKeepsLargeFilesAndAllFilesUnderTheirLimits() throws {
        let request = SnapshotRequest(repo: Self.repo)
        let work = PullPlanner.work(
            for: request, tree: Self.tree, selected: try PullPlanner.select(request, from: Self.tree), present: [])
        var queue = TransferQueue(
            work.toFetch, sizes: work.size, smallFileSize: 1 << 20, largeAtOnce: 2, filesAtOnce: 4)
        // Two large files at once: the third waits although the overall limit allows more.
        #expect(queue.next()?.path == (try RepoFilePath("onnx/model.onnx")))
        #expect(queue.next()?.path == (try RepoFilePath("model-00001.safetensors")))
        #expect(queue.next() == nil)
        #expect(queue.running == 2 && queue.runningLarge == 2)
        // One large file finishes: the next large one starts; with the large files all started, the small ones
        // fill the overall limit around them.
        queue.finished(large: true)
        let started = queue.next()
        let third = try #require(started)
        #expect(third.path == (try RepoFilePath("model-00002.safetensors")) && third.large)
        #expect(queue.next()?.path == (try RepoFilePath("tokenizer/merges.txt")))
        #expect(queue.next()?.path == (try RepoFilePath("tokenizer/vocab.txt")))
        #expect(queue.next() == nil, "four files at once")
        #expect(queue.running == 4 && queue.runningLarge == 2)
        queue.finished(large: false)
        queue.finished(large: true)
        #expect(queue.next()?.path == (try RepoFilePath("README.md")))
        #expect(queue.next()?.path == (try RepoFilePath("config.json")))
        #expect(queue.isEmpty && queue.next() == nil)
        // Limits below one still let the pull move.
        var one = TransferQueue(work.toFetch, sizes: work.size, smallFileSize: 1 << 20, largeAtOnce: 0, filesAtOnce: 0)
        #expect(one.next() != nil && one.next() == nil)
    }
}
