import ModelDepotCore

/// Binary formats model repositories hold that are not pickles, known by their own magic bytes. Their bytes may
/// happen to decode as a few opcodes (a safetensors header length of `N.` reads as NONE, STOP), so for them only a
/// walk that imports something Python could import makes them a pickle (a polyglot built to fool us).
enum KnownFormat: String {
    case gguf = "GGUF"
    case safetensors
    case hdf5 = "HDF5"
    case tflite = "TFLite"
    case ctranslate2 = "CTranslate2"
    case onnx = "ONNX"

    static func identify(_ prefix: [UInt8]) -> KnownFormat? {
        func little(_ offset: Int, _ width: Int) -> UInt64 {
            guard prefix.count >= offset + width else { return .max }
            return ZipEntries.little(prefix, offset, width)
        }
        if prefix.starts(with: Array("GGUF".utf8)) { return .gguf }
        if prefix.starts(with: [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A]) { return .hdf5 }
        if prefix.count >= 8, Array(prefix[4..<8]) == Array("TFL3".utf8) { return .tflite }
        // safetensors: a u64 header length, then the JSON header.
        if prefix.count > 8, (2...100_000_000).contains(little(0, 8)), prefix[8] == UInt8(ascii: "{") {
            return .safetensors
        }
        // CTranslate2's model.bin: a small u32 version, a u16 length and the spec's ASCII name.
        if (1...20).contains(little(0, 4)), (1...256).contains(little(4, 2)), prefix.count > 6,
            prefix[6...].prefix(Int(little(4, 2)) - 1).allSatisfy({ (0x20..<0x7F).contains($0) })
        {
            return .ctranslate2
        }
        // ONNX: a ModelProto opens with ir_version (field 1, a varint) and a length-delimited field.
        if prefix.count > 3, prefix[0] == 0x08, (1...20).contains(prefix[1]),
            [0x12, 0x1A, 0x22, 0x2A, 0x3A, 0x42].contains(prefix[2])
        {
            return .onnx
        }
        return nil
    }
}
