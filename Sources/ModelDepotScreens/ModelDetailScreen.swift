import Foundation
import ModelDepot

/// A model's page: what it is (format, capabilities, header facts), its files with sizes and whether each is
/// here, where it lives on disk, and what a download would fetch with the free space after it.
public struct ModelDetailScreen: Sendable, Encodable {
    /// One file of the model.
    public struct File: Sendable, Equatable, Encodable {
        public var path: String
        public var sizeText: String
        public var cached: Bool
        /// What the file's header says (GGUF, safetensors), or why it cannot be read.
        public var facts: String?
    }

    /// A label and its value, for the facts table.
    public struct Fact: Sendable, Equatable, Encodable {
        public var label: String
        public var value: String

        public init(label: String, value: String) {
            self.label = label
            self.value = value
        }
    }

    public var name: String
    public var description: String
    public var status: ModelStatus
    public var facts: [Fact]
    public var files: [File]
    /// The snapshot folder when something is cached.
    public var location: String?
    /// "Downloading fetches 1.2 GiB; 40.3 GiB will be left free." or why that is not known.
    public var planText: String
    /// False when the download would not fit on the disk.
    public var fits: Bool

    /// The page of catalog model `name`.
    ///
    /// - Throws: `invalidArgument` when the catalog has no such model.
    public static func load(
        _ name: String, downloads: ModelDownloads, strings: ModelDetailStrings = .english
    ) async throws -> ModelDetailScreen {
        let entry = try downloads.catalogEntry(name)
        let manager = downloads.manager
        let report = try? manager.readiness(of: entry)
        let status = ModelStatus.decide(
            readiness: report?.readiness ?? .notDownloaded, download: await downloads.entry(entry.name),
            strings: strings.status)
        var facts: [Fact] = [
            Fact(label: strings.repository, value: entry.repo.description),
            Fact(label: strings.revision, value: report?.commit ?? entry.revision ?? "main"),
            Fact(label: strings.format, value: entry.format.rawValue),
            Fact(label: strings.capabilities, value: entry.capabilities.map(\.rawValue).joined(separator: ", ")),
            Fact(label: strings.size, value: ByteFormat.string(entry.sizeBytes)),
        ]
        if let quantization = entry.quantization {
            facts.append(Fact(label: strings.quantization, value: quantization))
        }
        if let parameters = entry.parameters {
            facts.append(Fact(label: strings.parameters, value: strings.parameterCount(parameters)))
        }
        if let context = entry.contextLength { facts.append(Fact(label: strings.context, value: "\(context) tokens")) }
        if let dimensions = entry.embeddingDimensions {
            facts.append(Fact(label: strings.dimensions, value: "\(dimensions)"))
        }
        if let license = entry.license { facts.append(Fact(label: strings.license, value: license)) }
        facts.append(Fact(label: strings.storage, value: strings.storageClass(entry.sizeBytes)))

        var files: [File] = []
        var planText = strings.planUnknown
        var fits = true
        do {
            let plan = try await manager.plan(entry.snapshotRequest)
            files = plan.files.map { file in
                let local = report?.folder?.appendingPathComponent(file.path).path
                return File(
                    path: file.path, sizeText: ByteFormat.string(file.size), cached: file.cached,
                    facts: file.cached ? local.flatMap(Self.headerFacts) : nil)
            }
            fits = (plan.freeBytesAfter ?? 1) >= 0
            planText = strings.plan(download: plan.downloadBytes, freeAfter: plan.freeBytesAfter)
        } catch {
            // Offline or the Hub unreachable: the files the readiness check knows, without sizes from the Hub.
            files = (report?.files ?? entry.files).map { path in
                let local = report?.folder?.appendingPathComponent(path).path
                let present = local.map { FileManager.default.fileExists(atPath: $0) } ?? false
                return File(
                    path: path, sizeText: "", cached: present, facts: present ? local.flatMap(Self.headerFacts) : nil)
            }
            planText = strings.planUnavailable((error as? ModelDepotError)?.message ?? "\(error)")
        }
        return ModelDetailScreen(
            name: entry.name, description: entry.description, status: status, facts: facts, files: files,
            location: report?.folder?.path, planText: planText, fits: fits)
    }

    /// This page after a change of the downloads: only the status is decided again (from the cache and the download
    /// here), unless the model's readiness changed — then the whole page is loaded again, plan included (Hub calls).
    /// For a view that follows progress without asking the Hub at every tick.
    public func updated(downloads: ModelDownloads, strings: ModelDetailStrings = .english) async throws
        -> ModelDetailScreen
    {
        let entry = try downloads.catalogEntry(name)
        let report = try? downloads.manager.readiness(of: entry)
        let status = ModelStatus.decide(
            readiness: report?.readiness ?? .notDownloaded, download: await downloads.entry(entry.name),
            strings: strings.status)
        let settled: Set<ReadinessBadge.Kind> = [.ready, .unverified, .notDownloaded, .partial, .corrupt]
        if status.badge.kind != self.status.badge.kind, settled.contains(status.badge.kind) {
            return try await Self.load(name, downloads: downloads, strings: strings)
        }
        var page = self
        page.status = status
        return page
    }

    /// A header's facts in one line, or why it cannot be read; nil for files that are not model files.
    static func headerFacts(_ path: String) -> String? {
        do {
            return try ModelFileSummary.read(path: path)?.description
        } catch let error as ModelDepotError {
            return "damaged: \(error.message)"
        } catch {
            return "damaged: \(error)"
        }
    }
}

/// The model page's words.
public struct ModelDetailStrings: Sendable {
    public var repository = "Repository"
    public var revision = "Revision"
    public var format = "Format"
    public var capabilities = "Capabilities"
    public var size = "Size"
    public var quantization = "Quantization"
    public var parameters = "Parameters"
    public var context = "Context length"
    public var dimensions = "Embedding dimensions"
    public var license = "License"
    public var storage = "Storage"
    public var planUnknown = "What a download would fetch is not known yet."
    public var status = ModelStatusStrings.english

    public static let english = ModelDetailStrings()

    public func plan(download: Int64, freeAfter: Int64?) -> String {
        guard download > 0 else { return "Every file is here; downloading fetches nothing." }
        let free = freeAfter.map {
            $0 >= 0
                ? "; \(ByteFormat.string($0)) will be left free"
                : "; that is \(ByteFormat.string(-$0)) more than the disk has free — make room first"
        }
        return "Downloading fetches \(ByteFormat.string(download))\(free ?? "")."
    }

    public func planUnavailable(_ reason: String) -> String {
        "The Hub cannot be asked right now, so the download size is not known: \(reason)"
    }

    public func parameterCount(_ count: Int64) -> String {
        count >= 1_000_000_000
            ? String(format: "%.1f billion", Double(count) / 1e9) : String(format: "%.0f million", Double(count) / 1e6)
    }

    /// Small models fit anywhere; large ones are worth deleting when unused.
    public func storageClass(_ bytes: Int64) -> String {
        bytes < 500_000_000 ? "small (under 500 MB)" : bytes < 5_000_000_000 ? "medium (0.5–5 GB)" : "large (over 5 GB)"
    }
}
