#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot

    struct PathCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "path",
            abstract: "Print the cached snapshot folder of a repository, or one of its files. No network.")

        @Argument(help: "The repository id (org/name) or a hf:// URI (hf://org/name@revision/path).")
        var repo: String

        @Argument(help: "A file inside the repository.")
        var file: String?

        @Option(help: "The branch, tag or commit (default: main).")
        var revision: String = "main"

        @OptionGroup var cacheOptions: CacheOptions

        func run() throws {
            let reference = try cacheOptions.reference(repo)
            let (id, type) = (reference.repo, reference.type)
            let revision = reference.revision ?? self.revision
            let file = self.file ?? reference.path
            let models = cacheOptions.manager()
            if let found = models.localPath(id, type: type, revision: revision, file: file) {
                print(found.path)
                return
            }
            guard let file, models.localPath(id, type: type, revision: revision) != nil else {
                let hint = cacheOptions.otherTypeHint(id, asked: type).map { " " + $0 } ?? ""
                throw ModelDepotError(
                    .notCached, "\(repo) at '\(revision)' is not cached. Run `modeldepot pull \(repo)` first.\(hint)")
            }
            let repository = try cacheOptions.repository(repo)
            let commit = repository.commit(forRevision: revision) ?? revision
            let known =
                (try? repository.isKnownMissing(RepoFilePath(file), commit: commit)) == true
                ? " (the Hub said it does not exist)" : ""
            throw ModelDepotError(
                .notCached,
                "\(file) of \(repo) at '\(revision)' is not cached\(known). Run `modeldepot pull \(repo) --include '\(file)'`."
            )
        }
    }
#endif
