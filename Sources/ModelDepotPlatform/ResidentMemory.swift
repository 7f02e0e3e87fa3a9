#if os(Linux) || os(macOS)
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// The memory a process has in RAM now, for the "Loaded models" panel's figure of a runtime's server. Only on
    /// Linux and macOS (a runtime's process exists nowhere else).
    package enum ResidentMemory {
        /// Bytes resident for process `pid`; nil when it has ended or the system does not say.
        package static func of(_ pid: Int32) -> Int64? {
            guard pid > 0 else { return nil }
            #if os(Linux)
                // /proc/PID/statm (proc(5)): sizes in pages; the second field is the resident set.
                guard let file = fopen("/proc/\(pid)/statm", "r") else { return nil }
                defer { fclose(file) }
                var buffer = [CChar](repeating: 0, count: 256)
                guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
                let fields = String(cString: buffer).split(separator: " ")
                guard fields.count >= 2, let pages = Int64(fields[1]) else { return nil }
                return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
            #else
                // proc_pid_rusage(pid, RUSAGE_INFO_V2, …) (<libproc.h>): ri_resident_size, in bytes.
                var usage = rusage_info_v2()
                let status = withUnsafeMutablePointer(to: &usage) { pointer in
                    pointer.withMemoryRebound(to: rusage_info_t?.self, capacity: 1) {
                        proc_pid_rusage(pid, RUSAGE_INFO_V2, $0)
                    }
                }
                return status == 0 ? Int64(usage.ri_resident_size) : nil
            #endif
        }

    }
#endif
