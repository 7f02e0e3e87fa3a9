import Foundation
import ModelDepotCore

/// The entries of a ZIP file, read from its central directory (ZIP64 included: checkpoints pass 4 GiB), so a
/// PyTorch checkpoint's pickles can be found and read without reading its tensors.
struct ZipEntries {
    /// The largest pickle read into memory; a checkpoint's object graph is kilobytes to a few megabytes.
    static let largestPickle = 256 << 20

    struct Entry {
        var method: UInt16
        var compressedSize: Int64
        var size: Int64
        var localHeader: Int64
    }

    let source: any ByteSource
    let name: String
    private(set) var names: [String] = []
    private var entries: [String: Entry] = [:]

    /// The name of the first entry, from the local header a ZIP starts with; nil when `prefix` is not a ZIP's start.
    static func firstLocalName(_ prefix: [UInt8]) -> String? {
        guard prefix.count >= 30, little(prefix, 0, 4) == 0x0403_4B50 else { return nil }
        let length = Int(little(prefix, 26, 2))
        guard prefix.count >= 30 + length else { return nil }
        return String(decoding: prefix[30..<30 + length], as: UTF8.self)
    }

    /// Whether `prefix` starts like a ZIP (a local header, or the end record of an empty one).
    static func isZip(_ prefix: [UInt8]) -> Bool {
        prefix.count >= 4 && (little(prefix, 0, 4) == 0x0403_4B50 || little(prefix, 0, 4) == 0x0605_4B50)
    }

    /// Reads the central directory of the ZIP in `source`.
    ///
    /// - Throws: `invalidModelFile` naming what is wrong (no end record, a directory outside the file, the same
    ///   entry name twice — which copy a loader reads is its own choice, so the archive cannot be judged).
    init(source: any ByteSource, name: String) throws {
        self.source = source
        self.name = name
        let size = source.size
        let tailLength = min(size, 65_557)
        let tail = try read(at: size - tailLength, count: Int(tailLength))
        guard
            let end = stride(from: tail.count - 22, through: 0, by: -1).first(where: {
                Self.little(tail, $0, 4) == 0x0605_4B50
            })
        else { throw refuse("has no ZIP end record") }
        var count = Int64(Self.little(tail, end + 10, 2))
        var directorySize = Int64(Self.little(tail, end + 12, 4))
        var directoryOffset = Int64(Self.little(tail, end + 16, 4))
        // Where the directory must end: just before the end record, or before the ZIP64 end record and its locator.
        var directoryEnd = size - tailLength + Int64(end)
        if end >= 20, Self.little(tail, end - 20, 4) == 0x0706_4B50 {
            // ZIP64: a locator just before the end record points at the ZIP64 end record. Python's zipfile and
            // miniz both take its values whenever the locator is there, Python from the 56 bytes before the
            // locator and miniz from where it points: they must be the same record.
            let recordOffset = Self.signed(Self.little(tail, end - 12, 8))
            guard recordOffset == directoryEnd - 20 - 56 else { throw refuse("has a misplaced ZIP64 end record") }
            let record = try read(at: recordOffset, count: 56)
            guard Self.little(record, 0, 4) == 0x0606_4B50 else { throw refuse("has a damaged ZIP64 end record") }
            count = Self.signed(Self.little(record, 32, 8))
            directorySize = Self.signed(Self.little(record, 40, 8))
            directoryOffset = Self.signed(Self.little(record, 48, 8))
            directoryEnd = recordOffset
        } else if count == 0xFFFF || directoryOffset == 0xFFFF_FFFF || directorySize == 0xFFFF_FFFF {
            throw refuse("lacks its ZIP64 locator")
        }
        guard directoryOffset >= 0, directorySize >= 0, directoryOffset <= size,
            directorySize <= size - directoryOffset,
            directorySize <= Int64(Self.largestPickle), count <= 1_000_000
        else { throw refuse("has a central directory outside the file") }
        // Python's zipfile finds the directory just before the end record and shifts every offset by the difference
        // (bytes prepended to a ZIP); miniz reads where the end record says. A ZIP where the two differ is read
        // differently by each loader, so it cannot be judged.
        guard directoryOffset + directorySize == directoryEnd else {
            throw refuse("has bytes between its central directory and its end record, or before its start")
        }
        let directory = try read(at: directoryOffset, count: Int(directorySize))
        var at = 0
        for _ in 0..<count {
            guard at + 46 <= directory.count, Self.little(directory, at, 4) == 0x0201_4B50 else {
                throw refuse("has a damaged central directory")
            }
            let nameLength = Int(Self.little(directory, at + 28, 2))
            let extraLength = Int(Self.little(directory, at + 30, 2))
            let commentLength = Int(Self.little(directory, at + 32, 2))
            guard at + 46 + nameLength + extraLength + commentLength <= directory.count else {
                throw refuse("has a damaged central directory")
            }
            var entry = Entry(
                method: UInt16(Self.little(directory, at + 10, 2)),
                compressedSize: Int64(Self.little(directory, at + 20, 4)),
                size: Int64(Self.little(directory, at + 24, 4)),
                localHeader: Int64(Self.little(directory, at + 42, 4)))
            let entryName = String(decoding: directory[at + 46..<at + 46 + nameLength], as: UTF8.self)
            Self.applyZip64(directory[(at + 46 + nameLength)..<(at + 46 + nameLength + extraLength)], to: &entry)
            guard entries[entryName] == nil else { throw refuse("holds \(entryName) twice") }
            names.append(entryName)
            entries[entryName] = entry
            at += 46 + nameLength + extraLength + commentLength
        }
    }

