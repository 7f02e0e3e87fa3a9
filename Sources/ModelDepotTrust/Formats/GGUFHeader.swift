import Foundation
import ModelDepotCore

/// What a GGUF file's header says (llama.cpp's format): version, tensors, and the metadata apps care about.
/// Reading it also checks the file: wrong magic, a truncated header, or tensor data that would run past the
/// end of the file make it `corrupt`, with the reason.
package struct GGUFHeader: Sendable, Equatable {
    /// The GGUF format version (1 to 3).
    package var version: UInt32
    /// How many tensors the file holds.
    package var tensorCount: UInt64
    /// How many metadata keys the header holds.
    package var metadataCount: UInt64
    /// `general.architecture` (`llama`, `qwen2`…).
    package var architecture: String?
    /// `general.name`, the model's own name for itself.
    package var name: String?
    /// The context length the architecture declares (`<arch>.context_length`).
    package var contextLength: UInt64?
    /// `general.file_type`, e.g. 15 = Q4_K_M.
    package var fileType: UInt32?
    /// The file type's name (`Q4_K_M`, `Q8_0`, `F16`…), from `general.file_type`.
    package var quantization: String? { fileType.flatMap { Self.fileTypeNames[$0] } }
    /// `general.parameter_count` when present, else the sum of the tensors' element counts.
    package var parameterCount: UInt64?
    /// The size the file must have for all tensors to fit, when every tensor type is known.
    package var requiredFileSize: Int64?
    /// Transformer layers (`<arch>.block_count`).
    package var blockCount: UInt64?
    /// Attention heads (`<arch>.attention.head_count`), and those for keys and values
    /// (`<arch>.attention.head_count_kv`; the same when absent, as llama.cpp reads it).
    /// A model whose layers differ (OpenELM, some Nemotron and Gemma builds) writes these as arrays, one entry a
    /// layer; then these are the largest entry and ``headCountKVPerLayer`` holds the KV heads of each layer.
    package var headCount: UInt64?
    package var headCountKV: UInt64?
    /// The KV heads of each layer when `<arch>.attention.head_count_kv` is an array (a layer with 0 keeps no cache).
    package var headCountKVPerLayer: [UInt64]?
    /// The embedding width (`<arch>.embedding_length`), and a key's and a value's widths when declared
    /// (`<arch>.attention.key_length`, `<arch>.attention.value_length`; else the embedding width over the heads).
    package var embeddingLength: UInt64?
    package var keyLength: UInt64?
    package var valueLength: UInt64?

    /// The memory llama.cpp's KV cache takes for `context` tokens at `bytesPerElement` (2: f16, its default):
    /// context × bytes per element × the sum over layers of KV heads × (key width + value width) — with one KV-head
    /// count for every layer and keys as wide as values, 2 × layers × context × KV heads × head size × bytes per
    /// element, as LM Studio's fit estimate computes it. Nil when the header lacks what it needs.
    package func kvCacheBytes(context: UInt64, bytesPerElement: UInt64 = 2) -> UInt64? {
        guard let blockCount, let headCount, headCount > 0 else { return nil }
        let derived = embeddingLength.map { $0 / headCount }
        guard let keyWidth = keyLength ?? derived, let valueWidth = valueLength ?? derived else { return nil }
        // Every factor comes from the file: an absurd one overflows, which must not trap.
        let perLayer =
            headCountKVPerLayer ?? Array(repeating: headCountKV ?? headCount, count: Int(min(blockCount, 1 << 16)))
        var heads: UInt64 = 0
        for layer in perLayer {
            let (sum, overflow) = heads.addingReportingOverflow(layer)
            guard !overflow else { return nil }
            heads = sum
        }
        let (width, overflow) = keyWidth.addingReportingOverflow(valueWidth)
        guard !overflow, blockCount <= 1 << 16 else { return nil }
        var product: UInt64 = 1
        for factor in [heads, width, context, bytesPerElement] {
            let (next, overflow) = product.multipliedReportingOverflow(by: factor)
            guard !overflow else { return nil }
            product = next
        }
        return product
    }

    static let magic: [UInt8] = Array("GGUF".utf8)

    /// Reads and checks the header of the GGUF file at `path`.
    package static func read(path: String) throws -> GGUFHeader {
        var reader = try BinaryFileReader(path: path)
        defer { reader.close() }
        do {
            return try parse(&reader)
        } catch let truncated as BinaryFileReader.Truncated {
            throw ModelDepotError(
                .invalidModelFile,
                "truncated GGUF: the header needs more than \(truncated.offset) bytes but the file has \(reader.fileSize)"
            )
        }
    }

    private static func parse(_ reader: inout BinaryFileReader) throws -> GGUFHeader {
        guard reader.fileSize >= 4, Array(try reader.bytes(4)) == magic else {
            throw ModelDepotError(.invalidModelFile, "not a GGUF file (wrong magic bytes)")
        }
        let version = try reader.integer(UInt32.self)
        guard (1...3).contains(version) else {
            throw ModelDepotError(.invalidModelFile, "unsupported GGUF version \(version)")
        }
        let wide = version >= 2
        let readCount = { (reader: inout BinaryFileReader) throws -> UInt64 in
            wide ? try reader.integer(UInt64.self) : UInt64(try reader.integer(UInt32.self))
        }
        let tensorCount = try readCount(&reader)
        let metadataCount = try readCount(&reader)
        guard tensorCount < 1 << 24, metadataCount < 1 << 24 else {
            throw ModelDepotError(
                .invalidModelFile, "implausible GGUF counts (\(tensorCount) tensors, \(metadataCount) keys)")
        }
        var header = GGUFHeader(version: version, tensorCount: tensorCount, metadataCount: metadataCount)
        var alignment: UInt64 = 32
        for _ in 0..<metadataCount {
            let key = try string(&reader, wide: wide)
            let type = try reader.integer(UInt32.self)
            let value = try self.value(&reader, type: type, wide: wide, keep: interesting(key))
            switch key {
            case "general.architecture": header.architecture = value.text
            case "general.name": header.name = value.text
            case "general.file_type": header.fileType = value.number.map(UInt32.init(truncatingIfNeeded:))
            case "general.parameter_count": header.parameterCount = value.number
            case "general.alignment":
                alignment = value.number ?? 32
                guard (1...(1 << 20)).contains(alignment) else {
                    throw ModelDepotError(.invalidModelFile, "an implausible GGUF alignment of \(alignment) bytes")
                }
            default:
                // `<arch>.…` keys, matched by their ending: the architecture need not come first.
                if key.hasSuffix(".context_length") { header.contextLength = value.number }
                if key.hasSuffix(".block_count") { header.blockCount = value.number }
                if key.hasSuffix(".attention.head_count") { header.headCount = value.largest }
                if key.hasSuffix(".attention.head_count_kv") {
                    header.headCountKV = value.largest
                    header.headCountKVPerLayer = value.numbers
                }
                if key.hasSuffix(".embedding_length") { header.embeddingLength = value.number }
                if key.hasSuffix(".attention.key_length") { header.keyLength = value.number }
                if key.hasSuffix(".attention.value_length") { header.valueLength = value.number }
            }
        }
        var elements: UInt64 = 0
        var end: UInt64 = 0
        var allKnown = true
        for _ in 0..<tensorCount {
            _ = try string(&reader, wide: wide)
            let dimensions = try reader.integer(UInt32.self)
            guard dimensions <= 8 else {
                throw ModelDepotError(.invalidModelFile, "a tensor with \(dimensions) dimensions")
            }
            var count: UInt64 = 1
            for _ in 0..<dimensions {
                let (product, overflow) = count.multipliedReportingOverflow(by: try readCount(&reader))
                guard !overflow else { throw Self.implausibleTensor }
                count = product
            }
            let type = try reader.integer(UInt32.self)
            let offset = try reader.integer(UInt64.self)
            elements &+= count
            if let (block, bytes) = typeSizes[type] {
                // Every number here is the file's: checked, so a lying one is refused rather than trapping.
                let blocks = count / block + (count % block == 0 ? 0 : 1)
                let (size, sizeOverflow) = blocks.multipliedReportingOverflow(by: bytes)
                let (last, lastOverflow) = offset.addingReportingOverflow(size)
                guard !sizeOverflow, !lastOverflow else { throw Self.implausibleTensor }
                end = max(end, last)
            } else {
                allKnown = false
            }
        }
        if header.parameterCount == nil { header.parameterCount = elements }
        let dataStart = (UInt64(reader.offset) + alignment - 1) / alignment * alignment
        if allKnown {
            let (total, overflow) = dataStart.addingReportingOverflow(end)
            guard !overflow else { throw Self.implausibleTensor }
            let required = Int64(clamping: total)
            header.requiredFileSize = required
            if required > reader.fileSize {
                throw ModelDepotError(
                    .invalidModelFile,
                    "truncated GGUF: its tensors need \(required) bytes but the file has \(reader.fileSize)")
            }
        }
        return header
    }

    private static let implausibleTensor = ModelDepotError(
        .invalidModelFile, "a GGUF tensor whose size or offset cannot be (it runs past any file)")

    private init(version: UInt32, tensorCount: UInt64, metadataCount: UInt64) {
        self.version = version
        self.tensorCount = tensorCount
        self.metadataCount = metadataCount
    }

    private static func interesting(_ key: String) -> Bool {
        key.hasPrefix("general.") || key.hasSuffix(".context_length") || key.hasSuffix(".block_count")
            || key.hasSuffix(".embedding_length") || key.hasSuffix(".attention.head_count")
            || key.hasSuffix(".attention.head_count_kv") || key.hasSuffix(".attention.key_length")
            || key.hasSuffix(".attention.value_length")
    }

    private enum Value {
        case number(UInt64), numbers([UInt64]), text(String), other
        var number: UInt64? { if case .number(let value) = self { value } else { nil } }
        var numbers: [UInt64]? { if case .numbers(let values) = self { values } else { nil } }
        /// A number, or an array's largest entry.
        var largest: UInt64? { number ?? numbers?.max() }
        var text: String? { if case .text(let value) = self { value } else { nil } }
    }

    private static func string(_ reader: inout BinaryFileReader, wide: Bool) throws -> String {
        let length = wide ? try reader.integer(UInt64.self) : UInt64(try reader.integer(UInt32.self))
        // Keys and tensor names: the GGUF specification caps keys at 65535 bytes, and ggml names at 64.
        guard length < 1 << 16 else { throw ModelDepotError(.invalidModelFile, "a GGUF name of \(length) bytes") }
        return String(decoding: try reader.bytes(Int(length)), as: UTF8.self)
    }

    /// Reads (or skips) one metadata value of GGUF type `type`.
    private static func value(_ reader: inout BinaryFileReader, type: UInt32, wide: Bool, keep: Bool) throws -> Value {
        switch type {
        // A negative count means nothing a count can: the signed types keep only what is 0 or more.
        case 0, 7: return .number(UInt64(try reader.integer(UInt8.self)))
        case 1: return nonNegative(Int64(try reader.integer(Int8.self)))
        case 2: return .number(UInt64(try reader.integer(UInt16.self)))
        case 3: return nonNegative(Int64(try reader.integer(Int16.self)))
        case 4: return .number(UInt64(try reader.integer(UInt32.self)))
        case 5: return nonNegative(Int64(try reader.integer(Int32.self)))
        case 6: _ = try reader.integer(UInt32.self); return .other
        case 10: return .number(try reader.integer(UInt64.self))
        case 11: return nonNegative(try reader.integer(Int64.self))
        case 12: _ = try reader.integer(UInt64.self); return .other
        case 8:
            let length = wide ? try reader.integer(UInt64.self) : UInt64(try reader.integer(UInt32.self))
            // Only short strings are kept (a model's name, its architecture); the rest are skipped unread.
            if keep, length <= 1 << 16 { return .text(String(decoding: try reader.bytes(Int(length)), as: UTF8.self)) }
            try reader.skip(Int64(clamping: length))
            return .other
        case 9:
            let elementType = try reader.integer(UInt32.self)
            let count = wide ? try reader.integer(UInt64.self) : UInt64(try reader.integer(UInt32.self))
            // ggml refuses arrays of arrays; so does this reader (each level would recurse).
            guard elementType != 9 else { throw ModelDepotError(.invalidModelFile, "a GGUF array of arrays") }
            // An integer array kept (per-layer head counts): one entry a layer, so a few thousand at most.
            if keep, integerTypes.contains(elementType), count <= 1 << 16 {
                var values: [UInt64] = []
                var valid = count > 0
                for _ in 0..<count {
                    let number = try value(&reader, type: elementType, wide: wide, keep: false).number
                    if let number { values.append(number) } else { valid = false }
                }
                // An empty array, or one with a negative entry, says nothing the estimate can use.
                return valid ? .numbers(values) : .other
            }
            if let width = fixedWidths[elementType] {
                let (bytes, overflow) = count.multipliedReportingOverflow(by: width)
                guard !overflow else { throw ModelDepotError(.invalidModelFile, "a GGUF array of \(count) entries") }
                try reader.skip(Int64(clamping: bytes))
            } else {
                guard count < 1 << 26 else {
                    throw ModelDepotError(.invalidModelFile, "a GGUF array of \(count) entries")
                }
                for _ in 0..<count { _ = try value(&reader, type: elementType, wide: wide, keep: false) }
            }
            return .other
        default: throw ModelDepotError(.invalidModelFile, "unknown GGUF metadata type \(type)")
        }
    }

    private static func nonNegative(_ value: Int64) -> Value { value >= 0 ? .number(UInt64(value)) : .other }

    /// The unsigned and signed integer types (bool and floats excluded).
    private static let integerTypes: Set<UInt32> = [0, 1, 2, 3, 4, 5, 10, 11]

    private static let fixedWidths: [UInt32: UInt64] = [
        0: 1, 1: 1, 7: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 10: 8, 11: 8, 12: 8,
    ]

    /// ggml tensor types: (elements per block, bytes per block).
    private static let typeSizes: [UInt32: (UInt64, UInt64)] = [
        0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 36),
        10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292),
        24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8), 30: (1, 2),
    ]

    /// `general.file_type` values (llama.cpp's `llama_ftype`).
    static let fileTypeNames: [UInt32: String] = [
        0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
        12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K",
        19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL",
        26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16",
    ]
}
