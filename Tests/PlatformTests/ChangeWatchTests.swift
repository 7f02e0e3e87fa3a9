import Foundation
import ModelDepotPlatform
import Testing

/// The kernel's change notices on this machine (Linux `inotify`), attacked as a server relying on them would be:
/// every way of changing a watched file or folder must read as a change at once (the system call has returned),
/// reading must not, and whatever the watch cannot vouch for reads as changed.
@Suite struct ChangeWatchTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("modeldepot-watch-\(UUID())")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("sub/d"), withIntermediateDirectories: true)
        try Data("one".utf8).write(to: folder.appendingPathComponent("sub/one.txt"))
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// A watch of the folder, `sub` and `sub/one.txt`, and a moment taken after it was set.
    func makeWatch() throws -> (ChangeWatch, ChangeWatch.Watched, UInt64) {
        let changes = try #require(ChangeWatch())
        let watched = try #require(changes.watch([folder.path, path("sub"), path("sub/one.txt")], under: folder.path))
        return (changes, watched, changes.moment())
    }

    #if os(Linux)
        @Test func everyKindOfChangeReadsAsOneAtOnceAndReadingDoesNot() throws {
            defer { remove() }
            let changes: [(String, () throws -> Void)] = [
                (
                    "content rewritten in place",
                    {
                        let handle = try FileHandle(forWritingTo: folder.appendingPathComponent("sub/one.txt"))
                        try handle.write(contentsOf: Data("ONE".utf8))  // a notice of its own, and another at the close
                        try handle.close()
                    }
                ),
                (
                    "times set back",
                    {
                        try FileManager.default.setAttributes(
                            [.modificationDate: Date(timeIntervalSince1970: 1)], ofItemAtPath: path("sub/one.txt"))
                    }
                ),
                (
                    "permissions",
                    {
                        try FileManager.default.setAttributes(
                            [.posixPermissions: 0o600], ofItemAtPath: path("sub/one.txt"))
                    }
                ),
                ("a file added", { try Data().write(to: folder.appendingPathComponent("sub/new.txt")) }),
                (
                    "a file renamed over",
                    {
                        try Data("x".utf8).write(to: folder.appendingPathComponent("x.tmp"))
                        _ = rename(path("x.tmp"), path("sub/one.txt"))
                    }
                ),
                (
                    "a link put in a folder",
                    {
                        try FileManager.default.createSymbolicLink(
                            atPath: path("sub/link"), withDestinationPath: "/etc")
                    }
                ),
                ("a folder removed", { try FileManager.default.removeItem(atPath: path("sub/d")) }),
                (
                    "the folder itself renamed",
                    {
                        _ = rename(path("sub"), path("sub2"))
                        _ = rename(path("sub2"), path("sub"))
                    }
                ),
            ]
            for (name, change) in changes {
                let (watch, watched, moment) = try makeWatch()
                #expect(watch.isUnchanged(watched, since: moment), "\(name): before")
                _ = try Data(contentsOf: folder.appendingPathComponent("sub/one.txt"))  // reading is no change
                #expect(watch.isUnchanged(watched, since: moment), "\(name): after reading")
                try change()
                #expect(!watch.isUnchanged(watched, since: moment), "\(name)")
                #expect(watch.isUnchanged(watched, since: watch.moment()), "\(name): a later moment")
            }
        }

        /// A hard link changes the file's content from a folder nobody watches: the watch of the file itself sees it.
        @Test func aWriteThroughAHardLinkElsewhereReadsAsAChange() throws {
            defer { remove() }
            let elsewhere = FileManager.default.temporaryDirectory.appendingPathComponent("modeldepot-hard-\(UUID())")
            defer { try? FileManager.default.removeItem(at: elsewhere) }
            #expect(link(path("sub/one.txt"), elsewhere.path) == 0)
            let (changes, watched, moment) = try makeWatch()
            let handle = try FileHandle(forWritingTo: elsewhere)
            try handle.write(contentsOf: Data("TWO".utf8))
            try handle.close()
            #expect(!changes.isUnchanged(watched, since: moment))
        }

        @Test func whatTheWatchCannotVouchForReadsAsChanged() throws {
            defer { remove() }
            let (changes, watched, moment) = try makeWatch()
            #expect(changes.isUnchanged(watched, since: moment))
            // A moment of 0: nothing was ever checked.
            #expect(!changes.isUnchanged(watched, since: 0))
            // A path that is gone, or on another file system (a mount inside the tree), is not watched.
            #expect(changes.watch([path("missing")], under: folder.path) == nil)
            #expect(changes.watch(["/proc/self"], under: folder.path) == nil)
            // A queue that overflowed: every watch reads as changed, not only the ones whose notices were lost.
            let other = try #require(ChangeWatch())
            let quiet = try #require(other.watch([path("sub/one.txt")], under: folder.path))
            let busy = try #require(other.watch([folder.path], under: folder.path))
            let overflowMoment = other.moment()
            let limit =
                (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))
                .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 16_384
            // Each file is two notices (created, closed after writing), none alike: more than the queue holds.
            for index in 0...limit { close(open(path("f\(index)"), O_CREAT | O_WRONLY, 0o644)) }
            #expect(!other.isUnchanged(busy, since: overflowMoment))
            #expect(!other.isUnchanged(quiet, since: overflowMoment), "an overflow vouches for nothing")
            #expect(other.isUnchanged(quiet, since: other.moment()))
        }

        @Test func aTreeOnAFileSystemThatChangesBehindTheKernelsBackIsNotWatched() throws {
            defer { remove() }
            #expect(ChangeWatch.seesEveryChange(under: folder.path))
            // procfs stands in for a network or FUSE file system: not on the list of local ones.
            #expect(!ChangeWatch.seesEveryChange(under: "/proc"))
            #expect(!ChangeWatch.seesEveryChange(under: "/no/such/folder"))
            #expect(try #require(ChangeWatch.shared).watch(["/proc/self/status"], under: "/proc") == nil)
        }
    #else
        @Test func otherPlatformsHaveNoWatch() {
            #expect(ChangeWatch() == nil)
            #expect(ChangeWatch.shared == nil)
            remove()
        }
    #endif
}
