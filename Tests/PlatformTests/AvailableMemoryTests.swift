import ModelDepotPlatform
import Testing

/// The memory a container may still take: its cgroup's limit minus its use, at the tightest level, in both cgroup
/// versions; a level without a limit, or a folder the container does not show, limits nothing.
@Suite struct AvailableMemoryTests {
    static func reader(_ files: [String: String]) -> (String) -> String? { { files[$0] } }

    @Test func cgroupV2TakesTheTightestLevel() {
        let files = [
            "/sys/fs/cgroup/memory.max": "max\n",
            "/sys/fs/cgroup/app.slice/memory.max": "8589934592\n",
            "/sys/fs/cgroup/app.slice/memory.current": "1073741824\n",
            "/sys/fs/cgroup/app.slice/ui.scope/memory.max": "max\n",
            "/sys/fs/cgroup/app.slice/ui.scope/memory.current": "536870912\n",
        ]
        let headroom = AvailableMemory.cgroupHeadroom(
            membership: "0::/app.slice/ui.scope\n", read: Self.reader(files))
        #expect(headroom == Int64(7_516_192_768))
    }

    @Test func cgroupV1ReadsTheMemoryController() {
        let files = [
            "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
            "/sys/fs/cgroup/memory/job/memory.limit_in_bytes": "2147483648\n",
            "/sys/fs/cgroup/memory/job/memory.usage_in_bytes": "3000000000\n",
        ]
        let membership = "5:devices:/job\n4:memory:/job\n1:cpu,cpuacct:/job\n"
        // Over its limit already: nothing is left, never a negative number.
        #expect(AvailableMemory.cgroupHeadroom(membership: membership, read: Self.reader(files)) == 0)
    }

    /// The page cache the kernel can drop (a model just downloaded) is not counted as used, and a hybrid system
    /// whose v2 tree limits nothing falls back to the v1 memory controller.
    @Test func reclaimableCacheIsFreeAndHybridSystemsReadV1() {
        let files = [
            "/sys/fs/cgroup/memory/box/memory.limit_in_bytes": "4000000000\n",
            "/sys/fs/cgroup/memory/box/memory.usage_in_bytes": "3900000000\n",
            "/sys/fs/cgroup/memory/box/memory.stat":
                "cache 3000000000\ntotal_cache 3000000000\ntotal_inactive_file 2500000000\n",
        ]
        let membership = "4:memory:/box\n0::/box\n"
        #expect(
            AvailableMemory.cgroupHeadroom(membership: membership, read: Self.reader(files))
                == Int64(2_600_000_000), "4 GB limit, 3.9 GB used of which 2.5 GB is cache the kernel can drop")
    }

    @Test func noLimitAnywhereIsNil() {
        let files = ["/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"]
        #expect(AvailableMemory.cgroupHeadroom(membership: "4:memory:/gone/away\n", read: Self.reader(files)) == nil)
        #expect(AvailableMemory.cgroupHeadroom(membership: "0::/\n", read: Self.reader([:])) == nil)
        #expect(AvailableMemory.cgroupHeadroom(membership: "", read: Self.reader(files)) == nil)
    }

    @Test func thisMachineSaysSomething() {
        #expect((AvailableMemory.current() ?? 0) > 0)
    }
}
