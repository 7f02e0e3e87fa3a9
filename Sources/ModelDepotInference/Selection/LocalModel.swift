import Foundation
import ModelDepot

/// A catalog model that is downloaded, verified and in a format a local server can run.
public struct LocalModel: Sendable {
    public let entry: CatalogEntry
    /// The GGUF file to load (the first part of a split model).
    public let file: URL
    public let report: ReadinessReport

    /// Looks `name` up in the catalog and checks the cached copy; every reason it cannot be used is an
    /// `unavailable` error saying what to do. Files present but never hashed are verified once (the result is
    /// remembered).
    public static func resolve(_ name: String, catalog: ModelCatalog, manager: ModelManager) throws -> LocalModel {
        try resolve(name, catalog: catalog, cache: manager.cache)
    }

    /// ``resolve(_:catalog:manager:)`` for a cache without a manager.
    public static func resolve(_ name: String, catalog: ModelCatalog, cache: HubCache) throws -> LocalModel {
        let checker = ReadinessChecker(cache: cache)
        guard let entry = catalog.entry(named: name) else {
            throw ModelDepotError(
                .unavailable,
                "'\(name)' is not in the model catalog. `modeldepot catalog --format gguf` lists the models that run locally."
            )
        }
        guard entry.format == .gguf else {
            throw ModelDepotError(
                .unavailable,
                "'\(name)' is a \(entry.format.rawValue) model; local servers run GGUF models. Pick one from `modeldepot catalog --format gguf`."
            )
        }
        let report = try readyReport(entry, name: name, checker: checker)
        // The required files name the weights; an entry without them (patterns only) uses the matched files.
        let isGGUF = { (path: String) in path.lowercased().hasSuffix(".gguf") }
        let required = entry.required.filter(isGGUF).sorted()
        let ggufFiles = required.isEmpty ? report.files.filter(isGGUF).sorted() : required
        guard let first = ggufFiles.first, let folder = report.folder else {
            throw ModelDepotError(.unavailable, "The model '\(name)' has no .gguf file in the cache.")
        }
        return LocalModel(entry: entry, file: folder.appendingPathComponent(first), report: report)
    }

    /// The readiness of `entry`'s cached copy when it is complete and verified; every other state is an
    /// `unavailable` error saying what to do. Files present but never hashed are verified once.
    static func readyReport(_ entry: CatalogEntry, name: String, checker: ReadinessChecker) throws -> ReadinessReport {
        var report = try checker.check(entry)
        if case .unverified = report.readiness { report = try checker.check(entry, verifying: true) }
        switch report.readiness {
        case .ready:
            break
        case .notDownloaded:
            throw ModelDepotError(.unavailable, "'\(name)' is not downloaded. Run `modeldepot pull \(name)` first.")
        case .partial(let missing), .downloading(let missing):
            throw ModelDepotError(
                .unavailable,
                "'\(name)' is only partly downloaded (missing: \(missing.joined(separator: ", "))). Run `modeldepot pull \(name)` to finish it."
            )
        case .corrupt(let problems):
            let list = problems.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
            throw ModelDepotError(
                .unavailable,
                "'\(name)' is damaged (\(list)). Run `modeldepot verify \(entry.repo) --repair`, or `modeldepot rm \(entry.repo)` and pull it again."
            )
        case .unverified(let files):
            throw ModelDepotError(
                .unavailable, "'\(name)' has files that could not be verified: \(files.joined(separator: ", ")).")
        }
        return report
    }
}
