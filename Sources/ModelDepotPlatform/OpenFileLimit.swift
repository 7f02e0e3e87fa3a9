#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How many file descriptors this process may hold (`getrlimit(2)`, `RLIMIT_NOFILE`, the soft limit).
package enum OpenFileLimit {
    /// The soft limit; nil when unlimited or unknown.
    package static func current() -> Int? {
        var limits = rlimit()
        // glibc types the resource as `__rlimit_resource_t`; Darwin's `<sys/resource.h>` as an Int32.
        #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limits) == 0, limits.rlim_cur < rlim_t(Int32.max) else { return nil }
        return Int(limits.rlim_cur)
    }
}
