import Foundation
import Logging
import ModelDepot
import ModelDepotPlatform
import ModelDepotTesting
import Synchronization
import Testing

@testable import ModelDepotServer

/// A remembered walk of a repository folder answers while nothing it read has changed, and never after: each kind
/// of change (a file added, removed or rewritten, a folder added, a link re-pointed here or further up its way)
/// shows in the very next answer.
@Suite struct FolderWalkTests {
    static let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    /// A wall clock an hour ahead: every walk is settled, so only the validators decide whether one is reused.
    static let anHourLater: @Sendable () -> Int64 = { FolderRepositorySource.now() + 3_600 * 1_000_000_000 }

    static func write(_ text: String, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    /// Path → content etag of what the source serves for `acme/tiny` now.
    static func served(_ source: FolderRepositorySource, _ repo: String = "acme/tiny") async throws -> [String: String]
    {
        let snapshot = try #require(try await source.snapshot(type: .model, id: RepoID(repo), revision: nil))
        return Dictionary(uniqueKeysWithValues: snapshot.files.map { ($0.path.value, $0.etag) })
    }

    static func gitBlob(_ text: String) -> String { GitBlob.id(of: Array(text.utf8)) }

    /// A monotonic clock that moves only when told: a watched walk's trust (``FolderWalk/watchTrust``) never runs
    /// out in the middle of a test on a slow machine, and runs out exactly when a test says.
    final class StepClock: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        var now: @Sendable () -> ContinuousClock.Instant { { self.instant.withLock { $0 } } }
        func advance(by duration: Duration) { instant.withLock { $0 += duration } }
    }

    /// Whether this machine's temporary folder is on a file system the kernel's watch trusts.
    static let watchable = ChangeWatch.seesEveryChange(under: FileManager.default.temporaryDirectory.path)

    /// A test that counts `stat` checks holds one of these: a mount anywhere (another test makes one) or a lost
    /// notice starts a new epoch of the process's watch, after which every walk is checked once more, and the
    /// counts may be higher than a quiet machine gives.
    struct Epoch {
        let start = ChangeWatch.shared?.epoch
        var moved: Bool { ChangeWatch.shared?.epoch != start }
    }

    /// Waits until the file system's clock has moved on from the last change in `root`, so the next change leaves
    /// times of its own. Tests with a settled clock need it: a real walk this close to a change is never reused
    /// (``aWalkOfRecentChangesIsNotReused()``), but their clock says every walk is settled.
    static func letTheFileSystemClockTick(_ root: TemporaryDirectory) async throws {
        let probe = root.path(".tick").path
        #expect(FileManager.default.createFile(atPath: probe, contents: Data()))
        let start = try #require(FileStatus(path: probe)?.changedNanoseconds)
        let ticked = await waitUntil {
            FileManager.default.createFile(atPath: probe, contents: Data())
                && (FileStatus(path: probe)?.changedNanoseconds ?? start) > start
        }
        try #require(ticked, "the file system's clock never moved")
    }

    @Test func anUnchangedRepositoryIsAnsweredWithoutWalkingAgain() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try Self.write("{}", to: root.path("acme/tiny/config.json"))
        try Self.write("one", to: root.path("acme/tiny/sub/one.txt"))
        let source = FolderRepositorySource(
            root: root.url, index: HashIndex(storePath: nil), logger: Self.logger, wallClock: Self.anHourLater)
        let first = try await Self.served(source)
        for _ in 0..<5 { #expect(try await Self.served(source) == first) }
        #expect(first == ["config.json": Self.gitBlob("{}"), "sub/one.txt": Self.gitBlob("one")])
        #expect(source.walks == 1)
    }

