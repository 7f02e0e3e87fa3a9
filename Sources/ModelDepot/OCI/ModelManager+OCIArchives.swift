import Crypto
import Foundation
import ModelDepotCore
import ModelDepotOCI
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust

extension ModelManager {
    /// The largest `tar+gzip` layer unpacked (it is expanded in memory), and the most it may expand to.
    static let maximumGzipLayer: Int64 = 64 << 20
    static let maximumGzipExpansion = 256 << 20
    /// The most files one tar layer may hold.
    static let maximumTarMembers = 4096

    /// Downloads the tar layers of an artifact (olot's, modctl's, KitOps') into `staging`, each checked against its
    /// digest, and unpacks their files through the hardened tar reader (``TarArchive``: regular files and folders
    /// only, no name that leaves the model folder; olot's `models/` prefix dropped), each file named by its SHA-256
    /// (`staging/<sha256>`). Paths already taken by `taken` (the raw layers) or by another archive are refused.
    ///
    /// - Returns: the files, as raw layers would name them, and where each is staged; plus every file written.
    nonisolated func unpackModelPackArchives(
        _ archives: [ModelPackArtifact.ArchiveLayer], from reference: OCIReference, client: RegistryClient,
        into staging: URL, taken: Set<RepoFilePath>
    ) async throws -> (files: [(ModelPackArtifact.File, URL)], written: [URL]) {
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        // The layers, then what they hold (a gzip layer's up to its expansion limit).
        let spaceNeeded = try archives.map { archive -> ModelPackArtifact.File in
            let size = archive.gzip ? Int64(Self.maximumGzipExpansion) : archive.descriptor.size
            return ModelPackArtifact.File(
                path: try RepoFilePath("layer-\(archive.descriptor.digest.hex)"), size: archive.descriptor.size + size,
                digest: archive.descriptor.digest, blobID: nil, lfs: true)
        }
        try checkSpace(for: spaceNeeded, in: staging, name: reference.description)
        for archive in archives where archive.gzip && archive.descriptor.size > Self.maximumGzipLayer {
            throw ModelDepotError(
                .protocolViolation,
                "\(reference) has a tar+gzip layer of \(ByteFormat.string(archive.descriptor.size)) (\(archive.descriptor.digest)); gzip layers over \(ByteFormat.string(Self.maximumGzipLayer)) are not unpacked. Push weights uncompressed (raw or tar layers)."
            )
        }
        let layers = try archives.map {
            ModelPackArtifact.File(
                path: try RepoFilePath("layer-\($0.descriptor.digest.hex)"), size: $0.descriptor.size,
                digest: $0.descriptor.digest, blobID: nil, lfs: true, mediaType: $0.descriptor.mediaType)
        }
        let (downloaded, fetched, _) = try await fetchModelPackLayers(
            layers, from: reference, client: client, total: layers.reduce(0) { $0 + $1.size }, progress: { _, _ in }
        ) { layer in
            (
                staging.appendingPathComponent(layer.digest.hex + ".layer"),
                staging.appendingPathComponent(layer.digest.hex + ".layer.incomplete"),
                staging.appendingPathComponent(layer.digest.hex + ".layer.lock"), nil
            )
        }
        var written = fetched
        do {
            var files: [(ModelPackArtifact.File, URL)] = []
            var seen = taken
            for (archive, layer) in zip(archives, layers) {
                let tar = downloaded[layer.path]!
                let name = "a tar layer of \(reference) (\(archive.descriptor.digest))"
                let unpacked = try await BlockingWork.run {
                    try Self.unpack(
                        tar, gzip: archive.gzip, name: name, modelcarLayout: !archive.namedByFilePath, into: staging)
                }
                written += unpacked.written
                for (path, size, sha256, url) in unpacked.files {
                    guard seen.insert(path).inserted else {
                        throw ModelDepotError(.protocolViolation, "\(reference) names \(path) twice (in \(name)).")
                    }
                    files.append(
                        (
                            ModelPackArtifact.File(
                                path: path, size: size, digest: OCIDigest(sha256Hex: sha256)!, blobID: nil, lfs: true),
                            url
                        ))
                }
            }
            for url in Set(downloaded.values) {
                try? FileManager.default.removeItem(at: url)
                try? FileManager.default.removeItem(atPath: url.path + ".lock")
            }
            return (files, written)
        } catch {
            for url in written { try? FileManager.default.removeItem(at: url) }
            for url in downloaded.values { try? FileManager.default.removeItem(atPath: url.path + ".lock") }
            throw error
        }
    }

    /// The files of the tar (or gzipped tar) at `url`, copied out into `staging/<sha256>`. Off the cooperative pool.
    /// `modelcarLayout`: the files sit under `models/` (olot's layers, named by their title alone).
    static func unpack(_ url: URL, gzip: Bool, name: String, modelcarLayout: Bool, into staging: URL) throws -> (
        files: [(RepoFilePath, Int64, String, URL)], written: [URL]
    ) {
        var tar = url
        var written: [URL] = []
        if gzip {
            guard let compressed = FileManager.default.contents(atPath: url.path) else {
                throw ModelDepotError(.fileSystem, "Cannot read \(name) at \(url.path).")
            }
            let expanded: [UInt8]
            do {
                expanded = try GzipMember.decompress(Array(compressed), limit: maximumGzipExpansion)
            } catch {
                throw ModelDepotError(.protocolViolation, "\(name) is not a gzip layer this reads: \(error.reason).")
            }
            tar = url.appendingPathExtension("tar")
            try Data(expanded).write(to: tar)
            written.append(tar)
        }
        defer { if gzip { try? FileManager.default.removeItem(at: tar) } }
        let members = try TarArchive.members(
            of: tar, what: "a tar layer ModelDepot unpacks (\(name))", inside: "the model folder",
            strippingPrefixes: modelcarLayout ? ["/models/", "models/"] : [], maximumMembers: maximumTarMembers
        ) { (try? RepoFilePath($0)) != nil }
        var files: [(RepoFilePath, Int64, String, URL)] = []
        let input = try FileHandle(forReadingFrom: tar)
        defer { try? input.close() }
        for member in members {
            let path = try RepoFilePath(member.name)
            let temporary = staging.appendingPathComponent(UUID().uuidString + ".unpacking")
            guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
                throw ModelDepotError(.fileSystem, "Cannot write \(temporary.path).")
            }
            written.append(temporary)
            let output = try FileHandle(forWritingTo: temporary)
            var hasher = SHA256()
            try input.seek(toOffset: UInt64(member.offset))
            var left = member.size
            while left > 0 {
                let chunk = try input.read(upToCount: Int(min(left, 4 << 20))) ?? Data()
                guard !chunk.isEmpty else { throw ModelDepotError(.protocolViolation, "\(name) is cut short.") }
                hasher.update(data: chunk)
                try output.write(contentsOf: chunk)
                left -= Int64(chunk.count)
            }
            try output.close()
            let sha256 = hasher.finalize().map { String(format: "%02x", $0) }.joined()
            let staged = staging.appendingPathComponent(sha256)
            try AtomicFile.moveIntoPlace(temporary.path, atPath: staged.path)
            written.append(staged)
            files.append((path, member.size, sha256, staged))
        }
        return (files, written)
    }
}
