#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot

    struct PruneCommand: AsyncParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "prune",
            abstract: "Keep the cache under a size, or remove what nothing refers to.",
            usage: """
                modeldepot prune [--detached] [--older-than <age>] [--dry-run] [--json]
                  modeldepot prune --max-size <size> [--detached [--older-than <age>]] [--dry-run] [--json]
                """,
            discussion: """
                With no --max-size, prune does what `hf cache prune` does: it removes detached revisions. \
                --max-size evicts least recently used models first, never pinned ones. --detached removes, as \
                `hf cache prune` does, revisions no branch or tag points to (with the blobs no other revision uses) \
                and partial downloads older than --older-than that no process is working on (nobody holds their \
                lock); pinned repositories are kept.
                """)

        @Option(help: "The most the cache may take, like 20GB, 500MB or 1.5GiB.")
        var maxSize: String?

        @Flag(help: "Remove revisions no ref points to and abandoned partial downloads.")
        var detached = false

        @Option(help: "With --detached: partial downloads untouched for this long are abandoned (30m, 12h, 1d, 2w).")
        var olderThan = "1d"

        @Flag(help: "Show what would be removed, and delete nothing.")
        var dryRun = false

        @Flag(help: "Print a JSON object.")
        var json = false

        @OptionGroup var cacheOptions: CacheOptions

        struct Output: Encodable {
            var evicted: [String]
            var sizeBefore: Int64
            var sizeAfter: Int64
            var freedBytes: Int64
            var stillOver: Bool
            var dryRun: Bool
        }

        func run() async throws {
            // Like `hf cache prune`, a bare prune removes detached revisions; --max-size alone only evicts.
            if detached || maxSize == nil { try await pruneDetached() }
            guard let maxSize else { return }
            let limit = try ByteSize.parse(maxSize)
            let plan = try StorageBudget(cache: cacheOptions.cache).plan(maxSize: limit)
            if !dryRun { try plan.execute() }
            if json {
                printJSON(
                    Output(
                        evicted: plan.evicted.map(\.id), sizeBefore: plan.sizeBefore, sizeAfter: plan.sizeAfter,
                        freedBytes: plan.freedBytes, stillOver: plan.stillOver, dryRun: dryRun))
                return
            }
            for repository in plan.evicted {
                print(
                    "\(dryRun ? "would evict" : "evicted")  \(repository.id)  \(ByteFormat.string(repository.sizeOnDisk))  last used \(Table.age(repository.lastAccessed))"
                )
            }
            print(
                "\(ByteFormat.string(plan.sizeBefore)) → \(ByteFormat.string(plan.sizeAfter)) (limit \(ByteFormat.string(limit)))"
            )
            if plan.stillOver {
                print("Still over the limit: the rest is pinned (`modeldepot pin --remove <id>` unpins).")
            }
        }
    }

    extension PruneCommand {
        func pruneDetached() async throws {
            guard let seconds = CacheFilter.seconds(olderThan.lowercased()) else {
                throw ModelDepotError(
                    .invalidArgument, "--older-than '\(olderThan)' is not an age; write it like 30m, 12h, 1d or 2w.")
            }
            let result = try await cacheOptions.manager().pruneDetached(
                olderThan: .milliseconds(Int64(seconds * 1000)), dryRun: dryRun)
            if json {
                printJSON(result)
                return
            }
            let verb = dryRun ? "would remove" : "removed"
            for revision in result.revisions {
                print(
                    "\(verb)  \(revision.repo) @ \(revision.commit.prefix(12))  \(ByteFormat.string(revision.freedBytes))"
                )
            }
            for partial in result.partialDownloads {
                print(
                    "\(verb)  partial download \(partial.path)  \(ByteFormat.string(partial.sizeOnDisk)), untouched since \(Table.age(partial.modified))"
                )
            }
            for pinned in result.pinnedSkipped { print("kept  \(pinned): pinned (`modeldepot pin --remove` unpins)") }
            if result.partialDownloadsKept > 0 {
                print(
                    "kept  \(result.partialDownloadsKept) partial download(s): in progress or newer than \(olderThan)")
            }
            print("\(dryRun ? "would free" : "freed") \(ByteFormat.string(result.freedBytes))")
        }
    }

    struct PinCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pin", abstract: "Protect a cached model from `prune` (and from eviction suggestions).")

        @Argument(help: "A catalog model name or a repository id (org/name).")
        var name: String

        @Flag(help: "Remove the pin instead.")
        var remove = false

        @OptionGroup var cacheOptions: CacheOptions

        @OptionGroup var catalogOptions: CatalogOptions

        func run() throws {
            let pins = PinStore(cache: cacheOptions.cache)
            let targets: [(RepoID, RepoType)]
            if !name.contains("/"), let entries = try catalogOptions.load().resolve(name) {
                targets = entries.map { ($0.repo, $0.repoType) }
            } else {
                let reference = try cacheOptions.reference(name)
                targets = [(reference.repo, reference.type)]
            }
            for (repo, type) in targets {
                if remove {
                    pins.unpin(repo, type: type)
                    print("unpinned \(repo)")
                } else {
                    try pins.pin(repo, type: type)
                    print("pinned \(repo)")
                }
            }
        }
    }

    extension PruneCommand {
        var failuresAsJSON: Bool { json }
    }
#endif