    /// Where the kernel's watch works, it vouches for a remembered walk: no `stat` check while nothing changes, one
    /// after a change anywhere it watches (here a new organization beside the repository's, which leaves the answer
    /// as it was), one when the watch's trust runs out, and every answer is checked by `stat` for a walk that met a
    /// link (the watch does not follow them).
    @Test func aWatchedWalkIsCheckedByStatOnlyAfterANoticeOrOnceItsTrustRunsOut() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try Self.write("{}", to: root.path("acme/tiny/config.json"))
        try Self.write("one", to: root.path("acme/tiny/sub/one.txt"))
        let clock = StepClock()
        let source = FolderRepositorySource(
            root: root.url, index: HashIndex(storePath: nil), logger: Self.logger, wallClock: Self.anHourLater,
            now: clock.now)
        let epoch = Epoch()
        let first = try await Self.served(source)
        for _ in 0..<5 { #expect(try await Self.served(source) == first) }
        #expect(source.walks == 1)
        if Self.watchable {
            #expect(source.statChecks == 0 || epoch.moved)
            try FileManager.default.createDirectory(at: root.path("other"), withIntermediateDirectories: true)
            for _ in 0..<3 { #expect(try await Self.served(source) == first) }
            #expect(source.walks == 1)
            #expect(source.statChecks == 1 || epoch.moved, "checked once after the notice, then vouched for again")
            clock.advance(by: FolderWalk.watchTrust)
            for _ in 0..<3 { #expect(try await Self.served(source) == first) }
            #expect(source.statChecks == 2 || epoch.moved, "checked once when the trust ran out")
            try Self.write("new", to: root.path("acme/tiny/sub/new.txt"))
            #expect(try await Self.served(source)["sub/new.txt"] == Self.gitBlob("new"))
            #expect(try await Self.served(source)["sub/new.txt"] == Self.gitBlob("new"))
            #expect(source.walks == 2)
            #expect(source.statChecks == 3 || epoch.moved)
        } else {
            #expect(source.statChecks == 5)
        }

        // A link the walk skips (it leads outside the root) is checked by `stat` too.
        try FileManager.default.createSymbolicLink(
            atPath: root.path("acme/tiny/outside").path, withDestinationPath: "/etc/hostname")
        try await Self.letTheFileSystemClockTick(root)
        #expect(try await Self.served(source)["outside"] == nil)
        var checks = source.statChecks
        for _ in 0..<3 { #expect(try await Self.served(source)["outside"] == nil) }
        #expect(source.statChecks == checks + 3)

        try Self.write("shared", to: root.path("acme/data/shared.txt"))
        try FileManager.default.createSymbolicLink(
            atPath: root.path("acme/tiny/linked.txt").path, withDestinationPath: "../data/shared.txt")
        try await Self.letTheFileSystemClockTick(root)
        #expect(try await Self.served(source)["linked.txt"] == Self.gitBlob("shared"))
        checks = source.statChecks
        for _ in 0..<3 { #expect(try await Self.served(source)["linked.txt"] == Self.gitBlob("shared")) }
        #expect(source.statChecks == checks + 3)
    }

    /// Stores into a shared mapping of a file send the kernel's watch no notice; they change the file's times, and
    /// the `stat` check the watch's trust runs out into sees them.
    @Test func aStoreThroughASharedMappingShowsOnceTheWatchsTrustRunsOut() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let file = root.path("acme/tiny/weights.txt")
        try Self.write("aaaa", to: file)
        let clock = StepClock()
        let source = FolderRepositorySource(
            root: root.url, index: HashIndex(storePath: nil), logger: Self.logger, wallClock: Self.anHourLater,
            now: clock.now)
        // Ticked first: the tick's file lands in the watched root, and its notice would bring a `stat` check.
        try await Self.letTheFileSystemClockTick(root)
        #expect(try await Self.served(source) == ["weights.txt": Self.gitBlob("aaaa")])
        let descriptor = open(file.path, O_RDWR)
        try #require(descriptor >= 0)
        let mapping = mmap(nil, 4, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0)
        close(descriptor)
        try #require(mapping != MAP_FAILED)
        defer { munmap(mapping, 4) }
        mapping!.storeBytes(of: UInt8(ascii: "b"), toByteOffset: 0, as: UInt8.self)
        clock.advance(by: FolderWalk.watchTrust)
        #expect(try await Self.served(source) == ["weights.txt": Self.gitBlob("baaa")])
    }

    /// A request at a commit id is answered from memory only while nothing the commit is made of changed: after a
    /// same-size edit in place, the old commit is gone.
    @Test func theOldCommitIsGoneAfterASameSizeEditInPlace() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try Self.write("aaaa", to: root.path("acme/tiny/weights.txt"))
        let source = FolderRepositorySource(
            root: root.url, index: HashIndex(storePath: nil), logger: Self.logger, wallClock: Self.anHourLater,
            now: StepClock().now)
        let id = try RepoID("acme/tiny")
        // Ticked first: the tick's notice would bring a `stat` check, which would hide a watch that missed the edit.
        try await Self.letTheFileSystemClockTick(root)
        let old = try #require(try await source.snapshot(type: .model, id: id, revision: nil)).commit
        #expect(
            try await source.snapshot(type: .model, id: id, revision: old, serving: "weights.txt")?.commit == old)
        let handle = try FileHandle(forWritingTo: root.path("acme/tiny/weights.txt"))
        try handle.write(contentsOf: Data("bbbb".utf8))
        try handle.close()
        await #expect(throws: HubServerError.self) {
            _ = try await source.snapshot(type: .model, id: id, revision: old, serving: "weights.txt")
        }
    }

