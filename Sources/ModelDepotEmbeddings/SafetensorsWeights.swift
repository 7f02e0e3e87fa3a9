import Foundation
import ModelDepot
import ModelDepotCore
import ModelDepotPlatform

/// The tensors of a `.safetensors` file, memory-mapped: F32 tensors are used where they lie in the file (nothing
/// copied, so a model's weights cost no memory of the process's own), F16 and BF16 widened by their bits into
/// memory (Swift's `Float16` type does not exist on Intel Macs). Tensors are looked up by name with or without a
/// `bert.` prefix; tensors nobody asks for (the I64 `embeddings.position_ids`) are never read.
struct SafetensorsWeights {
    let url: URL
    private let file: MappedFile
    private let header: SafetensorsHeader

    init(url: URL) throws {
        guard let file = try? MappedFile(path: url.path) else {
            throw ModelDepotError(
                .invalidModelFile,
                "\(url.path) is missing or unreadable. Pull the model again (or verify and repair it).")
        }
        // The header is read, and checked against the file's size, as readiness checks read it.
        do {
            header = try SafetensorsHeader.read(path: url.path)
        } catch let problem as ModelDepotError where problem.code == .invalidModelFile {
            throw Self.invalid(url, problem.message)
        }
        guard header.dataStart + (header.tensors.values.map(\.bytes.upperBound).max() ?? 0) <= Int64(file.bytes.count)
        else {
            throw Self.invalid(url, "it changed while it was being read")
        }
        self.url = url
        self.file = file
    }

    /// The tensor `name` (or `bert.<name>`) as floats, checked against `shape`.
    func tensor(_ name: String, shape: [Int]) throws -> FloatTensor {
        guard let entry = header.tensors[name] ?? header.tensors["bert." + name] else {
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
        guard entry.bytes.count == Int64(count * width) else {
            throw Self.invalid(
                url, "tensor '\(name)' has \(entry.bytes.count) bytes for \(count) values of \(entry.dtype)")
        }
        let source = file.bytes.baseAddress! + Int(header.dataStart + entry.bytes.lowerBound)
        // Safetensors is little-endian, as every platform Swift runs on here, so an F32 tensor is usable as it
        // lies — when it lies on a 4-byte boundary (a header's length need not be a multiple of 4).
        if entry.dtype == "F32", Int(bitPattern: source) % MemoryLayout<Float>.alignment == 0 {
            return FloatTensor(
                viewing: source.assumingMemoryBound(to: Float.self), count: count, in: file)
        }
        let dtype = entry.dtype
        return FloatTensor(count: count) { target in Self.widen(source, count: count, dtype: dtype, into: target) }
    }

    /// `count` little-endian values of `dtype` at `source` as floats.
    @_optimize(speed)
    private static func widen(
        _ source: UnsafeRawPointer, count: Int, dtype: String, into target: UnsafeMutablePointer<Float>
    ) {
        switch dtype {
        case "F32":
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
