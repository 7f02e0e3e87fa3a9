import Foundation
import ModelDepot

/// A catalog Whisper model that is downloaded, verified and in the format a local transcription server runs
/// (CTranslate2, for faster-whisper-server).
public struct LocalTranscriptionModel: Sendable {
    public let entry: CatalogEntry
    /// The snapshot folder holding `model.bin`, `config.json`, the tokenizer and the vocabulary.
    public let folder: URL
    public let report: ReadinessReport

    /// Looks `name` up in the catalog and checks the cached copy; every reason it cannot be served is an
    /// `unavailable` error saying what to do instead.
    public static func resolve(_ name: String, catalog: ModelCatalog, cache: HubCache) throws
        -> LocalTranscriptionModel
    {
        let servable = catalog.models.filter { $0.format == .ctranslate2 && $0.has(.transcription) }.map(\.name)
        let choices = servable.isEmpty ? "" : " (\(servable.joined(separator: ", ")))"
        guard let entry = catalog.entry(named: name) else {
            throw ModelDepotError(
                .unavailable,
                "'\(name)' is not in the model catalog. `modeldepot catalog --format ctranslate2` lists the transcription models that run locally\(choices)."
            )
        }
        guard entry.has(.transcription) else {
            throw ModelDepotError(
                .unavailable,
                "'\(name)' is not a transcription model. Pick one from `modeldepot catalog --format ctranslate2`\(choices)."
            )
        }
        guard entry.format == .ctranslate2 else {
            // The same model converted for faster-whisper is usually the entry named `<name>-ct2`.
            let converted = catalog.entry(named: "\(name)-ct2").map {
                "Use '\($0.name)' instead: `modeldepot pull \($0.name)`."
            }
            let runsWhere =
                entry.format == .coreml
                ? "a Core ML model for WhisperKit on Apple devices"
                : "a \(entry.format.rawValue) model"
            throw ModelDepotError(
                .unavailable,
                "'\(name)' is \(runsWhere); the local transcription server (faster-whisper) runs CTranslate2 conversions. "
                    + (converted ?? "Pick one from `modeldepot catalog --format ctranslate2`\(choices).")
            )
        }
        let report = try LocalModel.readyReport(entry, name: name, checker: ReadinessChecker(cache: cache))
        guard let folder = report.folder else {
            throw ModelDepotError(.unavailable, "'\(name)' has no snapshot folder in the cache.")
        }
        return LocalTranscriptionModel(entry: entry, folder: folder, report: report)
    }
}
