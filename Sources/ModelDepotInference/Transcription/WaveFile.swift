import Foundation
import ModelDepot

/// A RIFF/WAVE file read enough to cut it: where its samples are and how they are laid out. Only the header
/// is parsed; samples are read when a quiet place to cut is looked for.
struct WaveFile {
    enum SampleEncoding: Equatable {
        /// Unsigned 8-bit, or signed little-endian 16/24/32-bit integers.
        case integer
        /// 32-bit little-endian IEEE floats.
        case float
        /// Anything else (ADPCM, µ-law, 64-bit floats): sent as it is, but not cut.
        case other(tag: Int, bits: Int)
    }

    let data: Data
    let channels: Int
    let sampleRate: Int
    let bitsPerSample: Int
    let encoding: SampleEncoding
    /// Bytes per frame (one sample for every channel).
    let blockAlign: Int
    /// Where the samples are in `data`.
    let samples: Range<Int>

    var frameCount: Int { samples.count / blockAlign }
    var duration: Double { Double(frameCount) / Double(sampleRate) }
    /// A WAVE header as ``piece(frames:)`` writes it.
    static let headerSize = 44

    /// Reads the header; throws when the file is not a WAVE file ModelDepot can cut (the message says why).
    init(_ data: Data, name: String) throws {
        let bytes = [UInt8](data.prefix(1 << 20))
        func damaged(_ detail: String) -> ModelDepotError {
            ModelDepotError(.invalidAudio, "\(name) is a damaged WAV file: \(detail).")
        }
        func uint(_ offset: Int, _ width: Int) -> Int {
            (0..<width).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
        }
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8)
        else { throw damaged("it does not start with a RIFF/WAVE header") }
        var offset = 12
        var format: (tag: Int, channels: Int, rate: Int, align: Int, bits: Int)?
        var samples: Range<Int>?
        while offset + 8 <= bytes.count, samples == nil {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = uint(offset + 4, 4)
            let body = offset + 8
            switch id {
            case "fmt ":
                guard size >= 16, body + 16 <= bytes.count else { throw damaged("its format chunk is cut short") }
                var tag = uint(body, 2)
                // WAVE_FORMAT_EXTENSIBLE names the real encoding in the first two bytes of its sub-format GUID.
                if tag == 0xFFFE, size >= 40, body + 26 <= bytes.count { tag = uint(body + 24, 2) }
                format = (tag, uint(body + 2, 2), uint(body + 4, 4), uint(body + 12, 2), uint(body + 14, 2))
            case "data":
                // Writers that stream (a recorder killed mid-way) leave the size at 0 or 0xFFFFFFFF: take what is there.
                let end = size == 0 || size == 0xFFFF_FFFF ? data.count : min(data.count, body + size)
                samples = body..<max(body, end)
            default:
                break
            }
            offset = body + size + (size & 1)
        }
        guard let format else { throw damaged("it has no format chunk") }
        guard let samples else { throw damaged("it has no data chunk") }
        guard format.channels > 0, format.rate > 0, format.align > 0,
            format.align == format.channels * ((format.bits + 7) / 8)
        else { throw damaged("its format chunk is inconsistent") }
        switch (format.tag, format.bits) {
        case (1, 8), (1, 16), (1, 24), (1, 32): encoding = .integer
        case (3, 32): encoding = .float
        default: encoding = .other(tag: format.tag, bits: format.bits)
        }
        self.data = data
        self.channels = format.channels
        self.sampleRate = format.rate
        self.bitsPerSample = format.bits
        self.blockAlign = format.align
        self.samples = samples
    }

    /// Whether ``QuietSplitter`` can cut it: integer or float PCM.
    var canBeCut: Bool {
        if case .other = encoding { return false }
        return true
    }

    /// The loudness of the first channel over `frames`, as the mean absolute amplitude (0 silent ... 1 full scale).
    func loudness(_ frames: Range<Int>) -> Double {
        guard !frames.isEmpty else { return 0 }
        let width = bitsPerSample / 8
        var total = 0.0
        data.withUnsafeBytes { raw in
            for frame in frames {
                let at = samples.lowerBound + frame * blockAlign
                total += abs(amplitude(raw, at: at, width: width))
            }
        }
        return total / Double(frames.count)
    }

    private func amplitude(_ raw: UnsafeRawBufferPointer, at offset: Int, width: Int) -> Double {
        switch (encoding, width) {
        case (.other, _):
            return 0
        case (.float, _):
            return Double(Float(bitPattern: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian))
        case (_, 1):
            return (Double(raw[offset]) - 128) / 128
        case (_, 2):
            return Double(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int16.self))) / 32768
        case (_, 3):
            let value = Int32(raw[offset]) << 8 | Int32(raw[offset + 1]) << 16 | Int32(raw[offset + 2]) << 24
            return Double(value >> 8) / 8_388_608
        default:
            return Double(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
                / 2_147_483_648
        }
    }

    /// A complete WAVE file holding `frames` of this one's samples, with the same format.
    func piece(frames: Range<Int>) -> Data {
        let body = data[
            (samples.lowerBound + frames.lowerBound * blockAlign)..<(samples.lowerBound + frames.upperBound * blockAlign)
        ]
        var header = Data()
        func append(_ value: Int, _ width: Int) {
            for index in 0..<width { header.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
        }
        header.append(contentsOf: Array("RIFF".utf8))
        append(36 + body.count, 4)
        header.append(contentsOf: Array("WAVEfmt ".utf8))
        append(16, 4)
        append(encoding == .float ? 3 : 1, 2)
        append(channels, 2)
        append(sampleRate, 4)
        append(sampleRate * blockAlign, 4)
        append(blockAlign, 2)
        append(bitsPerSample, 2)
        header.append(contentsOf: Array("data".utf8))
        append(body.count, 4)
        return header + body
    }
}