    /// A watch that can never vouch again (here: a new epoch, as after the process's queue of notices overflowed
    /// when a file system was unmounted under thousands of watches, or a mount) brings one `stat` check; when it
    /// passes, the walk is watched anew instead of being checked by `stat` from then on. (`ChangeWatchTests` makes
    /// a queue overflow; this test starts the epoch of a watch of its own directly, leaving the process's watch,
    /// which the other tests here use, alone.)
    @Test(.enabled(if: watchable)) func aWalkWhoseWatchCanNoLongerVouchIsWatchedAnew() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try Self.write("{}", to: root.path("acme/tiny/config.json"))
        let changes = try #require(ChangeWatch())
        let source = FolderRepositorySource(
            root: root.url, index: HashIndex(storePath: nil), logger: Self.logger, wallClock: Self.anHourLater,
            now: StepClock().now, changes: changes)
        let first = try await Self.served(source)
        let checksBefore = source.statChecks
        changes.startEpoch()
        #expect(try await Self.served(source) == first)
        #expect(source.statChecks > checksBefore, "checked by `stat` once the watch could not vouch")
        let epoch = changes.epoch
        let checks = source.statChecks
        for _ in 0..<3 { #expect(try await Self.served(source) == first) }
        #expect(source.statChecks == checks || changes.epoch != epoch, "watched anew: no `stat` check since")
        #expect(source.walks == 1)
    }

    @Test func aFileAddedRemovedOrChangedAppearsInTheNextAnswer() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let repo = root.path("acme/tiny")
        try Self.write("{}", to: repo.appendingPathComponent("config.json"))
        try Self.write("one", to: repo.appendingPathComponent("sub/one.txt"))
        let source = FolderRepositorySource(
            root: root.url, index: HashIndex(storePath: nil), logger: Self.logger, wallClock: Self.anHourLater)
        var expected = ["config.json": Self.gitBlob("{}"), "sub/one.txt": Self.gitBlob("one")]
        #expect(try await Self.served(source) == expected)

