import Foundation
import ModelDepot
import ModelDepotInference

/// The Models screen: the catalog with filters and search, recommended models first, the presets with their
/// size and how much of them is already here, and per model its size, readiness badge and one action.
public struct ModelsScreen: Sendable, Encodable {
    /// What the person narrowed the list to.
    public struct Filter: Sendable, Equatable, Encodable {
        public var capability: ModelCapability?
        public var format: ModelFormat?
        /// Words that must all appear in the name, description or repository (case-insensitive).
        public var search: String
        /// What to search the Hub for; empty: no Hub search.
        public var hub: String

        public init(
            capability: ModelCapability? = nil, format: ModelFormat? = nil, search: String = "", hub: String = ""
        ) {
            self.capability = capability
            self.format = format
            self.search = search
            self.hub = hub
        }

        /// A filter from a page's query fields; unknown values are refused with a message that lists the known
        /// ones, so a typo in a link is not silently an unfiltered list.
        public init(capability: String?, format: String?, search: String?, hub: String? = nil) throws {
            self.init(search: String((search ?? "").prefix(200)), hub: String((hub ?? "").prefix(200)))
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
        /// Where "Use" goes: the playground with the model selected (`/chat?model=…`); nil when no runtime here
        /// serves it (then its page says why).
        public var usePath: String? = nil
        /// Why no runtime here serves it ("Core ML models run in apps on Apple devices"); nil when one does.
        public var unservedReason: String? = nil
    }

    /// A repository the Hub's search found.
    public struct HubResult: Sendable, Equatable, Encodable {
        public var id: String
        public var author: String
        public var downloads: Int?
        public var likes: Int?
        /// From the Hub's `license:` tag.
        public var license: String?
        public var task: String?
        /// Whether the cache holds some of it.
        public var cached: Bool
    }

    /// A repository on this device that no catalog entry names (pulled with the CLI, or by Python).
    public struct CachedRow: Sendable, Equatable, Encodable {
        public var id: String
        public var type: String
        public var sizeText: String
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
    /// What the Hub's search found, when one was asked for.
    public var hubResults: [HubResult]
    /// Why the Hub gave nothing: offline, unreachable, or no match.
    public var hubMessage: String?
    /// What is on this device besides the catalog's models.
    public var otherCached: [CachedRow]
    public var strings: ModelsScreenStrings
    /// Each row's readiness as read at load: what ``withDownloads(_:)`` decides statuses from without the disk.
    var readiness: [String: Readiness] = [:]

    private enum CodingKeys: String, CodingKey {
        case filter, rows, presets, emptyMessage, hubResults, hubMessage, otherCached
    }

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
            var row = Row(
                name: entry.name, description: entry.description, repo: entry.repo.description,
                format: entry.format, capabilities: entry.capabilities, recommended: entry.recommended,
                sizeBytes: entry.sizeBytes, sizeText: ByteFormat.string(entry.sizeBytes), license: entry.license,
                status: ModelStatus.decide(
                    readiness: state, download: await downloads.entry(entry.name), strings: strings.status))
            switch RuntimeKind.serving(entry) {
            case .success: row.usePath = PlaygroundKind.of(entry)?.path(selecting: entry.name)
            case .failure(let reason): row.unservedReason = strings.unserved(reason.description)
            }
            rows.append(row)
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
        let catalogRepos = Set(catalog.models.map { "\($0.repoType.rawValue)/\($0.repo)" })
        let cached = (try? await downloads.manager.cachedModels()) ?? []
        let otherCached = cached.filter { !catalogRepos.contains("\($0.type)/\($0.id)") }.map {
            CachedRow(id: $0.id, type: $0.type, sizeText: ByteFormat.string($0.sizeOnDisk))
        }
        var screen = ModelsScreen(
            filter: filter, rows: rows, presets: presets, emptyMessage: rows.isEmpty ? strings.nothingMatches : nil,
            hubResults: [], hubMessage: nil, otherCached: otherCached, strings: strings)
        screen.readiness = readiness
        if !filter.hub.isEmpty {
            (screen.hubResults, screen.hubMessage) = await searchHub(
                filter.hub, downloads: downloads, cached: Set(cached.map(\.id)), strings: strings)
        }
        return screen
    }

    /// The screen with every row's status decided again from the downloads' states and the readiness read at
    /// load: what a progress event changes, without reading the disk. Load the screen again when
    /// ``ModelDownloads/generation`` moves (a download began or ended, the cache changed).
    public func withDownloads(_ downloads: ModelDownloads) async -> ModelsScreen {
        var screen = self
        for index in screen.rows.indices {
            let name = screen.rows[index].name
            guard let readiness = readiness[name] else { continue }
            screen.rows[index].status = ModelStatus.decide(
                readiness: readiness, download: await downloads.entry(name), strings: strings.status)
        }
        return screen
    }

    /// The Hub's answer to `query`, or why there is none.
    static func searchHub(
        _ query: String, downloads: ModelDownloads, cached: Set<String>, strings: ModelsScreenStrings
    ) async -> ([HubResult], String?) {
        let hub = downloads.manager.pull.hub
        guard !hub.isOffline else { return ([], strings.hubOffline) }
        do {
            let found = try await hub.search(query, limit: 20)
            let results = found.map { info in
                HubResult(
                    id: info.id, author: String(info.id.split(separator: "/").first ?? ""), downloads: info.downloads,
                    likes: info.likes,
                    license: info.tags.first { $0.hasPrefix("license:") }.map { String($0.dropFirst(8)) },
                    task: info.pipelineTag, cached: cached.contains(info.id))
            }
            return (results, results.isEmpty ? strings.hubNothing(query) : nil)
        } catch {
            return ([], strings.hubUnreachable((error as? ModelDepotError)?.message ?? "\(error)"))
        }
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

    /// Under a row that no runtime here serves.
    public func unserved(_ reason: String) -> String {
        "Not usable here: " + reason + "."
    }

    public var hubOffline = "Offline: the Hub cannot be searched. The models on this device are listed below."
    public var otherCachedTitle = "Also on this device"

    public static let english = ModelsScreenStrings()

    public func hubNothing(_ query: String) -> String { "The Hub has no model matching '\(query)'." }

    public func hubUnreachable(_ reason: String) -> String {
        "The Hub cannot be searched right now; the models on this device are listed below. (\(reason))"
    }

    public func presetSummary(total: Int64, present: Int64) -> String {
        present == 0
            ? "\(ByteFormat.string(total))"
            : present >= total
                ? "\(ByteFormat.string(total)), all here"
                : "\(ByteFormat.string(total)), \(ByteFormat.string(present)) already here"
    }
}
