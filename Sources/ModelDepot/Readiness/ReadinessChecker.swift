import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust

/// Decides whether models in a cache are ready to load, cheaply: presence from the snapshot and the file list
/// recorded at pull time, format checks from file headers, and hash verification from
/// remembered verification (a re-hash only with `verifying: true`, and only of blobs not yet verified).
package struct ReadinessChecker: Sendable {
    /// The cache the checker reads.
    package let cache: HubCache

    /// A checker over `cache`.
    package init(cache: HubCache) {
        self.cache = cache
    }

    /// The readiness of a catalog entry: its variant's files and every path it requires.
    package func check(_ entry: CatalogEntry, verifying: Bool = false) throws -> ReadinessReport {
        let request = entry.snapshotRequest
        return try check(
            name: entry.name, repo: entry.repo, type: entry.repoType, revision: request.revision,
            selection: request.selection, required: entry.required, verifying: verifying)
    }

    /// The readiness of a repository at a revision: every file of its recorded tree that `selection` selects.
    package func check(
        _ repo: RepoID, type: RepoType = .model, revision: String = "main", selection: FileSelection = .everything,
        verifying: Bool = false
    ) throws -> ReadinessReport {
        try check(
            name: repo.description, repo: repo, type: type, revision: revision, selection: selection, required: [],
            verifying: verifying)
    }

    /// The Core ML models (`.mlmodel`, `.mlpackage`) of a checked model that are downloaded but have no compiled
    /// `.mlmodelc` for `platformKey` (``ModelCompiler/platformKey``) yet: "downloaded" is not "compiled".
    package func uncompiledModels(in report: ReadinessReport, type: RepoType = .model, platformKey: String) -> [String]
    {
        guard let commit = report.commit else { return [] }
        let repository = cache.repository(report.repo, type: type)
        let files = report.files.compactMap { try? RepoFilePath($0) }
        return CompiledModels.sources(in: files).filter {
            !FileManager.default.fileExists(
                atPath: CompiledModels.location(of: $0, in: repository, commit: commit, platform: platformKey).path)
        }
    }

    private func check(
        name: String, repo: RepoID, type: RepoType, revision: String, selection: FileSelection, required: [String],
        verifying: Bool
    ) throws -> ReadinessReport {
        let repository = cache.repository(repo, type: type)
        var report = ReadinessReport(
            name: name, repo: repo, revision: revision, commit: nil, readiness: .notDownloaded, files: required,
            details: [:], folder: nil)
        guard let commit = repository.commit(forRevision: revision),
            FileStatus(path: repository.snapshotFolder(commit).path, followingLinks: true)?.kind == .folder
        else {
            report.readiness = inProgress(repository) ? .downloading(missing: required) : .notDownloaded
            return report
        }
        report.commit = commit
        let folder = repository.snapshotFolder(commit)
        report.folder = folder
        let tree = repository.recordedTree(commit)
        let expected: [RepoFilePath: RecordedTree.File?]
        if let tree {
            expected = tree.files.filter { selection.selects($0.key.value) }.mapValues { $0 }
        } else {
            expected = Dictionary(
                uniqueKeysWithValues: CacheScanner.repositoryFiles(below: folder).filter { selection.selects($0.value) }
                    .map { ($0, nil) })
        }
        report.files = Array(Set(expected.keys.map(\.value) + required)).sorted()

        // Presence.
        var missing = expected.keys.filter { !repository.hasFile($0, commit: commit) }.map(\.value)
        missing += required.filter { !FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path) }
        missing = Array(Set(missing)).sorted()
        let present = expected.keys.filter { repository.hasFile($0, commit: commit) }.sorted()
        if !missing.isEmpty {
            if inProgress(repository) {
                report.readiness = .downloading(missing: missing)
            } else {
                report.readiness = present.isEmpty ? .notDownloaded : .partial(missing: missing)
            }
            return report
        }

        // Damage: sizes against the recorded tree, formats by their headers, remembered hash failures.
        var memory = VerificationMemory(repository: repository)
        var corrupt: [String: String] = [:]
        var unverified: [String] = []
        for path in present {
            let file = folder.appendingPathComponent(path.value).path
            let blob = CacheScanner.blobPath(of: file)
            if let recorded = expected[path] ?? nil, let size = CacheScanner.regularFileSize(blob),
                size != recorded.size
            {
                corrupt[path.value] = "size \(size) bytes, \(recorded.size) expected"
                continue
            }
            do {
                if let detail = try ModelFileSummary.read(path: file)?.description {
                    report.details[path.value] = detail
                } else if PickleFile.mayBePickle(file), let pickle = try PickleFile.inspect(URL(fileURLWithPath: file))
                {
                    report.details[path.value] = pickle.summary
                    report.pickles.append(path.value)
                }
            } catch let problem as ModelDepotError where problem.code == .invalidModelFile {
                corrupt[path.value] = problem.message
                continue
            }
            var outcome = memory.outcome(forBlob: blob)
            if outcome == nil, verifying {
                outcome = try Self.hashMatchesName(blob)
                if let outcome { memory.remember(blob: blob, ok: outcome) }
            }
            switch outcome {
            case false?: corrupt[path.value] = "its content does not hash to its blob name"
            case nil: unverified.append(path.value)
            default: break
            }
        }
        for part in required where part.hasSuffix(".mlmodelc") {
            do {
                let files = try CoreMLBundleCheck.check(folder: folder.appendingPathComponent(part).path)
                report.details[part] = "Core ML model, \(files.count) files"
            } catch let problem as ModelDepotError where problem.code == .invalidModelFile {
                corrupt[part] = problem.message
            }
        }
        if verifying { memory.save() }
        if !corrupt.isEmpty {
            report.readiness = .corrupt(corrupt)
        } else if !unverified.isEmpty {
            report.readiness = .unverified(unverified)
        } else {
            report.readiness = .ready
        }
        return report
    }

    /// Whether a download into this repository is under way or can resume: partial blobs in `blobs/`.
    private func inProgress(_ repository: CachedRepository) -> Bool {
        Directory.names(repository.blobsFolder.path).contains { $0.hasSuffix(".incomplete") }
    }

    /// Checks a file's format (by its extension, and any file for a Python pickle by its bytes); returns a one-line
    /// summary, nil for formats it does not read.
    package static func inspect(_ path: String) throws -> String? {
        if let summary = try ModelFileSummary.read(path: path) { return summary.description }
        return PickleFile.mayBePickle(path) ? try PickleFile.inspect(URL(fileURLWithPath: path))?.summary : nil
    }

    /// Hashes a blob against its name (64 hex: SHA-256, 40 hex: git blob id); nil for names that are not hashes.
    static func hashMatchesName(_ blob: String) throws -> Bool? {
        try FileDigests.digestPromisedByName(ofBlobAt: blob).map { $0 == (blob as NSString).lastPathComponent }
    }
}
