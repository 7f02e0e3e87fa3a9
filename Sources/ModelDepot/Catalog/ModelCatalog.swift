import Foundation
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer
import ModelDepotTrust

/// Known models, shipped with the package as `catalog.json` and extendable by a user catalog file of the
/// same shape (its entries replace built-in ones of the same name and add new ones).
///
/// ```swift
/// let catalog = try ModelCatalog.standard()
/// let chat = catalog.recommended(for: .textGeneration)
/// let embeddings = catalog.entries(capability: .embeddings)
/// let full = catalog.preset("full")    // MiniLM + Qwen 0.5B, as NornicDB defines it
/// ```
public struct ModelCatalog: Sendable {
    /// Every entry, in catalog order.
    public private(set) var models: [CatalogEntry]
    /// Preset name → entry names (`minimal`, `standard`, `full`, `maximum`).
    public private(set) var presets: [String: [String]]

    private struct File: Codable {
        var version: Int
        var models: [CatalogEntry]
        var presets: [String: [String]]?
    }

    /// Parses and checks a catalog: names valid and unique, presets naming existing entries.
    public init(json: Data, source: String = "the catalog") throws {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: json)
        } catch {
            throw ModelDepotError(
                .invalidArgument, "\(source) is not a valid model catalog: \(error).", underlying: error)
        }
        guard file.version == 1 else {
            throw ModelDepotError(
                .invalidArgument, "\(source) has catalog version \(file.version); this build reads 1.")
        }
        try self.init(models: file.models, presets: file.presets ?? [:], source: source)
    }

    /// A catalog of `models` and named `presets` (lists of entry names); `source` names it in error messages.
    public init(models: [CatalogEntry], presets: [String: [String]] = [:], source: String = "the catalog") throws {
        var seen = Set<String>()
        for entry in models {
            guard Self.isValidName(entry.name) else {
                throw ModelDepotError(
                    .invalidArgument,
                    "\(source): '\(entry.name)' is not a valid model name (lowercase letters, digits, '.', '-').")
            }
            guard seen.insert(entry.name).inserted else {
                throw ModelDepotError(.invalidArgument, "\(source) names '\(entry.name)' twice.")
            }
            guard !entry.files.isEmpty else {
                throw ModelDepotError(.invalidArgument, "\(source): '\(entry.name)' selects no files.")
            }
        }
        for (preset, names) in presets {
            guard Self.isValidName(preset), !seen.contains(preset) else {
                throw ModelDepotError(.invalidArgument, "\(source): '\(preset)' cannot name a preset.")
            }
            for name in names where !seen.contains(name) {
                throw ModelDepotError(.invalidArgument, "\(source): preset '\(preset)' names unknown model '\(name)'.")
            }
        }
        self.models = models
        self.presets = presets
    }

    /// The catalog shipped with ModelDepot.
    public static func builtIn() throws -> ModelCatalog {
        guard let url = Bundle.module.url(forResource: "catalog", withExtension: "json"),
            let data = FileManager.default.contents(atPath: url.path)
        else {
            throw ModelDepotError(.fileSystem, "The built-in model catalog is missing from this installation.")
        }
        return try ModelCatalog(json: data, source: "the built-in catalog")
    }

    /// The built-in catalog with the user's on top: `file` if given, else `MODELDEPOT_CATALOG`, else
    /// `$XDG_CONFIG_HOME/modeldepot/catalog.json` (`~/.config/…`) when it exists.
    public static func standard(
        userCatalog file: URL? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> ModelCatalog {
        var catalog = try builtIn()
        let configHome =
            environment["XDG_CONFIG_HOME"].map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".config")
        let candidate =
            file ?? environment["MODELDEPOT_CATALOG"].map { URL(fileURLWithPath: $0) }
            ?? configHome.appendingPathComponent("modeldepot/catalog.json")
        let explicit = file != nil || environment["MODELDEPOT_CATALOG"] != nil
        if let data = FileManager.default.contents(atPath: candidate.path) {
            catalog = try catalog.merging(ModelCatalog(json: data, source: candidate.path))
        } else if explicit {
            throw ModelDepotError(.invalidArgument, "Cannot read the catalog file \(candidate.path).")
        }
        return catalog
    }

    /// This catalog with `other`'s entries replacing same-named ones and its presets added.
    public func merging(_ other: ModelCatalog) throws -> ModelCatalog {
        let replaced = Set(other.models.map(\.name))
        return try ModelCatalog(
            models: models.filter { !replaced.contains($0.name) } + other.models,
            presets: presets.merging(other.presets) { _, new in new })
    }

    /// The entry called `name`, if there is one.
    public func entry(named name: String) -> CatalogEntry? {
        models.first { $0.name == name.lowercased() }
    }

    /// The entries of a preset, in order; nil when there is no such preset.
    public func preset(_ name: String) -> [CatalogEntry]? {
        presets[name.lowercased()]?.compactMap { entry(named: $0) }
    }

    /// An entry's name or a preset's name → the entries; nil when the catalog knows neither.
    public func resolve(_ name: String) -> [CatalogEntry]? {
        entry(named: name).map { [$0] } ?? preset(name)
    }

    /// Entries with all the given traits, recommended ones first, then by size.
    public func entries(
        capability: ModelCapability? = nil, format: ModelFormat? = nil, recommendedOnly: Bool = false
    ) -> [CatalogEntry] {
        models.filter { entry in
            (capability.map(entry.has) ?? true) && (format.map { entry.format == $0 } ?? true)
                && (!recommendedOnly || entry.recommended)
        }.sorted { ($0.recommended ? 0 : 1, $0.sizeBytes) < ($1.recommended ? 0 : 1, $1.sizeBytes) }
    }

    /// The recommended entry for a capability (the smallest one if several are).
    public func recommended(for capability: ModelCapability) -> CatalogEntry? {
        entries(capability: capability, recommendedOnly: true).first
    }

    static func isValidName(_ name: String) -> Bool {
        guard let first = name.first, first.isLetter || first.isNumber, name.count <= 80 else { return false }
        return name.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" }
    }
}
