import CModelDepotPlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Work that must yield the processor to what people wait for (the mirror's Xet indexing beside the downloads it
/// serves): the calling thread runs it at a lower priority, and gets its own back after.
package enum BackgroundPriority {
    package static func run<T>(_ body: () throws -> T) rethrows -> T {
        #if os(Linux)
            // On Linux a nice value belongs to a thread: setpriority(2) with PRIO_PROCESS and the thread's id.
            let thread = id_t(modeldepot_thread_id())
            errno = 0
            let before = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread)
            let known = errno == 0
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, 15)
            defer { if known { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, before) } }
            return try body()
        #elseif canImport(Darwin)
            // pthread_set_qos_class_self_np (<pthread/qos.h>): the background class, then the thread's own again.
            var before = QOS_CLASS_UNSPECIFIED
            var relative: Int32 = 0
            pthread_get_qos_class_np(pthread_self(), &before, &relative)
            pthread_set_qos_class_self_np(QOS_CLASS_BACKGROUND, 0)
            defer { pthread_set_qos_class_self_np(before, relative) }
            return try body()
        #else
            return try body()
        #endif
    }
}
