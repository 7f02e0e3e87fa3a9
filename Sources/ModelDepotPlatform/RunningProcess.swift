#if os(Linux) || os(macOS)
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// A process as the system sees it now, found by its id, with what tells it apart from a later process that
    /// is given the same id: when it started. Only on Linux and macOS.
    package struct RunningProcess: Sendable, Equatable {
        package let pid: Int32
        /// Its parent's id (1, or a subreaper's, once the parent has ended).
        package let parent: Int32
        /// Its process group's id.
        package let group: Int32
        /// When it started, in the platform's own unit, only ever compared for equality: on Linux clock ticks since
        /// boot (field 22 of `/proc/PID/stat`), on macOS microseconds since 1970 (`kinfo_proc.kp_proc.p_starttime`, which Swift reads as
        /// `p_un.__p_starttime`).
        package let startTime: UInt64
        /// On Linux this boot's id (`/proc/sys/kernel/random/boot_id`), since ticks since boot repeat across boots;
        /// empty on macOS, whose start times do not.
        package let boot: String

        package init(pid: Int32, parent: Int32, group: Int32, startTime: UInt64, boot: String) {
            self.pid = pid
            self.parent = parent
            self.group = group
            self.startTime = startTime
            self.boot = boot
        }

        /// This process.
        package static var current: RunningProcess? { find(getpid()) }

        /// The process with id `pid`; nil when there is none, or it has ended and waits to be reaped (a zombie).
        package static func find(_ pid: Int32) -> RunningProcess? {
            guard pid > 0 else { return nil }
            #if canImport(Darwin)
                // sysctl(3) with CTL_KERN, KERN_PROC, KERN_PROC_PID fills one `kinfo_proc` (`<sys/sysctl.h>`);
                // a size of 0 back means no such process.
                var name: [Int32] = [CTL_KERN, KERN_PROC, KERN_PROC_PID, pid]
                var info = kinfo_proc()
                var size = MemoryLayout<kinfo_proc>.stride
                guard sysctl(&name, 4, &info, &size, nil, 0) == 0, size > 0, info.kp_proc.p_stat != SZOMB else {
                    return nil
                }
                // `p_starttime` is a macro for `p_un.__p_starttime` (`<sys/proc.h>`), which Swift does not import.
                let started = info.kp_proc.p_un.__p_starttime
                return RunningProcess(
                    pid: pid, parent: info.kp_eproc.e_ppid, group: info.kp_eproc.e_pgid,
                    startTime: UInt64(started.tv_sec) * 1_000_000 + UInt64(started.tv_usec), boot: "")
            #else
                // `pid (comm) state ppid pgrp … starttime …`: comm may hold spaces and parentheses, so fields are
                // counted from the last ')'; after it, field 3 (state) is the first.
                guard let stat = readSmallFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else {
                    return nil
                }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                guard fields.count > 19, fields[0] != "Z", fields[0] != "X", let parent = Int32(fields[1]),
                    let group = Int32(fields[2]), let startTime = UInt64(fields[19])
                else { return nil }
                return RunningProcess(
                    pid: pid, parent: parent, group: group, startTime: startTime, boot: Self.bootIdentifier)
            #endif
        }

        /// Whether this very process still runs: its id names a live process that started when it did.
        package var isRunning: Bool {
            guard let now = Self.find(pid) else { return false }
            return now.startTime == startTime && now.boot == boot
        }

        /// Whether it may be signalled at all: never init or a pid of 0 or below (`kill(0)`, `kill(-1)` and a group
        /// of 1 reach whole sets of processes), nor this process, its parent, its process group's leader or its
        /// session's leader, whatever a record (a file anyone may edit) says.
        package var maySignal: Bool {
            pid > 1 && pid != getpid() && pid != getppid() && pid != getpgrp() && pid != getsid(0)
        }

        /// Sends `number` to its process group when it leads one, else to it alone; nothing when it may not be
        /// signalled (``maySignal``).
        package func signal(_ number: Int32) {
            guard maySignal else { return }
            if group == pid, kill(-pid, number) == 0 { return }
            kill(pid, number)
        }

        #if !canImport(Darwin)
            private static let bootIdentifier =
                readSmallFile("/proc/sys/kernel/random/boot_id")?.split(separator: "\n").first.map(String.init) ?? ""

            /// A file of at most 4 KiB read whole (the kernel's process files report a size of 0, so no `stat`).
            private static func readSmallFile(_ path: String) -> String? {
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { return nil }
                defer { close(descriptor) }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = read(descriptor, &buffer, buffer.count)
                guard count > 0 else { return nil }
                return String(decoding: buffer[..<count], as: UTF8.self)
            }
        #endif
    }

#endif
