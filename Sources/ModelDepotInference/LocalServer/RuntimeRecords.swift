#if os(Linux) || os(macOS)
    import Foundation
    import ModelDepot
    import ModelDepotPlatform

    /// The local runtimes (model servers) ModelDepot processes started, one small JSON file each, so that a later
    /// process can stop the ones whose ModelDepot has gone without stopping them (`kill -9`, a crash).
    ///
    /// On macOS, which has no parent-death signal, this is what ends such a runtime; on Linux it is a second line
    /// behind ``LocalModelServer``'s parent-death signal, catching what that misses (a runtime's own children, a
    /// runtime that handles SIGTERM by ignoring it). ``LocalModelServer`` reaps before it starts a runtime, records
    /// the runtime once started and removes the record when it stops it.
    ///
    /// A runtime is stopped only when both hold: its id still names the process recorded (same start time, same
    /// boot: an id the system gave to another process since is never signalled), and the process that started it
    /// has ended (its id is gone or names a process with another start time).
    public struct RuntimeRecords: Sendable {
        /// One runtime: who it is, where it listens, and who started it.
        package struct Record: Codable, Equatable, Sendable {
            package var pid: Int32
            package var port: Int
            package var startTime: UInt64
            package var parentPID: Int32
            package var parentStartTime: UInt64
            /// The boot both were seen in (start times are per boot on Linux).
            package var boot: String
            /// What runs, for people reading the folder.
            package var runtime: String

            package init(
                pid: Int32, port: Int, startTime: UInt64, parentPID: Int32, parentStartTime: UInt64, boot: String,
                runtime: String
            ) {
                self.pid = pid
                self.port = port
                self.startTime = startTime
                self.parentPID = parentPID
                self.parentStartTime = parentStartTime
                self.boot = boot
                self.runtime = runtime
            }
        }

        /// What to do with a record.
        package enum Verdict: Equatable {
            /// The runtime and its parent both run: another ModelDepot's, in use.
            case keep
            /// The runtime has ended, or its id now names another process (or one never to be signalled, see
            /// `RunningProcess.maySignal`): drop the record, signal nothing.
            case forget
            /// The runtime runs and its parent is gone: stop it, then drop the record.
            case stop
        }

        /// The folder of records.
        public let folder: URL

        /// Records in `folder` (created on the first record).
        public init(folder: URL) {
            self.folder = folder
        }

        /// Records kept with the cache `cache`, in `.locks/modeldepot-runtimes/`: the cache is where ModelDepot
        /// keeps its state, and `.locks` is the one folder there that Python's cache tools and ours pass over.
        public init(cache: HubCache) {
            self.init(folder: cache.root.appendingPathComponent(".locks/modeldepot-runtimes", isDirectory: true))
        }

        package static func verdict(for record: Record, runtime: RunningProcess?, parent: RunningProcess?) -> Verdict {
            // A record naming init or this process's own family is not ours to act on, however it came about.
            guard let runtime, runtime.maySignal, runtime.startTime == record.startTime, runtime.boot == record.boot
            else {
                return .forget
            }
            if let parent, parent.startTime == record.parentStartTime, parent.boot == record.boot { return .keep }
            return .stop
        }

        /// Records `child`, started by this process, serving on `port`. A record that cannot be written is not
        /// fatal (the runtime works; only the second line of cleanup is missing), so errors are ignored.
        func add(_ child: ChildProcess, port: Int, runtime: String) {
            guard let me = RunningProcess.current, let started = RunningProcess.find(child.pid) else { return }
            let record = Record(
                pid: child.pid, port: port, startTime: started.startTime, parentPID: me.pid,
                parentStartTime: me.startTime, boot: me.boot, runtime: runtime)
            try? write(record)
        }

        /// Writes `record` (replacing one for the same id).
        package func write(_ record: Record) throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try encoder.encode(record).write(to: file(for: record.pid), options: .atomic)
        }

        /// Forgets the runtime `pid` (it was stopped in order).
        package func remove(pid: Int32) {
            try? FileManager.default.removeItem(at: file(for: pid))
        }

        /// Every readable record.
        package func records() -> [Record] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return names.filter { $0.hasSuffix(".json") }.sorted().compactMap { name in
                guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) else {
                    return nil
                }
                return try? JSONDecoder().decode(Record.self, from: data)
            }
        }

        /// Stops every recorded runtime whose parent is gone (SIGTERM to its process group, SIGKILL after `grace`)
        /// and forgets it, forgets runtimes that have ended, and keeps the rest. Returns the ids it stopped.
        ///
        /// Waits by checking every 20 ms with `Task.sleep`: no thread is held meanwhile.
        @discardableResult
        public func reap(grace: Duration = .seconds(5)) async -> [Int32] {
            var stopped: [Int32] = []
            for record in records() {
                let runtime = RunningProcess.find(record.pid)
                switch Self.verdict(for: record, runtime: runtime, parent: RunningProcess.find(record.parentPID)) {
                case .keep:
                    continue
                case .forget:
                    remove(pid: record.pid)
                case .stop:
                    guard let runtime else { continue }
                    await Self.stop(runtime, grace: grace)
                    remove(pid: record.pid)
                    stopped.append(record.pid)
                }
            }
            return stopped
        }

        /// Not our child, so it cannot be waited for: its id is watched until it no longer names it.
        private static func stop(_ runtime: RunningProcess, grace: Duration) async {
            runtime.signal(SIGTERM)
            let deadline = ContinuousClock.now + grace
            while runtime.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
            guard runtime.isRunning else { return }
            runtime.signal(SIGKILL)
            let killed = ContinuousClock.now + .seconds(2)
            while runtime.isRunning, ContinuousClock.now < killed { try? await Task.sleep(for: .milliseconds(20)) }
        }

        private func file(for pid: Int32) -> URL { folder.appendingPathComponent("\(pid).json") }
    }
#endif
