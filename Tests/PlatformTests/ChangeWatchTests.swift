import Foundation
import ModelDepotPlatform
import Testing

/// The kernel's change notices on this machine (Linux `inotify`), attacked as a server relying on them would be:
/// every way of changing a watched file or folder must read as a change at once (the system call has returned),
/// reading must not, and whatever the watch cannot vouch for reads as changed. One test at a time: a mount, which
/// one of them makes, starts a new epoch for every watch in the process.
@Suite(.serialized) struct ChangeWatchTests {
    let folder: URL
    /// Whether this machine's temporary folder is on a file system the watch trusts (not so on overlayfs, as in
    /// a container's default `/tmp`).
    static let watchable = ChangeWatch.seesEveryChange(under: FileManager.default.temporaryDirectory.path)

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
        return (changes, watched, try #require(changes.moment(for: watched)))
    }

    #if os(Linux)
        @Test(.enabled(if: watchable)) func everyKindOfChangeReadsAsOneAtOnceAndReadingDoesNot() throws {
            defer { remove() }
            // The name, the change, and whether it replaces a watched file (whose watch the kernel then drops).
            let changes: [(String, () throws -> Void, Bool)] = [
                (
                    "content rewritten in place",
                    {
                        let handle = try FileHandle(forWritingTo: folder.appendingPathComponent("sub/one.txt"))
                        try handle.write(contentsOf: Data("ONE".utf8))  // a notice of its own, and another at the close
                        try handle.close()
                    },
                    false
                ),
                (
                    "times set back",
                    {
                        try FileManager.default.setAttributes(
                            [.modificationDate: Date(timeIntervalSince1970: 1)], ofItemAtPath: path("sub/one.txt"))
                    },
                    false
                ),
                (
                    "permissions",
                    {
                        try FileManager.default.setAttributes(
                            [.posixPermissions: 0o600], ofItemAtPath: path("sub/one.txt"))
                    },
                    false
                ),
                ("a file added", { try Data().write(to: folder.appendingPathComponent("sub/new.txt")) }, false),
                (
                    "a file renamed over",
                    {
                        try Data("x".utf8).write(to: folder.appendingPathComponent("x.tmp"))
                        _ = rename(path("x.tmp"), path("sub/one.txt"))
                    },
                    true
                ),
                (
                    "a link put in a folder",
                    {
                        try FileManager.default.createSymbolicLink(
                            atPath: path("sub/link"), withDestinationPath: "/etc")
                    },
                    false
                ),
                ("a folder removed", { try FileManager.default.removeItem(atPath: path("sub/d")) }, false),
                (
                    "the folder itself renamed",
                    {
                        _ = rename(path("sub"), path("sub2"))
                        _ = rename(path("sub2"), path("sub"))
                    },
                    false
                ),
            ]
            for (name, change, replacesAWatchedFile) in changes {
                let (watch, watched, moment) = try makeWatch()
                #expect(watch.isUnchanged(watched, since: moment), "\(name): before")
                _ = try Data(contentsOf: folder.appendingPathComponent("sub/one.txt"))  // reading is no change
                #expect(watch.isUnchanged(watched, since: moment), "\(name): after reading")
                try change()
                #expect(!watch.isUnchanged(watched, since: moment), "\(name)")
                // A later moment vouches again, unless the kernel dropped a watch (the replaced file's): then there
                // is none, and the paths must be watched anew.
                let later = watch.moment(for: watched)
                #expect((later == nil) == replacesAWatchedFile, "\(name)")
                if let later { #expect(watch.isUnchanged(watched, since: later), "\(name)") }
            }
        }

        /// A hard link changes the file's content from a folder nobody watches: the watch of the file itself sees it.
        @Test(.enabled(if: watchable)) func aWriteThroughAHardLinkElsewhereReadsAsAChange() throws {
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

        @Test(.enabled(if: watchable)) func whatTheWatchCannotVouchForReadsAsChanged() throws {
            defer { remove() }
            let (changes, watched, moment) = try makeWatch()
            #expect(changes.isUnchanged(watched, since: moment))
            // A deleted file: its watch is gone, and no later moment vouches for a set that held it.
            try FileManager.default.removeItem(atPath: path("sub/one.txt"))
            #expect(!changes.isUnchanged(watched, since: moment))
            #expect(changes.moment(for: watched) == nil)
            try Data("one".utf8).write(to: folder.appendingPathComponent("sub/one.txt"))
            let again = try #require(
                changes.watch([folder.path, path("sub"), path("sub/one.txt")], under: folder.path))
            let renewed = try #require(changes.moment(for: again), "watched anew, it vouches again")
            #expect(changes.isUnchanged(again, since: renewed))
            // A moment of 0: nothing was ever checked.
            #expect(!changes.isUnchanged(watched, since: 0))
            // A path that is gone, or on another file system (a mount inside the tree), is not watched.
            #expect(changes.watch([path("missing")], under: folder.path) == nil)
            #expect(changes.watch(["/proc/self"], under: folder.path) == nil)
            // A queue that overflowed (notices of dropped watches may be among those lost): every set watched before
            // reads as changed and has no moment; watched anew, it vouches again.
            let other = try #require(ChangeWatch())
            let quiet = try #require(other.watch([path("sub/one.txt")], under: folder.path))
            let busy = try #require(other.watch([folder.path], under: folder.path))
            let overflowMoment = try #require(other.moment(for: quiet))
            let limit =
                (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))
                .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 16_384
            // Each file is two notices (created, closed after writing), none alike: more than the queue holds.
            for index in 0...limit { close(open(path("f\(index)"), O_CREAT | O_WRONLY, 0o644)) }
            #expect(!other.isUnchanged(busy, since: overflowMoment))
            #expect(!other.isUnchanged(quiet, since: overflowMoment), "an overflow vouches for nothing")
            #expect(other.moment(for: quiet) == nil)
            let quietAgain = try #require(other.watch([path("sub/one.txt")], under: folder.path))
            #expect(other.isUnchanged(quietAgain, since: try #require(other.moment(for: quietAgain))))
        }

        /// A folder mounted over, or unmounted, sends no notice of its own: the mount table's change reads as a
        /// change of everything. Needs the right to mount (root here and in CI); skipped without it.
        @Test(.enabled(if: watchable && getuid() == 0)) func aMountOverAWatchedFolderReadsAsAChange() throws {
            defer { remove() }
            let other = FileManager.default.temporaryDirectory.appendingPathComponent("modeldepot-over-\(UUID())")
            try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: other) }
            try Data("OUTSIDE".utf8).write(to: other.appendingPathComponent("one.txt"))
            func run(_ tool: String, _ arguments: [String]) throws -> Bool {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: tool)
                process.arguments = arguments
                try process.run()
                process.waitUntilExit()
                return process.terminationStatus == 0
            }
            let (changes, watched, moment) = try makeWatch()
            guard try run("/bin/mount", ["--bind", other.path, path("sub")]) else { return }
            #expect(!changes.isUnchanged(watched, since: moment), "mounted over")
            #expect(changes.moment(for: watched) == nil, "to be watched anew")
            let remounted = try #require(changes.watch([folder.path, path("sub")], under: folder.path))
            let mounted = try #require(changes.moment(for: remounted))
            #expect(try run("/bin/umount", [path("sub")]))
            #expect(!changes.isUnchanged(remounted, since: mounted), "unmounted")
        }

        @Test func aTreeOnAFileSystemThatChangesBehindTheKernelsBackIsNotWatched() throws {
            defer { remove() }
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
