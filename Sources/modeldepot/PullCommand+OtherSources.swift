#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot

    /// The sources `pull` takes besides a repository: a lock file, catalog names and presets, and a plain URL.
    extension PullCommand {
        /// `--locked FILE`: every repository of the lock at its commit, checked against it before and after.
        func pullLocked(_ path: String) async throws {
            let lock = try ModelLock.load(URL(fileURLWithPath: path))
            let network = try hub.network()
            let snapshots = try await manager().download(lock: lock) { [registry] in
                try registry.client(for: $0, network: network)
            }.result()
            if outputOptions.json {
                printJSON([
                    "snapshots": snapshots.map {
                        ["repo": $0.repo.description, "commit": $0.commit, "folder": $0.folder.path]
                    }
                ])
                return
            }
            for (repository, snapshot) in zip(lock.repositories, snapshots) {
                printStatus(
                    "\(repository.repo) @ \(repository.commit.prefix(12)): \(counted(repository.files.count, "file")) match the lock (\(snapshot.filesDownloaded) downloaded)"
                )
                print(snapshot.folder.path)
            }
        }

        /// A catalog entry pulls exactly its variant's files at its pinned revision; a preset pulls each entry.
        func pullCatalogEntries(_ entries: [CatalogEntry], renderer: ProgressRenderer) async throws {
            guard include.isEmpty, exclude.isEmpty, files.isEmpty, localDir == nil else {
                throw ModelDepotError(
                    .invalidArgument,
                    "--include/--exclude, --local-dir and file names do not apply to catalog names: '\(source)' already selects its files. Pull the repository (org/name) to choose files yourself."
                )
            }
            let models = try await manager()
            for entry in entries {
                var request = entry.snapshotRequest
                request.revision = revision ?? request.revision
                request.forceDownload = forceDownload
                request.xet = xet
                if dryRun {
                    try await render(models.plan(request), request, with: models)
                    continue
                }
                renderer.finish(try await download(request, with: models, renderer: renderer))
            }
        }

        func pullURL(renderer: ProgressRenderer) async throws {
            guard let source = URL(string: source), source.scheme != nil else {
                throw ModelDepotError(.invalidURL, "'\(source)' is not a URL; give a full http:// or https:// URL.")
            }
            let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            let destination = try ModelManager.destination(
                for: source, output: output.map { URL(fileURLWithPath: $0, relativeTo: cwd).standardizedFileURL },
                in: cwd)
            let models = try await manager(fetchesHubFiles: false)
            let result = try await CancellableRun.run {
                try await models.downloadFile(from: source, to: destination, sha256: sha256) { renderer.render($0) }
            }
            renderer.finish(result)
        }
    }
#endif
