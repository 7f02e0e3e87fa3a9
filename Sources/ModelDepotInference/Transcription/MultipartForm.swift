import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields and one file, as OpenAI's audio routes take them.
struct MultipartForm {
    /// A boundary that does not occur in any part (checked when the body is built).
    let boundary: String
    private var parts: [(headers: String, body: Data)] = []

    init(boundary: String = "modeldepot-" + UUID().uuidString) {
        self.boundary = boundary
    }

    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    mutating func add(_ name: String, _ value: String) {
        parts.append(("Content-Disposition: form-data; name=\"\(Self.quoted(name))\"\r\n", Data(value.utf8)))
    }

    mutating func addFile(_ name: String, fileName: String, mediaType: String, data: Data) {
        parts.append(
            (
                "Content-Disposition: form-data; name=\"\(Self.quoted(name))\"; filename=\"\(Self.quoted(fileName))\"\r\n"
                    + "Content-Type: \(mediaType)\r\n", data
            ))
    }

    /// The encoded body; nil when a part contains the boundary (build again with another one).
    func encoded() -> [UInt8]? {
        let delimiter = Data("--\(boundary)".utf8)
        var body = Data()
        for part in parts {
            if part.body.range(of: delimiter) != nil { return nil }
            body.append(delimiter)
            body.append(Data("\r\n\(part.headers)\r\n".utf8))
            body.append(part.body)
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        return Array(body)
    }

    /// A value for a quoted header parameter: RFC 7578 §4.2 escapes `"` and line breaks as percent codes.
    private static func quoted(_ value: String) -> String {
        value.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }
}
