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
    /// `memory.max` (`max`: no limit) and `memory.current` under `/sys/fs/cgroup`; v1 (`N:memory:PATH`):
    /// `memory.limit_in_bytes` (a huge number: no limit) and `memory.usage_in_bytes` under `/sys/fs/cgroup/memory`.
    /// A level whose folder is not there (a container that shows its own group as the root) is skipped. Nil when no
    /// level limits memory.
    package static func cgroupHeadroom(membership: String, read: (String) -> String?) -> Int64? {
        let lines = membership.split(separator: "\n")
        let hierarchy: (path: Substring, root: String, limit: String, usage: String)
        if let line = lines.first(where: { $0.hasPrefix("0::") }) {
            hierarchy = (line.dropFirst(3), "/sys/fs/cgroup", "memory.max", "memory.current")
        } else if let line = lines.first(where: {
            $0.split(separator: ":")[safe: 1]?.split(separator: ",").contains("memory") == true
        }),
            let path = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)[safe: 2]
        {
            hierarchy = (path, "/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes")
        } else {
            return nil
        }
        func number(_ file: String) -> Int64? {
            read(file).flatMap { Int64(String($0.filter { !$0.isWhitespace })) }
        }
        var path = hierarchy.path.split(separator: "/").map(String.init)
        var headroom: Int64?
        while true {
            let folder = ([hierarchy.root] + path).joined(separator: "/")
            if let limit = number(folder + "/" + hierarchy.limit), limit < 1 << 60 {
                let used = number(folder + "/" + hierarchy.usage) ?? 0
                headroom = min(headroom ?? .max, max(0, limit - used))
            }
            guard !path.isEmpty else { break }
            path.removeLast()
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

extension Array {
    fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
