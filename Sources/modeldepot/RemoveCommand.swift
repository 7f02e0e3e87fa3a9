#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot

    struct RemoveCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Delete a cached repository, or some of its revisions.",
            discussion: """
                Deleting some revisions removes their snapshots and refs, and the blobs no remaining revision uses \
                (huggingface_hub's delete strategy). Asks for confirmation unless --yes.
                """
        )

        @Argument(help: "The repository id (org/name) or a hf:// URI (hf://org/name, hf://datasets/org/name@revision).")
        var repo: String

        @Option(help: "A commit or ref to delete (repeatable); all revisions when omitted.")
        var revision: [String] = []

        @Flag(name: .shortAndLong, help: "Delete without asking.")
        var yes = false

        @Flag(help: "Show what would be deleted, and delete nothing.")
        var dryRun = false

        @OptionGroup var cacheOptions: CacheOptions

        func run() async throws {
            let reference = try cacheOptions.reference(repo)
            guard reference.path == nil else {
                throw ModelDepotError(
                    .invalidArgument,
                    "'\(repo)' names a file; `rm` deletes repositories or revisions. Give hf://org/name[@revision].")
            }
            let (id, type) = (reference.repo, reference.type)
            let revision = self.revision + (reference.revision.map { [$0] } ?? [])
            let models = cacheOptions.manager()
            let plan: DeletionPlan
            do {
                plan = try models.deletionPlan(id, type: type, revisions: revision)
            } catch {
                throw cacheOptions.explaining(error, id, asked: type)
            }
            let what =
                revision.isEmpty || !plan.repositories.isEmpty
                ? "all of \(repo)" : "\(plan.snapshots.count) revision(s) of \(repo) and \(plan.blobs.count) blob(s)"
            print("Will delete \(what), freeing \(ByteFormat.string(plan.freedBytes)).")
            if dryRun { return }
            if !yes {
                guard isatty(STDIN_FILENO) == 1 else {
                    throw ModelDepotError(.invalidArgument, "Not deleting without confirmation: pass --yes.")
                }
                print("Proceed? [y/N] ", terminator: "")
                guard let answer = readLine(), ["y", "yes"].contains(answer.lowercased()) else {
                    print("Nothing deleted.")
                    return
                }
            }
            try await models.delete(plan, of: id, type: type)
            print("Deleted \(what); freed \(ByteFormat.string(plan.freedBytes)).")
        }
    }
#endif
