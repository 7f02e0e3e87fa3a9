import CModelDepotPlatform
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Says whether any of a set of files and folders may have changed since a moment, from the kernel's own notices
/// (Linux `inotify(7)`), so a server that remembers what it read from a folder can trust it after a `read` and a
/// `poll` instead of a `stat` of every file on every request.
///
/// Why a notice is as good as a `stat`: the kernel queues it inside the system call that makes the change
/// (`write`, `rename`, `unlink`, `chmod`, `utimensat`…), before that call returns. A client that changed a file and
/// then asked the server is answered after a check that drains the queue, so the check sees the change. The
/// watch never decides alone that something changed; it only spares the `stat` calls while nothing did:
/// - anything it cannot vouch for reads as changed: a queue that overflowed, a descriptor that failed, a moment
///   before the paths were watched, and any change of the mount table (a folder mounted over or unmounted sends no
///   notice of its own: `/proc/self/mountinfo` is polled for it);
/// - a watch the kernel dropped (the file was deleted, its file system unmounted) never vouches again: the paths
///   must be watched anew;
/// - it watches only a tree on a file system whose every change passes through this kernel's VFS (ext2/3/4, XFS,
///   Btrfs, F2FS, tmpfs, ramfs): a network or FUSE file system changes behind the kernel's back, an overlay's lower
///   layers too, and ZFS rolls a dataset back without a notice;
/// - a path on another file system than the tree's is not watched.
///
/// What it cannot see: stores into a shared `mmap` of a file send no notice until the mapping goes
/// (`IN_CLOSE_WRITE`), though the file's times change at the first store to each page. Callers that answer from
/// what they read bound how long a check is trusted (``FolderWalk``: a second).
///
/// Linux only: on Apple platforms `kqueue`'s vnode events need an open descriptor per watched file, so `init()`
/// returns nil there and callers keep checking with `stat`.
package final class ChangeWatch: Sendable {
    /// The watch descriptors of one set of paths.
    package struct Watched: Sendable {
        let descriptors: [Int32]
    }

    private struct State {
        /// Counts the notices read; a moment is its value when taken.
        var generation: UInt64 = 1
        /// The generation of the last notice of each descriptor that had one.
        var changed: [Int32: UInt64] = [:]
        /// The generation of the last notice of any descriptor.
        var lastChange: UInt64 = 0
        /// Every watch reads as changed since this generation (the queue overflowed, `changed` was reset, or the
        /// mount table changed).
        var everythingChanged: UInt64 = 0
        /// Descriptors whose watch the kernel removed (`IN_IGNORED`) or whose file system went (`IN_UNMOUNT`): the
        /// kernel does not give their numbers out again soon (they count up), and a set holding one never vouches.
        var dropped: Set<Int32> = []
        /// Reading the queue failed: nothing is vouched for any more.
        var broken = false
    }

    /// Past this many descriptors with notices, their table is reset and every watch reads as changed once.
    static let changedLimit = 65_536

    private let descriptor: Int32
    /// `/proc/self/mountinfo`, open: `poll` reports `POLLPRI` when the mount table changes.
    private let mounts: Int32
    private let state = Mutex(State())

    /// The process's watch: one inotify instance for every tree a process serves, since a user has few of them
    /// (`fs.inotify.max_user_instances`, 128 by default); nil where there is none.
    package static let shared = ChangeWatch()

    /// A watch of its own (``shared`` is what servers use); nil when the platform has no `inotify` or no instance
    /// is left.
    package init?() {
        #if os(Linux)
            let mounts = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)
            guard mounts >= 0 else { return nil }
            let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard descriptor >= 0 else {
                close(mounts)
                return nil
            }
            self.descriptor = descriptor
            self.mounts = mounts
        #else
            return nil
        #endif
    }

    deinit {
        close(descriptor)
        close(mounts)
    }

    /// Whether every change under `tree` passes through this kernel: its file system is a local one.
    package static func seesEveryChange(under tree: String) -> Bool {
        #if os(Linux)
            var magic = 0
            return modeldepot_file_system_magic(tree, &magic) == 0
                && localFileSystems.contains(UInt32(truncatingIfNeeded: magic))
        #else
            return false
        #endif
    }

    #if os(Linux)
        /// `<linux/magic.h>`'s numbers of the file systems every change of which goes through this kernel's VFS
        /// (as 32 bits: `f_type` is a signed `long`, negative for some of them on 32-bit systems).
        static let localFileSystems: Set<UInt32> = [
            0xEF53,  // ext2, ext3, ext4
            0x5846_5342,  // XFS
            0x9123_683E,  // Btrfs
            0xF2F5_2010,  // F2FS
            0x0102_1994,  // tmpfs
            0x8584_58F6,  // ramfs
        ]

        /// What a watch reports: a folder's entries added, removed or renamed, a file or folder written, its
        /// attributes or times set, it or a folder's entry deleted or moved. Not reads, opens or closes after
        /// reading: serving a file must not look like changing it. A link is watched as itself.
        private static let events =
            UInt32(IN_MODIFY) | UInt32(IN_ATTRIB) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_FROM)
            | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE) | UInt32(IN_DELETE) | UInt32(IN_DELETE_SELF)
            | UInt32(IN_MOVE_SELF) | UInt32(IN_DONT_FOLLOW)
    #endif

    /// Watches `paths` under `tree`; nil when one of them cannot be: the tree's file system may change behind the
    /// kernel's back (``seesEveryChange(under:)``), or a path is gone, on another file system than the tree's (a
    /// mount inside it), or past `fs.inotify.max_user_watches`. Watching a path already watched costs nothing more.
    ///
    /// A watch vouches only for what happens after it is set: take a ``moment()`` after this returns, check the
    /// paths as they are, and from then on ``isUnchanged(_:since:)`` with that moment says whether to check again.
    /// Blocking (a system call per path): for many paths, call it off the cooperative pool.
    package func watch(_ paths: [String], under tree: String) -> Watched? {
        #if os(Linux)
            guard Self.seesEveryChange(under: tree), let device = FileStatus(path: tree)?.device else { return nil }
            var descriptors: [Int32] = []
            descriptors.reserveCapacity(paths.count)
            for path in paths {
                guard let status = FileStatus(path: path, followingLinks: false), status.device == device else {
                    return nil
                }
                let watch = inotify_add_watch(descriptor, path, Self.events)
                guard watch >= 0 else { return nil }
                descriptors.append(watch)
            }
            return Watched(descriptors: descriptors)
        #else
            return nil
        #endif
    }

    /// Now, after every notice queued so far has been read: a change made after this returns reads as a change
    /// since it.
    package func moment() -> UInt64 {
        state.withLock { state in
            drain(&state)
            return state.generation
        }
    }

    /// Whether any of `watched`'s watches was dropped by the kernel: it must be watched anew to vouch again.
    package func isDropped(_ watched: Watched) -> Bool {
        state.withLock { state in
            drain(&state)
            return state.broken || watched.descriptors.contains(where: state.dropped.contains)
        }
    }

    /// Whether no notice came for `watched` after `moment` (from ``moment()``; 0 vouches for nothing), none of its
    /// watches was dropped, and the mount table did not change. Reads the queue first, so a change whose system
    /// call has returned is seen. Costs a `poll` and a `read` that find nothing while nothing changes.
    package func isUnchanged(_ watched: Watched, since moment: UInt64) -> Bool {
        state.withLock { state in
            drain(&state)
            guard moment > 0, !state.broken, state.everythingChanged <= moment else { return false }
            if !state.dropped.isEmpty, watched.descriptors.contains(where: state.dropped.contains) { return false }
            guard state.lastChange > moment else { return true }
            return watched.descriptors.allSatisfy { (state.changed[$0] ?? 0) <= moment }
        }
    }

    /// Reads every queued notice, each counted at a new generation, and notes a change of the mount table as a
    /// change of everything. Non-blocking: the descriptor is `IN_NONBLOCK`, the poll does not wait.
    private func drain(_ state: inout State) {
        #if os(Linux)
            guard !state.broken else { return }
            var mountTable = pollfd(fd: mounts, events: Int16(POLLPRI), revents: 0)
            let polled = poll(&mountTable, 1, 0)
            if polled < 0 && errno != EINTR {
                state.broken = true
                return
            }
            if polled > 0 {
                // The poll itself takes note: the next one reports only a later change of the table.
                state.generation += 1
                state.lastChange = state.generation
                state.everythingChanged = state.generation
            }
            let headerSize = MemoryLayout<inotify_event>.size
            withUnsafeTemporaryAllocation(byteCount: 16 << 10, alignment: 8) { buffer in
                while true {
                    let count = read(descriptor, buffer.baseAddress, buffer.count)
                    if count < 0 {
                        if errno == EINTR { continue }
                        if errno != EAGAIN && errno != EWOULDBLOCK { state.broken = true }
                        return
                    }
                    guard count > 0 else { return }
                    var offset = 0
                    while offset + headerSize <= count {
                        let event = buffer.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                        state.generation += 1
                        state.lastChange = state.generation
                        if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                            state.everythingChanged = state.generation
                        } else {
                            state.changed[event.wd] = state.generation
                            if event.mask & (UInt32(IN_IGNORED) | UInt32(IN_UNMOUNT)) != 0 {
                                state.dropped.insert(event.wd)
                            }
                        }
                        offset += headerSize + Int(event.len)
                    }
                    if state.changed.count > Self.changedLimit {
                        state.changed.removeAll()
                        state.everythingChanged = state.generation
                    }
                    if state.dropped.count > Self.changedLimit {
                        // Forgetting dropped descriptors would let them vouch: nothing does any more.
                        state.broken = true
                        return
                    }
                }
            }
        #endif
    }
}
