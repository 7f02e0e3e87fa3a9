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
            // swapping, in kB.
            guard let file = fopen("/proc/meminfo", "r") else { return nil }
            defer { fclose(file) }
            var line: UnsafeMutablePointer<CChar>?
            var capacity = 0
            defer { free(line) }
            while getline(&line, &capacity, file) > 0, let line {
                let text = String(cString: line)
                guard text.hasPrefix("MemAvailable:") else { continue }
                let digits = text.dropFirst("MemAvailable:".count).filter(\.isNumber)
                return Int64(digits).map { $0 * 1024 }
            }
            return nil
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
}
