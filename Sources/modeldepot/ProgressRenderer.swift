#if os(Linux) || os(macOS)
    import Foundation
    import ModelDepot
    import ModelDepotOCI
    import Synchronization

    /// Turns progress values into a live bar on a terminal, JSON lines, or nothing.
    final class ProgressRenderer: Sendable {
        enum Mode: Sendable { case bar, plain, json, quiet }

        let mode: Mode
        private let lastPhase = Mutex<DownloadProgress.Phase?>(nil)
        private let barShown = Mutex(false)
        private let snapshotPhase = Mutex<SnapshotProgress.Phase?>(nil)
        /// The endpoint files came from at the last progress line, so a hand-over to another mirror is told once.
        private let endpointShown = Mutex<String?>(nil)
        private let waits: PlainWaitReporter

        init(mode: Mode) {
            self.mode = mode
            waits = PlainWaitReporter { StandardStreams.error(Data($0.utf8)) }
        }

        func render(_ progress: DownloadProgress) {
            let phaseChanged = lastPhase.withLock { last in
                defer { last = progress.phase }
                return last != progress.phase
            }
            switch mode {
            case .quiet: return
            case .json:
                printJSON(
                    JSONEvent(
                        event: "progress", phase: progress.phase.rawValue, bytes: progress.bytesCompleted,
                        total: progress.totalBytes,
                        bytesPerSecond: progress.bytesPerSecond.rounded(),
                        etaSeconds: progress.estimatedSecondsRemaining.map { ($0 * 10).rounded() / 10 },
                        connections: progress.activeConnections, waiting: progress.waiting?.description))
            case .plain:
                // Not a terminal (a log, a pipe): one line when the transfer starts, no redrawn bar.
                if phaseChanged && progress.phase == .downloading {
                    writeError("downloading \(progress.totalBytes.map(ByteFormat.string) ?? "(size unknown)")\n")
                }
                waits.update(progress.waiting?.description, isServerWait: progress.waiting?.isServerWait == true)
            case .bar:
                barShown.withLock { $0 = true }
                writeError("\r\u{1B}[K" + Self.bar(for: progress))
            }
        }

        func render(_ progress: SnapshotProgress) {
            switch mode {
            case .quiet: return
            case .json:
                printJSON(
                    JSONEvent(
                        event: "progress", phase: progress.phase.rawValue, bytes: progress.bytesCompleted,
                        total: progress.totalBytes, bytesPerSecond: progress.bytesPerSecond.rounded(),
                        etaSeconds: progress.estimatedSecondsRemaining.map { ($0 * 10).rounded() / 10 },
                        connections: progress.activeConnections > 0 ? progress.activeConnections : nil,
                        alreadyPresent: progress.alreadyCached ? true : nil, files: progress.filesCompleted,
                        totalFiles: progress.totalFiles, currentFile: progress.currentFile,
                        waiting: Self.waitText(progress), endpoint: progress.endpoint,
                        xetFiles: progress.xetFiles > 0 ? progress.xetFiles : nil,
                        xetBytesFromNetwork: progress.xetFiles > 0 ? progress.xetBytesFromNetwork : nil,
                        xetBytesFromDisk: progress.xetFiles > 0 ? progress.xetBytesFromDisk : nil))
            case .plain:
                waits.update(Self.waitText(progress), isServerWait: progress.waiting?.isServerWait == true)
                let newEndpoint = endpointShown.withLock { shown -> String? in
                    guard let endpoint = progress.endpoint, shown != nil, shown != endpoint else {
                        if shown == nil { shown = progress.endpoint }
                        return nil
                    }
                    shown = endpoint
                    return endpoint
                }
                if let newEndpoint { writeError("files now come from \(newEndpoint)\n") }
                let phaseChanged = snapshotPhase.withLock { last in
                    defer { last = progress.phase }
                    return last != progress.phase
                }
                if phaseChanged && progress.phase == .downloading {
                    let size = progress.totalBytes.map(ByteFormat.string) ?? "?"
                    writeError(
                        "\(counted(progress.totalFiles, "file")), \(size); \(progress.filesCompleted) already in the cache\n"
                    )
                }
            case .bar:
                guard progress.phase != .resolving || progress.waiting != nil else { return }
                barShown.withLock { $0 = true }
                writeError("\r\u{1B}[K" + Self.bar(for: progress))
            }
        }

        /// `model.gguf: retrying in 2.0 s (attempt 2 of 8): …`, or the wait alone when it is the Hub's API.
        static func waitText(_ progress: SnapshotProgress) -> String? {
            guard let waiting = progress.waiting else { return nil }
            return progress.waitingFile.map { "\($0): \(waiting)" } ?? waiting.description
        }

        /// One line: `[#####-----]  50%  1.0 GiB / 2.0 GiB  3/41 files  120.0 MiB/s  ETA 0:09  model.gguf`.
        static func bar(for progress: SnapshotProgress, width: Int = 24) -> String {
            let fraction = progress.fractionCompleted ?? 0
            let filled = Int((fraction * Double(width)).rounded(.down))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            var parts = ["[\(bar)]", String(format: "%3d%%", Int(fraction * 100))]
            parts.append(
                ByteFormat.string(progress.bytesCompleted)
                    + (progress.totalBytes.map { " / " + ByteFormat.string($0) } ?? ""))
            parts.append("\(progress.filesCompleted)/\(progress.totalFiles) files")
            parts.append(ByteFormat.string(Int64(progress.bytesPerSecond)) + "/s")
            if let eta = progress.estimatedSecondsRemaining, eta.isFinite, progress.phase == .downloading {
                parts.append(String(format: "ETA %d:%02d", Int(eta) / 60, Int(eta) % 60))
            }
            if let waiting = waitText(progress) {
                parts.append(String(waiting.prefix(100)))
            } else if let file = progress.currentFile {
                parts.append(String(file.suffix(40)))
            }
            return parts.joined(separator: "  ")
        }

        /// Prints a pulled snapshot: a JSON object, or the snapshot folder as the last line on stdout.
        /// Prints a pull's result: the snapshot folder as the last line on stdout, or with `named` (files the pull
        /// named, as `hf download REPO FILE…`) each selected file's path in it instead.
        func finish(_ snapshot: Snapshot, named: Bool = false) {
            finishLine()
            let paths = named ? snapshot.files.map { snapshot.folder.appendingPathComponent($0.value).path } : nil
            if mode == .json {
                printJSON(
                    JSONEvent(
                        event: "completed", path: snapshot.folder.path, bytesReceived: snapshot.bytesDownloaded,
                        message: snapshot.answeredFromCacheBecause, files: snapshot.files.count,
                        repo: snapshot.repo.description, commit: snapshot.commit,
                        filesDownloaded: snapshot.filesDownloaded,
                        paths: paths)
                )
            } else {
                if let reason = snapshot.answeredFromCacheBecause {
                    writeError("warning: answered from the cache without checking the Hub: \(reason)\n")
                }
                if mode != .quiet {
                    writeError(
                        "\(snapshot.repo) @ \(snapshot.commit.prefix(12)): \(counted(snapshot.files.count, "file")), \(snapshot.filesDownloaded) downloaded (\(ByteFormat.string(snapshot.bytesDownloaded)))\n"
                    )
                }
                for path in paths ?? [snapshot.folder.path] { print(path) }
            }
        }

        /// One line: `[#####-----]  50%  128.0 MiB / 256.0 MiB  1.2 GiB/s  ETA 0:03  8 conn`.
        static func bar(for progress: DownloadProgress, width: Int = 24) -> String {
            let fraction = progress.fractionCompleted ?? 0
            let filled = Int((fraction * Double(width)).rounded(.down))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            var parts = ["[\(bar)]", String(format: "%3d%%", Int(fraction * 100))]
            let total = progress.totalBytes.map { " / " + ByteFormat.string($0) } ?? ""
            parts.append(ByteFormat.string(progress.bytesCompleted) + total)
            parts.append(ByteFormat.string(Int64(progress.bytesPerSecond)) + "/s")
            if let eta = progress.estimatedSecondsRemaining, eta.isFinite {
                parts.append(String(format: "ETA %d:%02d", Int(eta) / 60, Int(eta) % 60))
            }
            parts.append("\(progress.activeConnections) conn")
            if let waiting = progress.waiting {
                parts.append(String(waiting.description.prefix(100)))
            } else if progress.phase != .downloading {
                parts.append(progress.phase.rawValue)
            }
            return parts.joined(separator: "  ")
        }

        /// Ends the bar's line so the next output starts on a fresh one.
        func finishLine() {
            if barShown.withLock({ $0 }) { writeError("\n") }
        }

        /// Prints the result: a JSON object, or the absolute path as the last line on stdout.
        func finish(_ result: DownloadResult) {
            finishLine()
            if mode == .json {
                printJSON(
                    JSONEvent(
                        event: "completed", bytes: result.size, total: result.size, path: result.file.path,
                        sha256: result.sha256,
                        bytesReceived: result.bytesReceived, bytesResumed: result.bytesResumed,
                        alreadyPresent: result.wasAlreadyPresent))
            } else {
                print(result.file.path)
            }
        }

        func printJSON(_ event: JSONEvent) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            guard let data = try? encoder.encode(event) else { return }
            StandardStreams.output(data + Data("\n".utf8))
        }

        private func writeError(_ text: String) {
            StandardStreams.error(Data(text.utf8))
        }
    }

    /// One line of `--json` output. Absent fields are omitted.
    struct JSONEvent: Encodable {
        var event: String
        var phase: String?
        var bytes: Int64?
        var total: Int64?
        var bytesPerSecond: Double?
        var etaSeconds: Double?
        var connections: Int?
        var path: String?
        var sha256: String?
        var bytesReceived: Int64?
        var bytesResumed: Int64?
        var alreadyPresent: Bool?
        var code: String?
        var message: String?
        var files: Int?
        var totalFiles: Int?
        var currentFile: String?
        var repo: String?
        var commit: String?
        var filesDownloaded: Int?
        /// The named files' paths in the snapshot, when a pull named files.
        var paths: [String]?
        /// Why the transfer is not moving right now ("waiting for host:port", "retrying in 4 s …").
        var waiting: String?
        /// The server files come from (`host:port`): the Hub, or the mirror in use.
        var endpoint: String?
        /// Files pulled through Xet, and their bytes from the network and copied from disk.
        var xetFiles: Int?
        var xetBytesFromNetwork: Int64?
        var xetBytesFromDisk: Int64?
        /// The manifest digest of an artifact pulled from an OCI registry.
        var digest: String?

        init(
            event: String, phase: String? = nil, bytes: Int64? = nil, total: Int64? = nil,
            bytesPerSecond: Double? = nil,
            etaSeconds: Double? = nil, connections: Int? = nil, path: String? = nil, sha256: String? = nil,
            bytesReceived: Int64? = nil, bytesResumed: Int64? = nil, alreadyPresent: Bool? = nil, code: String? = nil,
            message: String? = nil, files: Int? = nil, totalFiles: Int? = nil, currentFile: String? = nil,
            repo: String? = nil, commit: String? = nil, filesDownloaded: Int? = nil, paths: [String]? = nil,
            waiting: String? = nil, endpoint: String? = nil, xetFiles: Int? = nil, xetBytesFromNetwork: Int64? = nil,
            xetBytesFromDisk: Int64? = nil
        ) {
            self.xetFiles = xetFiles
            self.xetBytesFromNetwork = xetBytesFromNetwork
            self.xetBytesFromDisk = xetBytesFromDisk
            self.endpoint = endpoint
            self.paths = paths
            self.waiting = waiting
            self.files = files
            self.totalFiles = totalFiles
            self.currentFile = currentFile
            self.repo = repo
            self.commit = commit
            self.filesDownloaded = filesDownloaded
            self.event = event
            self.phase = phase
            self.bytes = bytes
            self.total = total
            self.bytesPerSecond = bytesPerSecond
            self.etaSeconds = etaSeconds
            self.connections = connections
            self.path = path
            self.sha256 = sha256
            self.bytesReceived = bytesReceived
            self.bytesResumed = bytesResumed
            self.alreadyPresent = alreadyPresent
            self.code = code
            self.message = message
        }

        /// The result of an `oci://` pull.
        init(ociPull result: OCIPullResult) {
            self.init(
                event: "done", path: result.folder, bytesReceived: result.bytesDownloaded, files: result.files.count,
                repo: result.repo, commit: result.commit, filesDownloaded: result.filesDownloaded)
            digest = result.digest
        }
    }
#endif
