import Foundation

/// The sidecar next to a partial download: which bytes are on disk and which version of the file they are.
///
/// Saved (by `ResumeRecordFile`, whole or not at all) after the bytes it describes have been written, so
/// after a crash at any instant it never claims bytes that are not in the partial file.
package struct ResumeRecord: Codable, Equatable, Sendable {
    package static let currentVersion = 1

    package var version: Int = ResumeRecord.currentVersion
    package var url: String
    package var totalSize: Int64
    package var validators: ResourceValidators
    package var completed: ByteRangeSet
    package var expectedSHA256: String?

    package init(
        url: String, totalSize: Int64, validators: ResourceValidators, completed: ByteRangeSet,
        expectedSHA256: String? = nil
    ) {
        self.url = url
        self.totalSize = totalSize
        self.validators = validators
        self.completed = completed
        self.expectedSHA256 = expectedSHA256
    }

    /// Reads the sidecar at `path`; nil when it is missing, unreadable or from another format version.
    package static func load(from path: String) -> ResumeRecord? {
        guard let data = FileManager.default.contents(atPath: path),
            let record = try? JSONDecoder().decode(ResumeRecord.self, from: data),
            record.version == currentVersion, record.totalSize >= 0
        else { return nil }
        return record
    }

    /// The record as JSON, written by hand: a download saves it every megabyte, and `JSONEncoder` cost
    /// ~0.1 ms a save. ``load(from:)`` reads it back with `JSONDecoder`; a test checks the two agree.
    package func jsonText() -> String {
        let ranges = completed.ranges.map { "[\($0.lowerBound),\($0.upperBound)]" }.joined(separator: ",")
        var fields = [
            "\"completed\":[\(ranges)]",
            "\"totalSize\":\(totalSize)",
            "\"url\":\(Self.quoted(url))",
            "\"validators\":{"
                + [
                    validators.etag.map { "\"etag\":\(Self.quoted($0))" },
                    validators.lastModified.map { "\"lastModified\":\(Self.quoted($0))" },
                ].compactMap { $0 }.joined(separator: ",") + "}",
            "\"version\":\(version)",
        ]
        if let expectedSHA256 { fields.insert("\"expectedSHA256\":\(Self.quoted(expectedSHA256))", at: 1) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped, everything else as is.
    private static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\u{00}"..."\u{1F}":
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
