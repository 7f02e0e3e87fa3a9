import Foundation
import ModelDepotCore
import ModelDepotPlatform

/// A process the parent-death signal cannot reach, for tests of what stops runtimes left behind: a shell starts a
/// sleeping child of its own and then becomes a sleep itself. Killing `parent` leaves `orphan` running with a
/// recorded parent that is gone, as a runtime started by a front end's own child would be.
package struct StandInOrphan: Sendable {
    /// The shell (now a `sleep`): kill it to orphan ``orphan``.
    package let parent: ChildProcess
    /// The shell's child, as it runs now (its start time names it even if its id is reused later).
    package let orphan: RunningProcess
    /// The parent as it runs now, for a record naming it.
    package let parentNow: RunningProcess

    /// Starts the pair; `folder` holds the file through which the shell says its child's id.
    package static func start(in folder: URL) async throws -> StandInOrphan {
        let pidFile = folder.appendingPathComponent("orphan").path
        let parent = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "sleep 600 & echo $! > \(pidFile); exec sleep 600"],
            output: "/dev/null")
        let said = await waitUntil(timeout: .seconds(30)) {
            (try? String(contentsOfFile: pidFile, encoding: .utf8))?.hasSuffix("\n") == true
        }
        let written = (try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? ""
        guard said, let id = Int32(written.trimmingCharacters(in: .newlines)), let orphan = RunningProcess.find(id),
            let parentNow = RunningProcess.find(parent.pid)
        else {
            parent.signal(SIGKILL)
            throw ModelDepotError(.fileSystem, "The stand-in orphan did not start (its shell wrote '\(written)').")
        }
        return StandInOrphan(parent: parent, orphan: orphan, parentNow: parentNow)
    }
}
