import CModelDepotPlatform
import ModelDepotPlatform
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Background work runs at a lower priority on its thread and gives the thread its own back.
@Suite struct BackgroundPriorityTests {
    @Test func theThreadIsNicedWhileItRunsAndRestoredAfter() {
        #if os(Linux)
            let before = BackgroundPriority.run { niceness() }
            #expect(before == 15)
            #expect(niceness() != 15)
        #endif
    }

    #if os(Linux)
        func niceness() -> Int32 {
            getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(modeldepot_thread_id()))
        }
    #endif
}