    /// ZIP64's extra field (id 1) holds the sizes and offset that did not fit in 32 bits, in this order.
    private static func applyZip64(_ extra: ArraySlice<UInt8>, to entry: inout Entry) {
        let bytes = Array(extra)
        var at = 0
        while at + 4 <= bytes.count {
            let id = little(bytes, at, 2)
            let length = Int(little(bytes, at + 2, 2))
            guard at + 4 + length <= bytes.count else { return }
            if id == 1 {
                var field = at + 4
                func next() -> Int64? {
                    guard field + 8 <= at + 4 + length else { return nil }
                    defer { field += 8 }
                    return signed(little(bytes, field, 8))
                }
                if entry.size == 0xFFFF_FFFF, let value = next() { entry.size = value }
                if entry.compressedSize == 0xFFFF_FFFF, let value = next() { entry.compressedSize = value }
                if entry.localHeader == 0xFFFF_FFFF, let value = next() { entry.localHeader = value }
                return
            }
            at += 4 + length
        }
    }

    /// The bytes of an entry, stored or deflated (PyTorch's reader inflates too), at most `limit` of them.
    ///
    /// - Throws: `invalidModelFile` for an entry larger than ``largestPickle`` (when `limit` asks for all of it), one
    ///   compressed another way, or one whose header or data is damaged.
    func bytes(of entryName: String, limit: Int = ZipEntries.largestPickle) throws -> [UInt8] {
        guard let entry = entries[entryName] else { throw refuse("has no entry \(entryName)") }
        guard entry.size <= Int64(Self.largestPickle) || limit < Self.largestPickle else {
            throw refuse("holds \(entryName) of \(entry.size) bytes, too large to be a checkpoint's pickle")
        }
        guard (0...source.size).contains(entry.localHeader), (0...source.size).contains(entry.compressedSize),
            entry.size >= 0
        else {
            throw refuse("gives \(entryName) an offset or size outside the file")
        }
        let header = try read(at: entry.localHeader, count: 30)
        guard Self.little(header, 0, 4) == 0x0403_4B50 else { throw refuse("has a damaged header for \(entryName)") }
        let start = entry.localHeader + 30 + Int64(Self.little(header, 26, 2)) + Int64(Self.little(header, 28, 2))
        let wanted = Int(min(entry.size, Int64(limit)))
        switch entry.method {
        case 0:
            guard entry.size == entry.compressedSize else { throw refuse("gives \(entryName) two sizes") }
            return try read(at: start, count: wanted)
        case 8:
            // Read compressed bytes a piece at a time until `wanted` bytes come out: a header needs a few hundred.
            var compressed = min(entry.compressedSize, Int64(max(wanted, 1 << 12)))
            while true {
                let input = try read(at: start, count: Int(compressed))
                let output: [UInt8]
                do {
                    output = try Inflate.decompress(input, limit: wanted)
                } catch .truncated where compressed < entry.compressedSize {
                    compressed = min(entry.compressedSize, compressed * 4)
                    continue
                } catch {
                    throw refuse("holds \(entryName) deflated wrongly (\(error))")
                }
                guard output.count == wanted else { throw refuse("has \(entryName) shorter than it says") }
                return output
            }
        default:
            throw refuse("holds \(entryName) compressed with method \(entry.method), which no loader reads")
        }
    }

    private func read(at offset: Int64, count: Int) throws -> [UInt8] {
        guard offset >= 0 else { throw refuse("points before its start") }
        let bytes = try source.read(at: offset, count: count)
        guard bytes.count == count else { throw refuse("is truncated") }
        return bytes
    }

    private func refuse(_ problem: String) -> ModelDepotError {
        ModelDepotError(.invalidModelFile, "\(name) \(problem); its pickles cannot be judged, so it is refused.")
    }

    /// A ZIP64 size or offset as a signed integer; one past `Int64.max` becomes `-1`, which every check refuses.
    static func signed(_ value: UInt64) -> Int64 { Int64(exactly: value) ?? -1 }

    /// A little-endian unsigned integer of `width` bytes at `offset`.
    static func little(_ bytes: [UInt8], _ offset: Int, _ width: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<width { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        return value
    }
}
