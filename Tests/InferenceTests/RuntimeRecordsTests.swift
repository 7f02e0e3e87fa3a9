import Foundation
import ModelDepotPlatform
import ModelDepotTesting
import Testing

@testable import ModelDepotInference

/// The second line behind the parent-death signal: recorded runtimes whose ModelDepot is gone are stopped by the
/// next one, and a recorded id that now names another process is never signalled.
@Suite struct RuntimeRecordsTests {
    typealias Record = RuntimeRecords.Record

    static func record(_ runtime: RunningProcess, parent: RunningProcess) -> Record {
        Record(
            pid: runtime.pid, port: 9, startTime: runtime.startTime, parentPID: parent.pid,
            parentStartTime: parent.startTime, boot: runtime.boot, runtime: "stand-in")
    }

    @Test func theVerdictNeedsTheSameRuntimeAndAGoneParent() {
        let runtime = RunningProcess(pid: 50, parent: 1, group: 50, startTime: 700, boot: "b")
        let parent = RunningProcess(pid: 40, parent: 1, group: 40, startTime: 600, boot: "b")
        let record = Self.record(runtime, parent: parent)
        #expect(RuntimeRecords.verdict(for: record, runtime: runtime, parent: parent) == .keep)
        #expect(RuntimeRecords.verdict(for: record, runtime: runtime, parent: nil) == .stop)
        let parentsIDReused = RunningProcess(pid: 40, parent: 1, group: 40, startTime: 900, boot: "b")
        #expect(RuntimeRecords.verdict(for: record, runtime: runtime, parent: parentsIDReused) == .stop)
        #expect(RuntimeRecords.verdict(for: record, runtime: nil, parent: nil) == .forget)
        let runtimesIDReused = RunningProcess(pid: 50, parent: 1, group: 50, startTime: 701, boot: "b")
        #expect(RuntimeRecords.verdict(for: record, runtime: runtimesIDReused, parent: nil) == .forget)
        let anotherBoot = RunningProcess(pid: 50, parent: 1, group: 50, startTime: 700, boot: "c")
        #expect(RuntimeRecords.verdict(for: record, runtime: anotherBoot, parent: nil) == .forget)
    }

    /// A record that names init, this process, its parent or its process group (written by hand, by another
    /// program, or corrupted) is never acted on: `kill(-1)` would reach every process, and `kill(-pgrp)` this
    /// process and its shell. Checked on the verdict alone, so a failure here signals nothing.
    @Test func aRecordNamingInitThisProcessOrItsFamilyIsNeverStopped() throws {
        let me = try #require(RunningProcess.current)
        let family: [Int32] = [1, 0, -1, me.pid, me.parent, me.group]
        for pid in family {
            let process = RunningProcess(pid: pid, parent: 0, group: pid, startTime: 700, boot: me.boot)
            let record = Record(
                pid: pid, port: 9, startTime: 700, parentPID: 99_999_999, parentStartTime: 1, boot: me.boot,
                runtime: "hostile")
            #expect(RuntimeRecords.verdict(for: record, runtime: process, parent: nil) != .stop, "pid \(pid)")
            #expect(!process.maySignal, "pid \(pid)")
        }
        // Another process in this process's group, not leading it, may be signalled (alone: it leads no group).
        let member = RunningProcess(pid: 99_999_998, parent: 0, group: me.group, startTime: 1, boot: me.boot)
        #expect(member.maySignal)
    }

    /// Real processes: an orphan whose recorded parent was killed (a child of a child, which the parent-death
    /// signal does not reach), a live process whose recorded start time differs (its id reused), and one whose
    /// parent (this process) lives.
    @Test(.timeLimit(.minutes(2))) func reapStopsOrphansOnlyAndNeverAReusedID() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-runtime-records")
        defer { folder.remove() }
        let records = RuntimeRecords(folder: folder.path("records"))
        let me = try #require(RunningProcess.current)

        let standIn = try await StandInOrphan.start(in: folder.url)
        let (parent, orphan, orphanID) = (standIn.parent, standIn.orphan, standIn.orphan.pid)
        try records.write(Self.record(orphan, parent: standIn.parentNow))

        let reused = try ChildProcess(executable: "/bin/sleep", arguments: ["600"], output: "/dev/null")
        let reusedNow = try #require(RunningProcess.find(reused.pid))
        var reusedRecord = Self.record(reusedNow, parent: reusedNow)
        reusedRecord.startTime -= 1
        reusedRecord.parentPID = orphanID  // a parent that will be gone
        try records.write(reusedRecord)

        let kept = try ChildProcess(executable: "/bin/sleep", arguments: ["600"], output: "/dev/null")
        try records.write(Self.record(try #require(RunningProcess.find(kept.pid)), parent: me))
        defer {
            for child in [reused, kept] { child.signal(SIGKILL) }
        }

        // The parent dies by SIGKILL alone; its child is not told.
        parent.signal(SIGKILL)
        await parent.waitForExit()
        #expect(await waitUntil(timeout: .seconds(30)) { RunningProcess.find(orphanID)?.parent != parent.pid })
        #expect(orphan.isRunning, "nothing but the reaper stops it")

        let stopped = await records.reap(grace: .seconds(5))
        #expect(stopped == [orphanID])
        #expect(!orphan.isRunning)
        #expect(reused.isRunning, "a recorded id whose start time differs is another process: never signalled")
        #expect(kept.isRunning)
        #expect(records.records().map(\.pid) == [kept.pid], "the orphan's and the stale record are gone")
        await reused.stop(grace: .seconds(5))
        await kept.stop(grace: .seconds(5))
    }
}
