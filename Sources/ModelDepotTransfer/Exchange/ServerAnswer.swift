import Foundation

/// A short, printable summary of an error body, to quote in a message: an S3-style XML error becomes
/// `AccessDenied: Request has expired`, anything else its first printable text.
enum ServerAnswer {
    static func summary(of bytes: [UInt8], limit: Int = 200) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        if let code = element("Code", in: text) {
            let message = element("Message", in: text)
            return message.map { "\(code): \($0)" } ?? code
        }
        let printable = text.unicodeScalars.map { $0.properties.isWhitespace || $0.value < 0x20 ? " " : Character($0) }
        let collapsed = String(printable).split(separator: " ").joined(separator: " ")
        return collapsed.count > limit ? String(collapsed.prefix(limit)) + "…" : collapsed
    }

    private static func element(_ name: String, in text: String) -> String? {
        guard let open = text.range(of: "<\(name)>"),
            let close = text.range(of: "</\(name)>", range: open.upperBound..<text.endIndex)
        else { return nil }
        let value = text[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        return value.isEmpty ? nil : String(value.prefix(200))
    }
}
