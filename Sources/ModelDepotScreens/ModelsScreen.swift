import Foundation
import ModelDepot

/// The Models screen: the catalog with filters and search, recommended models first, the presets with their
/// size and how much of them is already here, and per model its size, readiness badge and one action.
public struct ModelsScreen: Sendable, Encodable {
    /// What the person narrowed the list to.
    public struct Filter: Sendable, Equatable, Encodable {
        public var capability: ModelCapability?
        public var format: ModelFormat?
        /// Words that must all appear in the name, description or repository (case-insensitive).
        public var search: String

        public init(capability: ModelCapability? = nil, format: ModelFormat? = nil, search: String = "") {
            self.capability = capability
            self.format = format
            self.search = search
        }

        /// A filter from a page's query fields; unknown values are refused with a message that lists the known
        /// ones, so a typo in a link is not silently an unfiltered list.
        public init(capability: String?, format: String?, search: String?) throws {
            self.init(search: String((search ?? "").prefix(200)))
            if let capability, !capability.isEmpty {
                guard let known = ModelCapability(rawValue: capability) else {
                    throw Self.unknown("capability", capability, ModelCapability.allCases.map(\.rawValue))
                }
                self.capability = known
            }
            if let format, !format.isEmpty {
                guard let known = ModelFormat(rawValue: format) else {
                    throw Self.unknown("format", format, ModelFormat.allCases.map(\.rawValue))
                }
                self.format = known
            }
        }

        func matches(_ entry: CatalogEntry) -> Bool {
            let text = "\(entry.name) \(entry.description) \(entry.repo)".lowercased()
            let words = search.lowercased().split(whereSeparator: \.isWhitespace)
            return words.allSatisfy { text.contains($0) }
        }

        private static func unknown(_ what: String, _ value: String, _ known: [String]) -> ModelDepotError {
            ModelDepotError(
                .invalidArgument,
                "'\(value.prefix(40))' is not a \(what); use one of: \(known.joined(separator: ", ")).")
        }
    }

    /// One catalog model.
    public struct Row: Sendable, Equatable, Encodable {
        public var name: String
        public var description: String
        public var repo: String
        public var format: ModelFormat
        public var capabilities: [ModelCapability]
        public var recommended: Bool
        public var sizeBytes: Int64
        public var sizeText: String
        public var license: String?
        public var status: ModelStatus
    }

    /// A named set of models, with what it takes and what is already here.
    public struct Preset: Sendable, Equatable, Encodable {
        public var name: String
        public var models: [String]
        public var totalBytes: Int64
        public var presentBytes: Int64
        /// "1.2 GiB, 300.0 MiB already here".
        public var summary: String
        public var complete: Bool
    }

    public var filter: Filter
    public var rows: [Row]
    public var presets: [Preset]
    /// Said when the filter leaves nothing.
    public var emptyMessage: String?
    public var strings: ModelsScreenStrings

    private enum CodingKeys: String, CodingKey { case filter, rows, presets, emptyMessage }

    /// The screen as it stands now: readiness from the cache, download states from `downloads`.
    public static func load(
        _ downloads: ModelDownloads, filter: Filter = Filter(), strings: ModelsScreenStrings = .english
    ) async -> ModelsScreen {
        let catalog = downloads.catalog
        let checker = ReadinessChecker(cache: downloads.manager.cache)
        var readiness: [String: Readiness] = [:]
        var rows: [Row] = []
        for entry in catalog.entries(capability: filter.capability, format: filter.format) where filter.matches(entry) {
            let state = (try? checker.check(entry).readiness) ?? .notDownloaded
            readiness[entry.name] = state
            rows.append(
                Row(
                    name: entry.name, description: entry.description, repo: entry.repo.description,
                    format: entry.format, capabilities: entry.capabilities, recommended: entry.recommended,
                    sizeBytes: entry.sizeBytes, sizeText: ByteFormat.string(entry.sizeBytes), license: entry.license,
                    status: ModelStatus.decide(
                        readiness: state, download: await downloads.entry(entry.name), strings: strings.status)))
        }
        let presets = catalog.presets.keys.sorted { Self.presetOrder($0) < Self.presetOrder($1) }.compactMap {
            name -> Preset? in
            guard let members = catalog.preset(name) else { return nil }
            let total = members.reduce(0) { $0 + $1.sizeBytes }
            let present = members.filter {
                let state = readiness[$0.name] ?? (try? checker.check($0).readiness)
                return state?.isLoadable == true
            }
            let presentBytes = present.reduce(0) { $0 + $1.sizeBytes }
            return Preset(
                name: name, models: members.map(\.name), totalBytes: total, presentBytes: presentBytes,
                summary: strings.presetSummary(total: total, present: presentBytes),
                complete: present.count == members.count)
        }
        return ModelsScreen(
            filter: filter, rows: rows, presets: presets, emptyMessage: rows.isEmpty ? strings.nothingMatches : nil,
            strings: strings)
    }

    /// minimal, standard, full, maximum first, in that order; others after, by name.
    static func presetOrder(_ name: String) -> (Int, String) {
        (["minimal", "standard", "full", "maximum"].firstIndex(of: name) ?? 4, name)
    }
}

/// The Models screen's words.
public struct ModelsScreenStrings: Sendable {
    public var title = "Models"
    public var nothingMatches = "No model matches these filters. Clear the search or pick another capability."
    public var recommended = "Recommended"
    public var presets = "Presets"
    public var status = ModelStatusStrings.english

    public static let english = ModelsScreenStrings()

    public func presetSummary(total: Int64, present: Int64) -> String {
        present == 0
            ? "\(ByteFormat.string(total))"
            : present >= total
                ? "\(ByteFormat.string(total)), all here"
                : "\(ByteFormat.string(total)), \(ByteFormat.string(present)) already here"
    }
}
