#if os(Linux) || os(macOS)
    import Foundation
    import ModelDepot

    extension PullCommand {
        /// `--dry-run`: the plan as a table on stdout (pickles marked), or as one JSON object with `--json`.
        func render(_ plan: SnapshotPlan, _ request: SnapshotRequest, with models: ModelManager) async throws {
            var pickles: [PickleFinding] = []
            do {
                pickles = try await models.pickles(
                    in: request.repo, type: request.type, commit: plan.commit, paths: plan.files.map(\.path))
            } catch {
                printStatus("pickle check skipped: \(error)")
            }
            if outputOptions.json {
                struct Report: Encodable {
                    var plan: SnapshotPlan
                    var pickles: [[String: String]]
                    func encode(to encoder: any Encoder) throws {
                        try plan.encode(to: encoder)
                        var container = encoder.container(keyedBy: Key.self)
                        try container.encode(pickles, forKey: Key(stringValue: "pickles")!)
                    }
                    struct Key: CodingKey {
                        var stringValue: String
                        var intValue: Int? { nil }
                        init?(stringValue: String) { self.stringValue = stringValue }
                        init?(intValue: Int) { nil }
                    }
                }
                printJSON(
                    Report(
                        plan: plan,
                        pickles: pickles.map {
                            ["path": $0.path, "summary": $0.file.summary, "dangerous": "\($0.file.isDangerous)"]
                        }))
                return
            }
            let toFetch = plan.files.filter(\.willDownload)
            print(
                "\(plan.repo) @ \(plan.commit.prefix(12)): \(counted(plan.files.count, "file")), \(ByteFormat.string(plan.totalBytes)); \(toFetch.count) to download (\(ByteFormat.string(plan.downloadBytes))), \(plan.files.count(where: \.cached)) cached"
            )
            for file in plan.files {
                let state = file.willDownload ? (file.cached ? "again" : "download") : "cached"
                let size = ByteFormat.string(file.size)
                let column = String(repeating: " ", count: max(0, 11 - size.count)) + size
                let flag = pickles.contains { $0.path == file.path } ? "  [pickle: can run code when loaded]" : ""
                print("  \(state.padding(toLength: 9, withPad: " ", startingAt: 0))\(column)  \(file.path)\(flag)")
            }
            for finding in pickles { print("pickle: \(finding)") }
            if let after = plan.freeBytesAfter {
                print(
                    after >= 0
                        ? "free space after: \(ByteFormat.string(after))"
                        : "does not fit: \(ByteFormat.string(-after)) more space needed")
            }
        }
    }
#endif
