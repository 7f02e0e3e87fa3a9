#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The instruction-set extensions this machine's processor reports, as lower-case names in the Linux kernel's
/// spelling (`avx2`, `fma`, `avx512f`, `avx512bw`, …). A library that picks its own code paths can get this
/// wrong on a processor newer than itself, so a caller can check it against what the processor says.
package enum ProcessorFeatures {
    /// The reported extensions; empty when the platform does not say (Apple silicon, say).
    package static let current: Set<String> = read()

    private static func read() -> Set<String> {
        #if canImport(Darwin)
            // Intel Macs: sysctl(3)'s `machdep.cpu.features` and `machdep.cpu.leaf7_features` list CPUID's flags
            // in upper case ("FMA AVX1.0 …", "AVX2 AVX512F …"); Apple silicon has neither.
            var names: Set<String> = []
            for key in ["machdep.cpu.features", "machdep.cpu.leaf7_features"] {
                var size = 0
                guard sysctlbyname(key, nil, &size, nil, 0) == 0, size > 0 else { continue }
                var buffer = [CChar](repeating: 0, count: size)
                guard sysctlbyname(key, &buffer, &size, nil, 0) == 0 else { continue }
                let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                names.formUnion(text.split(separator: " ").map { $0.lowercased() })
            }
            return names
        #else
            // Linux: the first "flags" line of /proc/cpuinfo (x86); other architectures name it "Features".
            guard let file = fopen("/proc/cpuinfo", "r") else { return [] }
            defer { fclose(file) }
            var line: UnsafeMutablePointer<CChar>?
            var capacity = 0
            defer { free(line) }
            while getline(&line, &capacity, file) > 0, let line {
                let text = String(cString: line)
                guard text.hasPrefix("flags") || text.hasPrefix("Features"),
                    let colon = text.firstIndex(of: ":")
                else { continue }
                return Set(
                    text[text.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\n" }).map(
                        String.init))
            }
            return []
        #endif
    }
}
