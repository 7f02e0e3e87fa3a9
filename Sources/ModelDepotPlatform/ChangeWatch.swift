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
/// (`write`, `rename`, `unlink`, `chmod`, `utimensat`…), before that call returns (but see what it cannot see,
/// below). A client that changed a file and
/// then asked the server is answered after a check that drains the queue, so the check sees the change. The
/// watch never decides alone that something changed; it only spares the `stat` calls while nothing did:
/// - anything it cannot vouch for reads as changed: a descriptor that failed, a moment before the paths were
///   watched, a watch the kernel dropped (the file was deleted, its file system unmounted: the paths must be
///   watched anew), and every set watched before a queue overflow (notices, of drops too, were lost) or a change of
///   the mount table (a folder mounted over or unmounted sends no notice of its own: `/proc/self/mountinfo` is
///   polled for it) — an epoch;
/// - it watches only a tree on a file system whose every change passes through this kernel's VFS (ext2/3/4, XFS,
///   Btrfs, F2FS, tmpfs, ramfs): a network or FUSE file system changes behind the kernel's back, an overlay's lower
///   layers too, and ZFS rolls a dataset back without a notice;
/// - a path on another file system than the tree's is not watched.
///
/// What it cannot see: writes that bypass the write calls — stores into a shared `mmap` of a file, asynchronous
/// I/O (`io_submit`) — send no notice until the file is closed (`IN_CLOSE_WRITE`), though they change the file's
/// times. Callers that answer from what they read bound how long a check is trusted (``FolderWalk``: a second).
///
/// Linux only: on Apple platforms `kqueue`'s vnode events need an open descriptor per watched file, so `init()`
/// returns nil there and callers keep checking with `stat`.
package final class ChangeWatch: Sendable {
    /// The watch descriptors of one set of paths, and the epoch they were set in.
    package struct Watched: Sendable {
        let descriptors: [Int32]
        let epoch: UInt64
    }

    private struct State {
        /// Counts the notices read; a moment is its value when taken.
        var generation: UInt64 = 1
        /// The generation of the last notice of each descriptor that had one, this epoch.
        var changed: [Int32: UInt64] = [:]
        /// The generation of the last notice of any descriptor.
        var lastChange: UInt64 = 0
        /// Descriptors whose watch the kernel removed (`IN_IGNORED`) or whose file system went (`IN_UNMOUNT`) this
        /// epoch: a set holding one cannot be given a moment, and must be watched anew.
        var dropped: Set<Int32> = []
        /// Bumped when notices may have been lost (the queue overflowed: the kernel's notices of dropped watches
        /// too) or the mount table changed (nothing is sent when a folder is mounted over): every set watched
        /// before vouches for nothing and must be watched anew. Watching a path again keeps a live watch's
        /// descriptor and gives a dropped one a new one.
        var epoch: UInt64 = 1
        /// Reading the queue failed: nothing is vouched for or watched any more.
        var broken = false

        mutating func startEpoch() {
            epoch += 1
            changed.removeAll()
            dropped.removeAll()
        }
    }

    /// Past this many descriptors with notices, or dropped, a new epoch starts (every set must be watched anew):
    /// the tables stay bounded in a server whose files keep changing.
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
    /// A watch vouches only for what happens after it is set: take a ``moment(for:)`` after this returns, check
    /// the paths as they are, and from then on ``isUnchanged(_:since:)`` with that moment says whether to check
    /// again. The epoch is read before any path is watched: a new epoch starting meanwhile makes the set stale.
    /// Blocking (a system call per path): for many paths, call it off the cooperative pool.
    package func watch(_ paths: [String], under tree: String) -> Watched? {
        #if os(Linux)
            // The epoch after what is queued: a mount or an overflow already behind us does not make the set stale.
            let current = state.withLock { state -> UInt64? in
                drain(&state)
                return state.broken ? nil : state.epoch
            }
            guard let epoch = current, Self.seesEveryChange(under: tree), let device = FileStatus(path: tree)?.device
            else { return nil }
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
            return Watched(descriptors: descriptors, epoch: epoch)
        #else
            return nil
        #endif
    }

    /// Now, after every notice queued so far has been read: a change made after this returns reads as a change
    /// since it. Nil when `watched` cannot vouch from now on (a watch of it was dropped, it was set in an earlier
    /// epoch, or the queue cannot be read): watch its paths anew. A drop after the moment reads as a change.
    package func moment(for watched: Watched) -> UInt64? {
        state.withLock { state in
            drain(&state)
            guard !state.broken, watched.epoch == state.epoch,
                state.dropped.isEmpty || !watched.descriptors.contains(where: state.dropped.contains)
            else { return nil }
            return state.generation
        }
    }

    /// How many epochs have started (``moment(for:)``): a change of the mount table anywhere starts one.
    package var epoch: UInt64 { state.withLock { $0.epoch } }

    /// Starts a new epoch, as a lost notice or a mount does: for tests of what a watch's user does then, which
    /// cannot make the process's queue overflow while other tests keep reading it.
    package func startEpoch() { state.withLock { $0.startEpoch() } }

    /// Whether no notice came for `watched` after `moment` (from ``moment(for:)``; 0 vouches for nothing) and no
    /// new epoch started. Reads the queue first, so a change whose system call has returned is seen. Costs a `poll`
    /// and a `read` that find nothing while nothing changes; the descriptors are looked at only when something,
    /// somewhere, changed since `moment`.
    package func isUnchanged(_ watched: Watched, since moment: UInt64) -> Bool {
        state.withLock { state in
            drain(&state)
            guard moment > 0, !state.broken, watched.epoch == state.epoch else { return false }
            guard state.lastChange > moment else { return true }
            return watched.descriptors.allSatisfy { (state.changed[$0] ?? 0) <= moment }
        }
    }

    /// Reads every queued notice, each counted at a new generation, and notes a change of the mount table as a
    /// change of everything. Non-blocking: the descriptor is `IN_NONBLOCK`, the poll does not wait.
    private func drain(_ state: inout State) {
        #if os(Linux)
            guard !state.broken else { return }
            // One `poll` for both: a change of the mount table, and notices waiting in the queue (the queue is
            // read only then: most requests find nothing, and a `read` that says so is a second system call).
            let polled = withUnsafeTemporaryAllocation(of: pollfd.self, capacity: 2) {
                descriptors -> (mountsChanged: Bool, noticesWaiting: Bool)? in
                descriptors[0] = pollfd(fd: mounts, events: Int16(POLLPRI), revents: 0)
                descriptors[1] = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                while poll(descriptors.baseAddress, 2, 0) < 0 {
                    guard errno == EINTR else { return nil }
                }
                let queue = Int32(descriptors[1].revents)
                guard queue & (POLLERR | POLLNVAL) == 0 else { return nil }
                return (descriptors[0].revents != 0, queue & POLLIN != 0)
            }
            guard let (mountsChanged, noticesWaiting) = polled else {
                state.broken = true
                return
            }
            if mountsChanged {
                // The poll itself takes note: the next one reports only a later change of the table.
                state.generation += 1
                state.lastChange = state.generation
                state.startEpoch()
            }
            guard noticesWaiting else { return }
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
                            state.startEpoch()
                        } else {
                            state.changed[event.wd] = state.generation
                            if event.mask & (UInt32(IN_IGNORED) | UInt32(IN_UNMOUNT)) != 0 {
                                state.dropped.insert(event.wd)
                            }
                        }
                        offset += headerSize + Int(event.len)
                    }
                    if state.changed.count > Self.changedLimit || state.dropped.count > Self.changedLimit {
                        state.startEpoch()
                    }
                }
            }
        #endif
    }
}
