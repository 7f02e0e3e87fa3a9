import Foundation
import ModelDepot
import ModelDepotInference

/// What a model page says about running the model here: which runtime serves it and whether that is installed (or
/// the line that installs it), the memory loading it would take against what is free, whether it is loaded now,
/// and where "Use" goes; or why nothing here runs it.
public struct ModelRuntimeSummary: Sendable, Equatable, Encodable {
    /// Whether a runtime here can serve it (installed or not).
    public var servable: Bool
    /// "Runs with llama.cpp server: llama-server (/usr/bin/llama-server)." or why nothing here runs it.
    public var text: String
    /// What installs the runtime, when it is missing.
    public var installHint: String?
    /// "Loading it needs about 1.1 GB (…); 20 GB available."
    public var memoryText: String?
    /// False when the estimate says it does not fit now.
    public var fits: Bool
    /// `loaded`, `loading` or `failed` when the runtimes know it; nil otherwise.
    public var state: String?
    /// The playground "Use" opens (`/chat?model=…`); nil when none fits.
    public var usePath: String?

    /// The summary for `entry` over `runtimes`.
    public static func load(_ entry: CatalogEntry, runtimes: ModelRuntimes) async -> ModelRuntimeSummary {
        let usePath = PlaygroundKind.of(entry)?.path(selecting: entry.name)
        let kind: RuntimeKind
        switch RuntimeKind.serving(entry) {
        case .success(let found): kind = found
        case .failure(let reason):
            return ModelRuntimeSummary(
                servable: false, text: "Not usable here: \(reason).", fits: true, usePath: nil)
        }
        var summary = ModelRuntimeSummary(
            servable: true, text: "Runs with the \(LoadedModelsScreen.runtimeText(kind)).", fits: true,
            usePath: usePath)
        switch await runtimes.installation(of: kind) {
        case .success(let program)?:
            if !program.isEmpty { summary.text = "Runs with the \(LoadedModelsScreen.runtimeText(kind)): \(program)." }
        case .failure(let missing)?:
            summary.text = "Runs with the \(LoadedModelsScreen.runtimeText(kind)), which is not installed here."
            summary.installHint = missing.description
        case nil:
            break
        }
        if let fit = await runtimes.memoryFit(entry) {
            summary.memoryText = "Loading it \(fit.summary)."
            summary.fits = fit.fits
        }
        switch await runtimes.loaded.first(where: { $0.name == entry.name })?.state {
        case .ready?: summary.state = "loaded"
        case .loading?: summary.state = "loading"
        case .failed?: summary.state = "failed"
        case nil: break
        }
        return summary
    }
}
