#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot
    import ModelDepotCore

    struct ExportCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write the cached files a lock names, and the lock, into a folder to carry to another machine.",
            discussion: """
                Every file is checked against the lock first (a cache that differs is refused: run \
                `pull --locked` first). The folder holds modeldepot.lock and models/<org>/<name>/<path>; \
                `modeldepot import FOLDER` places it in another machine's cache, offline. With --layout app the \
                folder is for an app's resources (add it as Models): one read-only folder per repository, \
                models--<org>--<name>/<path>, read in place by the app's ModelManager (BundledModels) and verified \
                once per build.
                """)

        @Option(help: "The lock file whose models to export.")
        var lock: String

        @Option(help: "A new or empty folder to write the bundle into.")
        var to: String?

        @Option(help: "A tar file to write the bundle into instead of a folder.")
        var archive: String?

        @Option(help: "How the folder is arranged: bundle (to import into a cache) or app (to ship inside an app).")
        var layout: ModelBundle.Layout = .bundle

        @OptionGroup var hub: HubOptions

        func validate() throws {
            guard (to == nil) != (archive == nil) else {
                throw ValidationError("Give --to DIR (a folder) or --archive FILE.tar, one of them.")
            }
            if archive != nil, layout == .app {
                throw ValidationError("--layout app writes a folder for an app's resources; give --to DIR.")
            }
        }

        func run() async throws {
            let lock = try ModelLock.load(URL(fileURLWithPath: self.lock))
            let models = hub.cacheManager()
            let target = to ?? archive ?? ""
            let (archive, layout) = (archive, layout)
            // Copying and hashing gigabytes blocks: off the cooperative pool, which Ctrl-C's handling needs.
            let bytes = try await BlockingWork.run {
                try archive.map { try models.export(lock: lock, toArchive: URL(fileURLWithPath: $0)) }
                    ?? models.export(lock: lock, to: URL(fileURLWithPath: target), layout: layout)
            }
            let files = lock.repositories.reduce(0) { $0 + $1.files.count }
            print("exported \(counted(files, "file")) (\(ByteFormat.string(bytes))) to \(target)")
        }
    }

    struct ImportCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Place a bundle's models in the cache, each file checked against the bundle's lock.",
            discussion: """
                The folder must hold exactly what its modeldepot.lock names: a missing or extra file, a link, or a \
                file whose bytes differ from the lock is refused, naming it. Files are verified as they are copied; \
                an interrupted import resumes, keeping what it placed. Python's huggingface_hub then finds the \
                models in the cache offline.
                """)

        @Argument(help: "The bundle `modeldepot export` wrote: its folder, or its tar file.")
        var bundle: String

        @OptionGroup var hub: HubOptions

        func run() async throws {
            let models = hub.cacheManager()
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: bundle, isDirectory: &isFolder) else {
                throw ModelDepotError(.invalidArgument, "\(bundle) does not exist; give a bundle folder or tar file.")
            }
            let url = URL(fileURLWithPath: bundle)
            let folder = isFolder.boolValue
            let lock = try await BlockingWork.run {
                try folder ? models.importBundle(from: url) : models.importBundle(fromArchive: url)
            }
            for repository in lock.repositories {
                print(
                    "\(repository.repo) @ \(repository.commit.prefix(12)): \(counted(repository.files.count, "file")) verified and placed"
                )
                print(
                    hub.cache.repository(repository.repo, type: repository.type).snapshotFolder(repository.commit).path)
            }
        }
    }

    extension ModelBundle.Layout: ExpressibleByArgument {}
#endif
