import Foundation
import ModelDepotCore

/// What a model file's header says, as fields: the format, and what that format records — architecture,
/// quantization, parameters and context length for GGUF; tensor count, element types and parameters for
/// safetensors. Read from the header alone (a few kilobytes), never the weights.
package struct ModelFileSummary: Sendable, Codable, Equatable, CustomStringConvertible {
    /// `gguf` or `safetensors`.
    package var format: String
    /// The GGUF version.
    package var version: UInt32?
    package var architecture: String?
    /// The GGUF file type's name (`Q4_K_M`, `F16`, …).
    package var quantization: String?
    package var parameters: UInt64?
    package var contextLength: UInt64?
    package var tensorCount: UInt64
    /// Safetensors' element types (`F32`, `BF16`, …), sorted.
    package var dtypes: [String]?

    /// The summary of the file at `path`, by its extension (`.gguf`, `.safetensors`); nil for other files.
    ///
    /// - Throws: `invalidModelFile` when the header is damaged or truncated.
    package static func read(path: String) throws -> ModelFileSummary? {
        try read(path: path, named: path)
    }

    /// The summary of the file at `path` (a blob, say), by the extension of `name` (its path in the repository).
    package static func read(path: String, named name: String) throws -> ModelFileSummary? {
        switch (name as NSString).pathExtension.lowercased() {
        case "gguf":
            let header = try GGUFHeader.read(path: path)
            return ModelFileSummary(
                format: "gguf", version: header.version, architecture: header.architecture,
                quantization: header.quantization, parameters: header.parameterCount,
                contextLength: header.contextLength, tensorCount: header.tensorCount, dtypes: nil)
        case "safetensors":
            let header = try SafetensorsHeader.read(path: path)
            return ModelFileSummary(
                format: "safetensors", version: nil, architecture: nil, quantization: nil,
                parameters: UInt64(max(0, header.parameterCount)), contextLength: nil,
                tensorCount: UInt64(header.tensorCount), dtypes: header.dtypes.keys.sorted())
        default:
            return nil
        }
    }

    /// One line for people: `GGUF v3 · 40 tensors · llama · Q8_0 · 1.1B parameters · context 2048`.
    package var description: String {
        var parts: [String] = []
        if format == "gguf" {
            parts.append("GGUF v\(version ?? 0)")
            parts.append("\(tensorCount) tensors")
            if let architecture { parts.append(architecture) }
            if let quantization { parts.append(quantization) }
            if let parameters { parts.append("\(Self.count(parameters)) parameters") }
            if let contextLength { parts.append("context \(contextLength)") }
        } else {
            parts.append(format)
            parts.append("\(tensorCount) tensors")
            if let dtypes { parts.append(dtypes.joined(separator: "/")) }
            if let parameters { parts.append("\(Self.count(parameters)) parameters") }
        }
        return parts.joined(separator: " · ")
    }

    static func count(_ value: UInt64) -> String {
        switch value {
        case 1_000_000_000...: String(format: "%.1fB", Double(value) / 1e9)
        case 1_000_000...: String(format: "%.0fM", Double(value) / 1e6)
        default: "\(value)"
        }
    }
}