        // change: what to do to the folder; each is seen at once, and the answer after it is remembered again.
        func step(_ change: () throws -> Void, _ comment: Comment) async throws {
            try await Self.letTheFileSystemClockTick(root)
            try change()
            let walks = source.walks
            #expect(try await Self.served(source) == expected, comment)
            #expect(try await Self.served(source) == expected, comment)
            #expect(source.walks == walks + 1, comment)
        }
        expected["new.txt"] = Self.gitBlob("new")
        try await step({ try Self.write("new", to: repo.appendingPathComponent("new.txt")) }, "a file added on top")
        expected["sub/two.txt"] = Self.gitBlob("two")
        try await step({ try Self.write("two", to: repo.appendingPathComponent("sub/two.txt")) }, "one in a folder")
        expected["a/b/deep.txt"] = Self.gitBlob("deep")
        try await step(
            { try Self.write("deep", to: repo.appendingPathComponent("a/b/deep.txt")) }, "a new folder with a file")
        expected["sub/one.txt"] = nil
        try await step(
            { try FileManager.default.removeItem(at: repo.appendingPathComponent("sub/one.txt")) }, "a file removed")
        // Rewritten in place, the same size, its modification time set back as `cp -p` does: only the
        // status-change time tells.
        let config = repo.appendingPathComponent("config.json")
        let modified = try #require(
            try FileManager.default.attributesOfItem(atPath: config.path)[.modificationDate] as? Date)
        expected["config.json"] = Self.gitBlob("[]")
        try await step(
            {
                try Self.write("[]", to: config)
                try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: config.path)
            }, "a file rewritten with its old size and time")
        // Hidden entries change the folder, so it is walked again, but they are never served.
        try await step({ try Self.write("SECRET=1", to: repo.appendingPathComponent(".env")) }, "a hidden file")
    }

    @Test func aLinkRepointedHereOrFurtherUpItsWayIsFollowedAnew() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let data = root.path("acme/data")
        try Self.write("version one", to: data.appendingPathComponent("v1/weights.txt"))
        try Self.write("version two", to: data.appendingPathComponent("v2/weights.txt"))
        try Self.write("a", to: data.appendingPathComponent("a.txt"))
        try Self.write("b", to: data.appendingPathComponent("b.txt"))
        let manager = FileManager.default
        // data/current -> v1, and tiny/weights -> ../data/current: a link through a link of another repository.
        try manager.createSymbolicLink(atPath: data.appendingPathComponent("current").path, withDestinationPath: "v1")
        let tiny = root.path("acme/tiny")
        try manager.createDirectory(at: tiny, withIntermediateDirectories: true)
        try manager.createSymbolicLink(
            atPath: tiny.appendingPathComponent("weights").path, withDestinationPath: "../data/current")
        try manager.createSymbolicLink(
            atPath: tiny.appendingPathComponent("pick.txt").path, withDestinationPath: "../data/a.txt")
        let source = FolderRepositorySource(
            root: root.url, index: HashIndex(storePath: nil), logger: Self.logger, wallClock: Self.anHourLater)
        #expect(
            try await Self.served(source) == [
                "pick.txt": Self.gitBlob("a"), "weights/weights.txt": Self.gitBlob("version one"),
            ])
        #expect(try await Self.served(source).count == 2)
        #expect(source.walks == 1)

        // The link in the repository re-pointed.
        try await Self.letTheFileSystemClockTick(root)
        try manager.removeItem(at: tiny.appendingPathComponent("pick.txt"))
        try manager.createSymbolicLink(
            atPath: tiny.appendingPathComponent("pick.txt").path, withDestinationPath: "../data/b.txt")
        #expect(try await Self.served(source)["pick.txt"] == Self.gitBlob("b"))
        // A link on the way, outside this repository's folders, re-pointed: nothing in tiny changed.
        try await Self.letTheFileSystemClockTick(root)
        try manager.removeItem(at: data.appendingPathComponent("current"))
        try manager.createSymbolicLink(atPath: data.appendingPathComponent("current").path, withDestinationPath: "v2")
        #expect(try await Self.served(source)["weights/weights.txt"] == Self.gitBlob("version two"))
        // Re-pointed to leave the root: no longer served.
        let outside = try TemporaryDirectory()
        defer { outside.remove() }
        try Self.write("secret", to: outside.path("secret.txt"))
        try await Self.letTheFileSystemClockTick(root)
        try manager.removeItem(at: data.appendingPathComponent("b.txt"))
        try manager.createSymbolicLink(
            at: data.appendingPathComponent("b.txt"), withDestinationURL: outside.path("secret.txt"))
        #expect(try await Self.served(source)["pick.txt"] == nil)
        #expect(source.walks == 4)
    }

    /// A remembered walk is reused after two `lstat` calls only while neither the organization nor the repository
    /// folder is a link. Moving either out of the root and leaving a link in its place keeps the folder's inode
    /// and files (so the walk's own validators may still hold); it must not be served.
    @Test func aFolderMovedOutOfTheRootBehindALinkIsNotServed() async throws {
        let manager = FileManager.default
        for moved in ["acme", "acme/tiny"] {
            let root = try TemporaryDirectory()
            defer { root.remove() }
            let outside = try TemporaryDirectory()
            defer { outside.remove() }
            try Self.write("{}", to: root.path("acme/tiny/config.json"))
            let source = FolderRepositorySource(
                root: root.url, index: HashIndex(storePath: nil), logger: Self.logger, wallClock: Self.anHourLater)
            #expect(try await Self.served(source) == ["config.json": Self.gitBlob("{}")])
            #expect(try await Self.served(source) == ["config.json": Self.gitBlob("{}")])
            #expect(source.walks == 1)
            let away = outside.path("away")
            try manager.moveItem(at: root.path(moved), to: away)
            try manager.createSymbolicLink(at: root.path(moved), withDestinationURL: away)
            let snapshot = try await source.snapshot(type: .model, id: RepoID("acme/tiny"), revision: nil)
            #expect(snapshot == nil, "served through a link to \(moved) outside the root")
        }
    }

    /// The same for the served root itself, and for a file asked for at a commit id (answered from the remembered
    /// walk after an `lstat` of the file, which follows links on the way to it): the file keeps its stamp when a
    /// folder above it moves.
    @Test func aRootOrFolderMovedAwayBehindALinkIsNotServedAtACommitEither() async throws {
        let manager = FileManager.default
        for moved in ["", "acme", "acme/tiny"] {
            let top = try TemporaryDirectory()
            defer { top.remove() }
            let served = top.path("served")
            try Self.write("{}", to: served.appendingPathComponent("acme/tiny/config.json"))
            let source = FolderRepositorySource(
                root: served, index: HashIndex(storePath: nil), logger: Self.logger, wallClock: Self.anHourLater)
            let id = try RepoID("acme/tiny")
            let commit = try #require(try await source.snapshot(type: .model, id: id, revision: nil)).commit
            let atCommit = try await source.snapshot(type: .model, id: id, revision: commit, serving: "config.json")
            #expect(atCommit?.commit == commit)
            let from = moved.isEmpty ? served : served.appendingPathComponent(moved)
            let away = top.path("away")
            try manager.moveItem(at: from, to: away)
            try manager.createSymbolicLink(at: from, withDestinationURL: away)
            #expect(
                try await source.snapshot(type: .model, id: id, revision: commit, serving: "config.json") == nil,
                "a file at a commit served after '\(moved)' moved away behind a link")
            #expect(
                try await source.snapshot(type: .model, id: id, revision: nil) == nil,
                "served after '\(moved)' moved away behind a link")
        }
    }

    /// Two changes within one tick of the file system's clock can leave the same times behind; a walk made less
    /// than the settling time after the last change is therefore never reused.
    @Test func aWalkOfRecentChangesIsNotReused() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try Self.write("{}", to: root.path("acme/tiny/config.json"))
        // The wall clock as the files' own times: they changed just now.
        let status = try #require(FileStatus(path: root.path("acme/tiny/config.json").path))
        let source = FolderRepositorySource(
            root: root.url, index: HashIndex(storePath: nil), logger: Self.logger,
            wallClock: { status.changedNanoseconds + 1_000_000 })
        _ = try await Self.served(source)
        _ = try await Self.served(source)
        #expect(source.walks == 2)
        let settled = FolderRepositorySource(
            root: root.url, index: HashIndex(storePath: nil), logger: Self.logger,
            wallClock: { status.changedNanoseconds + FolderWalk.settleTime + 1_000_000_000 })
        _ = try await Self.served(settled)
        _ = try await Self.served(settled)
        #expect(settled.walks == 1)
    }
}
