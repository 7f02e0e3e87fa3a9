import ArgumentParser
import Foundation
import ModelDepot

struct PruneCommand: ParsableCommand, ReportsFailuresAsJSON {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Keep the cache under a size: evict least recently used models first, never pinned ones.")

    @Option(help: "The most the cache may take, like 20GB, 500MB or 1.5GiB.")
    var maxSize: String

    @Flag(help: "Show what would be evicted, and delete nothing.")
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

    func run() throws {
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
