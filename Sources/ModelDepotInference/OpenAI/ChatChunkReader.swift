/// Reads the few fields of a streamed chat chunk the client needs — `choices[0].delta.content`,
/// `choices[0].finish_reason`, and whether `usage` or `error` is present — straight from the bytes.
///
/// One chunk arrives per token, and `JSONDecoder` was a quarter of the client's CPU per token (measured with
/// perf on bench/inference.sh). This reader handles all of JSON's syntax (strings with every escape, numbers,
/// nesting) but builds nothing it does not return. It answers nil for anything it does not accept, and the
/// caller then decodes with `JSONDecoder`, whose errors are the ones users see.
struct ChatChunkReader {
    struct Fields: Equatable {
        var content: String?
        var finishReason: String?
        /// `usage` or `error` is present: the caller decodes the event fully.
        var needsFullDecode = false
    }

    private let bytes: [UInt8]
    private var index = 0

    static func read(_ bytes: [UInt8]) -> Fields? {
        var reader = ChatChunkReader(bytes: bytes)
        var fields = Fields()
        guard (try? reader.readTopLevel(into: &fields)) != nil else { return nil }
        reader.skipWhitespace()
        return reader.index == bytes.count ? fields : nil
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private struct Malformed: Error {}

    private mutating func readTopLevel(into fields: inout Fields) throws {
        try readObject { reader, key in
            switch key {
            case "choices":
                if reader.peekNull() { return try reader.skipValue() }
                var isFirst = true
                try reader.readArray { reader in
                    if isFirst {
                        isFirst = false
                        try reader.readChoice(into: &fields)
                    } else {
                        try reader.skipValue()
                    }
                }
            case "usage", "error":
                if !reader.peekNull() { fields.needsFullDecode = true }
                try reader.skipValue()
            default:
                try reader.skipValue()
            }
        }
    }

    private mutating func readChoice(into fields: inout Fields) throws {
        if peekNull() { return try skipValue() }
        try readObject { reader, key in
            switch key {
            case "delta":
                if reader.peekNull() { return try reader.skipValue() }
                try reader.readObject { reader, key in
                    if key == "content", !reader.peekNull() {
                        fields.content = try reader.readString()
                    } else {
                        try reader.skipValue()
                    }
                }
            case "finish_reason":
                if reader.peekNull() { try reader.skipValue() } else { fields.finishReason = try reader.readString() }
            default:
                try reader.skipValue()
            }
        }
    }

    // MARK: - JSON syntax

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
    }

    private mutating func expect(_ byte: UInt8) throws {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { throw Malformed() }
        index += 1
    }

    private mutating func peek() -> UInt8? {
        skipWhitespace()
        return index < bytes.count ? bytes[index] : nil
    }

    private mutating func peekNull() -> Bool { peek() == UInt8(ascii: "n") }

    private mutating func readObject(_ member: (inout ChatChunkReader, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        if peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            let key = try readString()
            try expect(UInt8(ascii: ":"))
            try member(&self, key)
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return
            default: throw Malformed()
            }
        }
    }

    private mutating func readArray(_ element: (inout ChatChunkReader) throws -> Void) throws {
        try expect(UInt8(ascii: "["))
        if peek() == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            try element(&self)
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return
            default: throw Malformed()
            }
        }
    }

    private mutating func skipValue() throws {
        switch peek() {
        case UInt8(ascii: "{"): try readObject { reader, _ in try reader.skipValue() }
        case UInt8(ascii: "["): try readArray { reader in try reader.skipValue() }
        case UInt8(ascii: "\""): _ = try readString()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case .some(let byte) where byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte): skipNumber()
        default: throw Malformed()
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw Malformed() }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw Malformed() }
        index += count
    }

    private mutating func skipNumber() {
        while index < bytes.count, "+-0123456789.eE".utf8.contains(bytes[index]) { index += 1 }
    }

    private mutating func readString() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = index
        // The common case: no escapes, so the bytes between the quotes are the string.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
            guard bytes[index] >= 0x20 else { throw Malformed() }
            index += 1
        }
        guard index < bytes.count else { throw Malformed() }
        var utf8 = Array(bytes[start..<index])
        while bytes[index] == UInt8(ascii: "\\") {
            index += 1
            guard index < bytes.count else { throw Malformed() }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try readHex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    else { throw Malformed() }
                    index += 2
                    let low = try readHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw Malformed() }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw Malformed() }
                utf8.append(contentsOf: String(Character(unicode)).utf8)
            default:
                throw Malformed()
            }
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
                guard bytes[index] >= 0x20 else { throw Malformed() }
                utf8.append(bytes[index])
                index += 1
            }
            guard index < bytes.count else { throw Malformed() }
        }
        index += 1  // the closing quote
        guard let string = String(validating: utf8, as: UTF8.self) else { throw Malformed() }
        return string
    }

    private mutating func readHex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw Malformed() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw Malformed()
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
