import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotOCI
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust
import Synchronization

extension ModelManager {
    /// The pull into a plain folder: staged in `.cache/modeldepot/oci/`, checked, then each file copied into place.
    /// Every destination is checked before any is written: inside the folder, not through a symbolic link, not a
    /// folder, not inside `.git` or the bookkeeping under `.cache/`.
    nonisolated func pullModelPack(
        _ artifact: ModelPackArtifact, from reference: OCIReference, client: RegistryClient, into folder: URL,
        unpacked: [RepoFilePath: URL], policy: DownloadPolicy, progress: @escaping @Sendable (Int64, Int64) -> Void
    ) async throws -> OCIPullResult {
        let root = folder.standardizedFileURL
        for file in artifact.files {
            try LocalDirectory.checkNotGit(file.path)
            if let first = file.path.components.first, LocalDirectory.foldedName(first) == ".cache" {
                throw ModelDepotError(
                    .protocolViolation,
                    "\(reference) names \(file.path), inside the folder's .cache/ bookkeeping; refusing it.")
            }
        }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let paths = artifact.files.map(\.path)
        try await BlockingWork.run { try Self.checkDestinations(paths, in: root) }
        let staging = root.appendingPathComponent(".cache/modeldepot/oci", isDirectory: true)
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        let work = artifact.files.filter { unpacked[$0.path] == nil }
        // The layers staged, then each file copied into place.
        try checkSpace(for: artifact.files + work, in: root, name: reference.description)
        let total = work.reduce(Int64(0)) { $0 + $1.size }
        var (blobs, fetched, received) = try await fetchModelPackLayers(
            work, from: reference, client: client, total: total, progress: progress, verifiesExisting: true
        ) { file in
            let blob = staging.appendingPathComponent(file.digest.hex)
            return (
                blob, staging.appendingPathComponent(file.digest.hex + ".incomplete"),
                staging.appendingPathComponent(file.digest.hex + ".lock"), file.lfs ? nil : file.blobID
            )
        }
        blobs.merge(unpacked) { fetchedURL, _ in fetchedURL }
        fetched += unpacked.values
        let staged = blobs
        do {
            try await holdModelPack(blobs, to: policy, name: reference.description)
            try await BlockingWork.run {
                // Checked again right before writing: nothing put a link in the way meanwhile.
                try Self.checkDestinations(artifact.files.map(\.path), in: root)
                for file in artifact.files {
                    let destination = root.appendingPathComponent(file.path.value)
                    try FileManager.default.createDirectory(
                        at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                    // A copy, not a move: the staged blob may serve two paths with the same bytes. The temporary's
                    // name is this pull's own, so two pulls into one folder never rename each other's half-copy.
                    let temporary = destination.deletingLastPathComponent().appendingPathComponent(
                        ".\(destination.lastPathComponent).\(UUID().uuidString).modeldepot-oci.incomplete")
                    do {
                        try FileManager.default.copyItem(atPath: staged[file.path]!.path, toPath: temporary.path)
                        try AtomicFile.moveIntoPlace(temporary.path, atPath: destination.path)
                    } catch {
                        try? FileManager.default.removeItem(at: temporary)
                        throw error
                    }
                }
            }
            for url in Set(blobs.values) { try? FileManager.default.removeItem(at: url) }
            // The staging folder goes when nothing else (another pull's partial or lock) is in it.
            if Directory.names(staging.path).isEmpty { try? FileManager.default.removeItem(at: staging) }
        } catch {
            for url in fetched { try? FileManager.default.removeItem(at: url) }
            throw error
        }
        return OCIPullResult(
            reference: reference.description, digest: reference.digest!.description,
            repo: artifact.hub?.repo.description,
            commit: artifact.hub?.commit, folder: root.path, files: artifact.files.map(\.path.value),
            filesDownloaded: fetched.count, bytesDownloaded: received)
    }

    /// Refuses to write `paths` under `root` where a symbolic link (or a file standing where a folder must be) is
    /// in the way, or where a folder is where the file goes: a pull never writes through a link it did not make.
    static func checkDestinations(_ paths: [RepoFilePath], in root: URL) throws {
        for path in paths {
            var current = root
            let components = path.components
            for (index, component) in components.enumerated() {
                current = current.appendingPathComponent(component)
                guard let status = FileStatus(path: current.path, followingLinks: false) else { break }
                let last = index == components.count - 1
                if status.kind == .link {
                    throw ModelDepotError(
                        .fileSystem,
                        "\(current.path) is a symbolic link; the pull does not write \(path) through it. Remove the link, or pull into another folder."
                    )
                }
                if last, status.kind == .folder {
                    throw ModelDepotError(
                        .fileSystem, "\(current.path) is a folder; the artifact's file \(path) cannot go there.")
                }
                if !last, status.kind != .folder {
                    throw ModelDepotError(
                        .fileSystem, "\(current.path) is a file; the artifact's \(path) needs a folder there.")
                }
            }
        }
    }
}
