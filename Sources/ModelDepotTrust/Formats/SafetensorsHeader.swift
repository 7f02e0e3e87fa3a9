import Foundation
import ModelDepotCore

/// What a safetensors file's JSON header says, checked against the file: every tensor's byte range must lie
/// inside the data section, else the file is `corrupt`.
package struct SafetensorsHeader: Sendable, Equatable {
    /// How many tensors the file holds.
    package var tensorCount: Int
    /// Elements over all tensors.
    package var parameterCount: Int64
    /// Tensors per dtype (`F16`, `BF16`, `F32`, `I8`, …).
    package var dtypes: [String: Int]
    /// The header's `__metadata__` strings (`format: pt`…).
    package var metadata: [String: String]
    /// Each tensor's entry, by name: what a reader of the weights needs (the in-process encoder).
    package var tensors: [String: Tensor] = [:]
    /// Where the data section starts in the file: 8 bytes of header size, then the header.
    package var dataStart: Int64 = 0

    /// One tensor as the header describes it.
    package struct Tensor: Sendable, Equatable {
        package var dtype: String
        package var shape: [Int]
        /// Its bytes, relative to the start of the data section (checked to lie inside it).
        package var bytes: Range<Int64>
    }

    /// Reads and checks the header of the safetensors file at `path`.
    package static func read(path: String) throws -> SafetensorsHeader {
        var reader = try BinaryFileReader(path: path)
        defer { reader.close() }
        guard reader.fileSize >= 8 else {
            throw ModelDepotError(.invalidModelFile, "truncated safetensors: shorter than its 8-byte header size")
        }
        let headerSize = try reader.integer(UInt64.self)
        guard headerSize <= 100 << 20, Int64(headerSize) + 8 <= reader.fileSize else {
            throw ModelDepotError(
                .invalidModelFile,
                "truncated or invalid safetensors: a \(headerSize)-byte header in a \(reader.fileSize)-byte file")
        }
        let json = try reader.bytes(Int(headerSize))
        guard let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else {
            throw ModelDepotError(.invalidModelFile, "invalid safetensors: its header is not a JSON object")
        }
        let dataSize = reader.fileSize - 8 - Int64(headerSize)
        var header = SafetensorsHeader(tensorCount: 0, parameterCount: 0, dtypes: [:], metadata: [:])
        header.dataStart = 8 + Int64(headerSize)
        for (name, value) in object {
            if name == "__metadata__" {
                header.metadata = (value as? [String: String]) ?? [:]
                continue
            }
            guard let tensor = value as? [String: Any], let dtype = tensor["dtype"] as? String,
                let shape = (tensor["shape"] as? [NSNumber])?.map(\.int64Value),
                let offsets = (tensor["data_offsets"] as? [NSNumber])?.map(\.int64Value), offsets.count == 2
            else {
                throw ModelDepotError(
                    .invalidModelFile, "invalid safetensors: tensor '\(name)' lacks dtype, shape or data_offsets")
            }
            guard offsets[0] >= 0, offsets[0] <= offsets[1], offsets[1] <= dataSize else {
                throw ModelDepotError(
                    .invalidModelFile,
                    "truncated safetensors: tensor '\(name)' ends at byte \(offsets[1]) of a \(dataSize)-byte data section"
                )
            }
            header.tensorCount += 1
            header.parameterCount += shape.reduce(1) { $0.multipliedReportingOverflow(by: $1).partialValue }
            header.dtypes[dtype, default: 0] += 1
            header.tensors[name] = Tensor(dtype: dtype, shape: shape.map { Int($0) }, bytes: offsets[0]..<offsets[1])
        }
        return header
    }
}
