import ModelDepotCore

/// The header of a `.npy` file (`\x93NUMPY`, a version, a length, then a Python dict literal): NumPy unpickles the
/// data of an object array (`allow_pickle=True`), so such a file is a pickle after its header.
struct NumpyHeader {
    static let magic: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]

    /// Where the array's data (an object array's pickle) starts.
    var dataOffset: Int
    /// Whether the dtype holds Python objects (`'|O'`, alone or as a field of a structured dtype).
    var holdsObjects: Bool

    /// Nil when `prefix` is no `.npy` start; `needed` says how many bytes the header takes when `prefix` is too short.
    static func parse(_ prefix: [UInt8]) -> (header: NumpyHeader?, needed: Int) {
        guard prefix.count >= 10, Array(prefix[0..<6]) == magic else { return (nil, 10) }
        let wide = prefix[6] >= 2
        let lengthWidth = wide ? 4 : 2
        guard prefix.count >= 8 + lengthWidth else { return (nil, 8 + lengthWidth) }
        var length = 0
        for index in 0..<lengthWidth { length |= Int(prefix[8 + index]) << (8 * index) }
        let dataOffset = 8 + lengthWidth + length
        guard prefix.count >= dataOffset else { return (nil, dataOffset) }
        let text = String(decoding: prefix[(8 + lengthWidth)..<dataOffset], as: UTF8.self)
        return (NumpyHeader(dataOffset: dataOffset, holdsObjects: describesObjects(text)), dataOffset)
    }

    /// Whether the header's `descr` may name the object type: every spelling NumPy accepts for it holds an `O` or
    /// `o` (`'|O'`, `'O8'`, `'object'`, `'(2,)O'`, `'i4,O'`), and a backslash may escape one (`'\x4f'`), so any
    /// quoted value after `descr` with either counts. Field names count too, which only errs on the side of scanning
    /// (the data must still walk as a pickle).
    static func describesObjects(_ header: String) -> Bool {
        guard let descr = header.range(of: "'descr'") ?? header.range(of: "\"descr\"") else { return true }
        let rest = Array(header[descr.upperBound...].unicodeScalars)
        var index = 0
        while index < rest.count {
            if rest[index] == "'" || rest[index] == "\"" {
                var end = index + 1
                while end < rest.count, rest[end] != rest[index] { end += 1 }
                let code = String(String.UnicodeScalarView(rest[min(index + 1, end)..<end]))
                if !["fortran_order", "shape"].contains(code), code.contains(where: { "oO\\".contains($0) }) {
                    return true
                }
                index = end + 1
            } else {
                index += 1
            }
        }
        return false
    }
}
