import ModelDepotCore

/// Decodes the text arguments of protocol 0's `STRING` and `UNICODE` opcodes as Python does, so an escaped name
/// (`S'o\x73'`) is read as the name Python imports; nil where Python would fail or the result is no Swift string.
enum PickleText {
    /// `STRING`'s argument: a quoted `repr`, unquoted and unescaped like `codecs.escape_decode`, then UTF-8 (what
    /// `torch.load` decodes with). Nil when it is not quoted (Python raises); `.other`-worthy bytes are nil too.
    static func string(_ line: ArraySlice<UInt8>) -> (quoted: Bool, text: String?) {
        guard line.count >= 2, let first = line.first, first == line.last, first == 0x22 || first == 0x27 else {
            return (false, nil)
        }
        let body = Array(line.dropFirst().dropLast())
        var out: [UInt8] = []
        var index = 0
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 0x30...0x39: byte - 0x30
            case 0x41...0x46: byte - 0x41 + 10
            case 0x61...0x66: byte - 0x61 + 10
            default: nil
            }
        }
        while index < body.count {
            let byte = body[index]
            index += 1
            guard byte == 0x5C else {
                out.append(byte)
                continue
            }
            guard index < body.count else { return (true, nil) }  // a trailing backslash: Python raises
            let escaped = body[index]
            index += 1
            switch escaped {
            case 0x0A: break  // a backslash-newline continues the line
            case 0x5C, 0x27, 0x22: out.append(escaped)
            case UInt8(ascii: "a"): out.append(0x07)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "v"): out.append(0x0B)
            case 0x30...0x37:
                var value = Int(escaped - 0x30)
                for _ in 0..<2 where index < body.count && (0x30...0x37).contains(body[index]) {
                    value = value * 8 + Int(body[index] - 0x30)
                    index += 1
                }
                out.append(UInt8(truncatingIfNeeded: value))
            case UInt8(ascii: "x"):
                guard index + 1 < body.count, let high = hex(body[index]), let low = hex(body[index + 1]) else {
                    return (true, nil)
                }
                out.append(high << 4 | low)
                index += 2
            default:
                out.append(0x5C)
                out.append(escaped)
            }
        }
        return (true, String(validating: out, as: UTF8.self))
    }

    /// `UNICODE`'s argument, decoded like `raw-unicode-escape`: bytes are Latin-1 characters, and `\uXXXX` or
    /// `\UXXXXXXXX` after an odd number of backslashes is an escape. Nil where Python raises or for a lone surrogate.
    static func unicode(_ line: ArraySlice<UInt8>) -> String? {
        let bytes = Array(line)
        var scalars = String.UnicodeScalarView()
        var index = 0
        while index < bytes.count {
            guard bytes[index] == 0x5C else {
                scalars.append(Unicode.Scalar(bytes[index]))
                index += 1
                continue
            }
            var backslashes = 0
            while index < bytes.count, bytes[index] == 0x5C {
                backslashes += 1
                index += 1
            }
            let escapes =
                backslashes % 2 == 1 && index < bytes.count && (bytes[index] == 0x75 || bytes[index] == 0x55)
            for _ in 0..<(escapes ? backslashes - 1 : backslashes) { scalars.append("\\") }
            guard escapes else { continue }
            let width = bytes[index] == 0x75 ? 4 : 8
            index += 1
            guard index + width <= bytes.count,
                let value = UInt32(String(decoding: bytes[index..<index + width], as: UTF8.self), radix: 16),
                let scalar = Unicode.Scalar(value)
            else { return nil }
            scalars.append(scalar)
            index += width
        }
        return String(scalars)
    }

    /// Whether `text` can name a module or attribute Python's import system finds (dotted identifiers): a scan
    /// that runs into another format's bytes makes "imports" like `{"dtype` that could never load.
    static func isImportable(_ text: String) -> Bool {
        !text.isEmpty && !text.hasPrefix(".") && !text.hasSuffix(".") && !text.contains("..")
            && text.unicodeScalars.allSatisfy {
                $0 == "_" || $0 == "." || $0 == "-" || $0.properties.isAlphabetic || ("0"..."9").contains($0)
            }
    }
}
