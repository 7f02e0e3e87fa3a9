#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Memory a model could take now without the system swapping or killing something: what a loader compares its
/// estimate with before it starts.
package enum AvailableMemory {
    /// Bytes available now; nil when the platform does not say.
    package static func current() -> Int64? {
        #if os(Linux)
            // /proc/meminfo's MemAvailable (Linux 3.14+): free memory plus what the kernel can reclaim without
            // swapping, in kB. In a container the cgroup's limit is what counts: the kernel kills past it however
            // much the machine has free.
            guard let meminfo = readText("/proc/meminfo"),
                let line = meminfo.split(separator: "\n").first(where: { $0.hasPrefix("MemAvailable:") }),
                let kilobytes = Int64(line.dropFirst("MemAvailable:".count).filter(\.isNumber))
            else { return nil }
            let machine = kilobytes * 1024
            return cgroupHeadroom(membership: readText("/proc/self/cgroup") ?? "", read: readText).map {
                min(machine, $0)
            } ?? machine
        #elseif os(macOS)
            // host_statistics64(HOST_VM_INFO64) (<mach/host_info.h>): free, inactive and purgeable pages, times the
            // page size (vm_kernel_page_size), what Activity Monitor counts as available.
            var info = vm_statistics64()
            var count = mach_msg_type_number_t(MemoryLayout<vm_statistics64>.size / MemoryLayout<integer_t>.size)
            let status = withUnsafeMutablePointer(to: &info) { pointer in
                pointer.withMemoryRebound(to: integer_t.self, capacity: Int(count)) {
                    host_statistics64(mach_host_self(), HOST_VM_INFO64, $0, &count)
                }
            }
            guard status == KERN_SUCCESS else { return nil }
            let pages = Int64(info.free_count) + Int64(info.inactive_count) + Int64(info.purgeable_count)
            return pages * Int64(vm_kernel_page_size)
        #elseif canImport(Darwin)
            // os_proc_available_memory() (<os/proc.h>, iOS 13+): what this app may still allocate before the
            // system's memory limit for it.
            let available = os_proc_available_memory()
            return available > 0 ? Int64(available) : nil
        #else
            return nil
        #endif
    }

    /// What the process's memory cgroup still lets it take: at each level from its own group up to the root, the
    /// limit minus what the group uses, the smallest of them. cgroup v2 (`0::PATH` in `/proc/self/cgroup`):
    /// `memory.max` (`max`: no limit) and `memory.current` under `/sys/fs/cgroup`; v1 (`N:memory:PATH`), also on a
    /// hybrid system whose v2 tree limits nothing: `memory.limit_in_bytes` (a huge number: no limit) and
    /// `memory.usage_in_bytes` under `/sys/fs/cgroup/memory`. The usage counts the page cache, which the kernel
    /// reclaims before it kills anything: its inactive part (`inactive_file`, `total_inactive_file` in v1's
    /// `memory.stat`) is taken off, as the kubelet counts a container's working set. A level whose folder is not
    /// there (a container that shows its own group as the root) is skipped. Nil when no level limits memory.
    package static func cgroupHeadroom(membership: String, read: (String) -> String?) -> Int64? {
        let lines = membership.split(separator: "\n")
        if let line = lines.first(where: { $0.hasPrefix("0::") }),
            let headroom = headroom(
                path: line.dropFirst(3), root: "/sys/fs/cgroup", limit: "memory.max", usage: "memory.current",
                inactive: "inactive_file", read: read)
        {
            return headroom
        }
        for line in lines {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[1].split(separator: ",").contains("memory") else { continue }
            return headroom(
                path: fields[2], root: "/sys/fs/cgroup/memory", limit: "memory.limit_in_bytes",
                usage: "memory.usage_in_bytes", inactive: "total_inactive_file", read: read)
        }
        return nil
    }

    private static func headroom(
        path: Substring, root: String, limit: String, usage: String, inactive: String, read: (String) -> String?
    ) -> Int64? {
        func number(_ text: Substring?) -> Int64? { text.flatMap { Int64(String($0.filter { !$0.isWhitespace })) } }
        var levels = path.split(separator: "/").map(String.init)
        var headroom: Int64?
        while true {
            let folder = ([root] + levels).joined(separator: "/")
            if let limit = number(read(folder + "/" + limit)?[...]), limit < 1 << 60 {
                let used = number(read(folder + "/" + usage)?[...]) ?? 0
                let stat = read(folder + "/memory.stat")?.split(separator: "\n") ?? []
                let reclaimable =
                    stat.first { $0.hasPrefix(inactive + " ") }.flatMap { number($0.dropFirst(inactive.count)) } ?? 0
                headroom = min(headroom ?? .max, max(0, limit - max(0, used - reclaimable)))
            }
            guard !levels.isEmpty else { break }
            levels.removeLast()
        }
        return headroom
    }

    /// A small text file (a /proc or /sys entry) read whole; nil when it cannot be.
    private static func readText(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while text.count < 1 << 20 {
            let count = fread(&buffer, 1, buffer.count, file)
            guard count > 0 else { break }
            text += buffer[..<count]
        }
        return String(decoding: text, as: UTF8.self)
    }
}
