import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotTrust

/// A pickle found among a repository's files.
public struct PickleFinding: Sendable, Equatable {
    /// Its path in the repository.
    public var path: String
    /// What it is; its imports are known when the file is cached (only its first bytes are read otherwise).
    public var file: PickleFile
    /// Safetensors files beside it, which usually hold the same weights without the risk.
    public var safetensorsAlternatives: [String]

    /// What it is and what to use instead, for people.
    public var detail: String {
        guard !safetensorsAlternatives.isEmpty else { return file.summary }
        return
            "\(file.summary); the same folder has \(safetensorsAlternatives.joined(separator: ", ")) (safetensors: cannot run code)"
    }

    /// One line for people: the path and the detail.
    public var description: String { "\(path): \(detail)" }
}

extension ModelManager {
    /// Which of `paths` at `commit` are Python pickles, judged by their bytes: a cached file is read (its imports
    /// listed); another is probed with a `Range` request for its first bytes. Files whose extension names a format
    /// that is never a pickle (JSON, safetensors, GGUF, …) are not probed.
    ///
    /// - Throws: the Hub's errors for a probe; `invalidModelFile` for a cached pickle that cannot be judged.
    public nonisolated func pickles(
        in repo: RepoID, type: RepoType = .model, commit: String, paths: [String]
    ) async throws -> [PickleFinding] {
        let repository = cache.repository(repo, type: type)
        let candidates = paths.filter(PickleFile.mayBePickle)
        var found: [String: PickleFile] = [:]
        try await withThrowingTaskGroup(of: (String, PickleFile?).self) { group in
            var next = candidates.makeIterator()
            func add() -> Bool {
                guard let path = next.next() else { return false }
                group.addTask { [pull] in
                    let filePath = try RepoFilePath(path)
                    if repository.hasFile(filePath, commit: commit) {
                        // Up to 256 MiB read and walked: off the cooperative pool.
                        let file = repository.snapshotFile(commit, filePath)
                        return (path, try await BlockingWork.run { try PickleFile.inspect(file) })
                    }
                    return (path, try await Self.probe(pull.hub, repo, type: type, commit: commit, path: filePath))
                }
                return true
            }
            for _ in 0..<8 where add() {}
            while let (path, file) = try await group.next() {
                if let file { found[path] = file }
                _ = add()
            }
        }
        return found.keys.sorted().map { path in
            let folder = (path as NSString).deletingLastPathComponent
            let alternatives = paths.filter {
                ($0 as NSString).deletingLastPathComponent == folder && $0.hasSuffix(".safetensors")
            }
            return PickleFinding(path: path, file: found[path]!, safetensorsAlternatives: alternatives.sorted())
        }
    }

    /// Judges a file that is not pulled by ranged reads: its first bytes, and what they lead to — a ZIP's central
    /// directory at its end (which a prefix cannot show, and which may name a `data.pkl` anywhere), the headers of
    /// `.npy` entries. A file that cannot be read far enough counts as a pickle that cannot be judged.
    nonisolated static func probe(
        _ hub: HubClient, _ repo: RepoID, type: RepoType, commit: String, path: RepoFilePath
    ) async throws -> PickleFile? {
        let first = try await hub.bytes(
            repo, type: type, revision: commit, path: path, offset: 0, count: PickleFile.sniffLength)
        let shortFile = first.bytes.count < PickleFile.sniffLength ? Int64(first.bytes.count) : nil
        guard let size = first.fileSize ?? shortFile else { return PickleFile.sniff(first.bytes) }
        var source = ProbedBytes(size: size)
        source.add(first.bytes, at: 0)
        var fetched = first.bytes.count
        while fetched <= 16 << 20 {
            do {
                return try PickleFile.examine(source, name: path.description, probing: true)
            } catch let missing as ProbedBytes.Missing {
                // At least 64 KiB at a time: a ZIP's end record sits in its last 64 KiB, a local header before data.
                let count = min(max(missing.count, PickleFile.sniffLength), 16 << 20)
                let offset = max(0, min(missing.offset, size - Int64(count)))
                let piece = try await hub.bytes(
                    repo, type: type, revision: commit, path: path, offset: offset, count: count)
                guard piece.bytes.count == Int(min(Int64(count), size - offset)) else { break }
                source.add(piece.bytes, at: offset)
                fetched += count
            } catch let error as ModelDepotError where error.code == .invalidModelFile {
                return PickleFile(container: .raw(protocol: 0), imports: [PickleFile.unjudged(error)])
            }
        }
        let unread = ModelDepotError(.invalidModelFile, "\(path) could not be read far enough to be judged.")
        return PickleFile(container: .raw(protocol: 0), imports: [PickleFile.unjudged(unread)])
    }

    /// Throws `unsafeFormat` naming each pickle; nothing when there is none.
    static func refuse(_ findings: [PickleFinding], of repo: RepoID) throws {
        guard !findings.isEmpty else { return }
        throw ModelDepotError(
            .unsafeFormat,
            "\(repo) selects Python pickles, which can run code when loaded, and the policy refuses them: \(findings.map(\.description).joined(separator: "; ")). Exclude them (--exclude), or pull without --refuse-pickle if you trust the publisher."
        )
    }
}
