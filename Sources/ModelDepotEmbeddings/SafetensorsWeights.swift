import Foundation
import ModelDepotCore

/// The tensors of a `.safetensors` file, read once into `Float` arrays: F32 as stored, F16 and BF16 widened
/// by their bits (Swift's `Float16` type does not exist on Intel Macs). Tensors are looked up by name with or
/// without a `bert.` prefix; tensors nobody asks for (the I64 `embeddings.position_ids`) are never read.
struct SafetensorsWeights {
    struct Entry {
        let dtype: String
        let shape: [Int]
        let range: Range<Int>
    }

    let url: URL
    private let data: Data
    private let base: Int
    private let entries: [String: Entry]

    init(url: URL) throws {
        // Mapped, not read: the pages a model does not use never enter memory.
        guard let data = try? Data(contentsOf: url, options: .alwaysMapped) else {
            throw ModelDepotError(
                .invalidModelFile,
                "\(url.path) is missing or unreadable. Pull the model again (or verify and repair it).")
        }
        guard data.count >= 8 else { throw Self.invalid(url, "it is shorter than its 8-byte header size") }
        let headerSize = data.prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) }
        guard headerSize <= UInt64(data.count - 8), headerSize < 100 << 20 else {
            throw Self.invalid(url, "its header claims \(headerSize) bytes; the file is truncated")
        }
        let header = data.subdata(in: 8..<(8 + Int(headerSize)))
        guard let object = try? JSONSerialization.jsonObject(with: header) as? [String: Any] else {
            throw Self.invalid(url, "its header is not a JSON object")
        }
        let base = 8 + Int(headerSize)
        var entries: [String: Entry] = [:]
        for (name, value) in object where name != "__metadata__" {
            guard let tensor = value as? [String: Any], let dtype = tensor["dtype"] as? String,
                let shape = tensor["shape"] as? [Int], let offsets = tensor["data_offsets"] as? [Int],
                offsets.count == 2,
                offsets[0] <= offsets[1], base + offsets[1] <= data.count
            else { throw Self.invalid(url, "tensor '\(name)' has a bad description or lies past the end of the file") }
            entries[name] = Entry(dtype: dtype, shape: shape, range: offsets[0]..<offsets[1])
        }
        self.url = url
        self.data = data
        self.base = base
        self.entries = entries
    }

    /// The tensor `name` (or `bert.<name>`) as floats, checked against `shape`.
    func tensor(_ name: String, shape: [Int]) throws -> [Float] {
        guard let entry = entries[name] ?? entries["bert." + name] else {
            throw Self.invalid(url, "it has no tensor '\(name)' (a BERT model needs it)")
        }
        guard entry.shape == shape else {
            throw Self.invalid(url, "tensor '\(name)' has shape \(entry.shape) where the config implies \(shape)")
        }
        let count = shape.reduce(1, *)
        let width: Int
        switch entry.dtype {
        case "F32": width = 4
        case "F16", "BF16": width = 2
        default: throw Self.invalid(url, "tensor '\(name)' is \(entry.dtype); F32, F16 and BF16 are supported")
        }
        guard entry.range.count == count * width else {
            throw Self.invalid(
                url, "tensor '\(name)' has \(entry.range.count) bytes for \(count) values of \(entry.dtype)")
        }
        let start = base + entry.range.lowerBound
        let dtype = entry.dtype
        return data.withUnsafeBytes { raw in Self.widen(raw.baseAddress! + start, count: count, dtype: dtype) }
    }

    /// `count` little-endian values of `dtype` at `source` as floats.
    @_optimize(speed)
    private static func widen(_ source: UnsafeRawPointer, count: Int, dtype: String) -> [Float] {
        [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
            let target = buffer.baseAddress!
            switch dtype {
            case "F32":
                // Safetensors is little-endian, as every platform Swift runs on here.
                UnsafeMutableRawPointer(target).copyMemory(from: source, byteCount: count * 4)
            case "BF16":
                for index in 0..<count {
                    let bits = source.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self)
                    target[index] = Float(bitPattern: UInt32(UInt16(littleEndian: bits)) << 16)
                }
            default:
                for index in 0..<count {
                    let bits = source.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self)
                    target[index] = float(fromHalf: UInt16(littleEndian: bits))
                }
            }
            initialized = count
        }
    }

    /// An IEEE 754 half-precision value widened by its bits: sign, 5-bit exponent, 10-bit fraction.
    @_optimize(speed)
    static func float(fromHalf bits: UInt16) -> Float {
        let sign = UInt32(bits & 0x8000) << 16
        let exponent = Int(bits >> 10) & 0x1F
        let fraction = UInt32(bits & 0x03FF)
        switch exponent {
        case 0:
            // Zero or subnormal: fraction × 2^-24.
            let magnitude = Float(fraction) * 0x1p-24
            return sign == 0 ? magnitude : -magnitude
        case 31:
            return Float(bitPattern: sign | 0x7F80_0000 | (fraction << 13))
        default:
            return Float(bitPattern: sign | UInt32(exponent - 15 + 127) << 23 | (fraction << 13))
        }
    }

    static func invalid(_ url: URL, _ reason: String) -> ModelDepotError {
        ModelDepotError(
            .invalidModelFile,
            "\(url.lastPathComponent) cannot be loaded: \(reason). Pull the model again, or check that it is a BERT model."
        )
    }
}
