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
/// (Linux `inotify(7)`), so a server that remembers what it read from a folder can trust it after one `read`
/// instead of a `stat` of every file on every request.
///
/// Why a notice is as good as a `stat`: the kernel queues it inside the system call that makes the change
/// (`write`, `rename`, `unlink`, `chmod`, `utimensat`…), before that call returns. A client that changed a file and
/// then asked the server is answered after a check that drains the queue, so the check sees the change. The
/// watch never decides alone that something changed; it only spares the `stat` calls while nothing did:
/// - anything it cannot vouch for reads as changed: a queue that overflowed, a descriptor that failed, a watch the
///   kernel dropped (the file was deleted), a moment before the paths were watched;
/// - it watches only a tree on a file system whose every change passes through this kernel (ext2/3/4, XFS,
///   Btrfs, F2FS, ZFS, bcachefs, tmpfs, ramfs): a network or FUSE file system changes behind the kernel's back,
///   and an overlay's lower layers too;
/// - a path on another file system than the tree's (a mount inside it) is not watched.
///
/// Content read through a mapping and written without `write` (a shared `mmap`) sends no notice until the file is
/// closed (`IN_CLOSE_WRITE`); the `stat` check this replaces saw such writes no sooner, since the times are set at
/// the same points.
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
        /// Every watch reads as changed since this generation (the queue overflowed, or `changed` was reset).
        var everythingChanged: UInt64 = 0
        /// Reading the queue failed: nothing is vouched for any more.
        var broken = false
    }

    /// Past this many descriptors with notices, their table is reset and every watch reads as changed once.
    static let changedLimit = 65_536

    private let descriptor: Int32
    private let state = Mutex(State())

    /// The process's watch: one inotify instance for every tree a process serves, since a user has few of them
    /// (`fs.inotify.max_user_instances`, 128 by default); nil where there is none.
    package static let shared = ChangeWatch()

    /// A watch of its own (``shared`` is what servers use); nil when the platform has no `inotify` or no instance
    /// is left.
    package init?() {
        #if os(Linux)
            let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard descriptor >= 0 else { return nil }
            self.descriptor = descriptor
        #else
            return nil
        #endif
    }

    deinit {
        close(descriptor)
    }

    /// Whether every change under `tree` passes through this kernel: its file system is a local one.
    package static func seesEveryChange(under tree: String) -> Bool {
        #if os(Linux)
            var magic = 0
            return modeldepot_file_system_magic(tree, &magic) == 0 && localFileSystems.contains(magic)
        #else
            return false
        #endif
    }

    #if os(Linux)
        /// `<linux/magic.h>`'s numbers (ZFS's from OpenZFS, bcachefs's from its sources) of the file systems every
        /// change of which goes through this kernel's VFS.
        static let localFileSystems: Set<Int> = [
            0xEF53,  // ext2, ext3, ext4
            0x5846_5342,  // XFS
            0x9123_683E,  // Btrfs
            0xF2F5_2010,  // F2FS
            0x2FC1_2FC1,  // ZFS
            0xCA45_1A4E,  // bcachefs
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

    /// Whether no notice came for `watched` after `moment` (from ``moment()``; 0 vouches for nothing). Reads the
    /// queue first, so a change whose system call has returned is seen. Costs one `read` that finds nothing while
    /// nothing changes.
    package func isUnchanged(_ watched: Watched, since moment: UInt64) -> Bool {
        state.withLock { state in
            drain(&state)
            guard moment > 0, !state.broken, state.everythingChanged <= moment else { return false }
            guard state.lastChange > moment else { return true }
            return watched.descriptors.allSatisfy { (state.changed[$0] ?? 0) <= moment }
        }
    }

    /// Reads every queued notice, each counted at a new generation. Non-blocking: the descriptor is `IN_NONBLOCK`.
    private func drain(_ state: inout State) {
        #if os(Linux)
            guard !state.broken else { return }
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
                        }
                        offset += headerSize + Int(event.len)
                    }
                    if state.changed.count > Self.changedLimit {
                        state.changed.removeAll()
                        state.everythingChanged = state.generation
                    }
                }
            }
        #endif
    }
}
