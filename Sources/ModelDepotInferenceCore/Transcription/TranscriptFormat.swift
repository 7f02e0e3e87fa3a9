import Foundation
import ModelDepotCore

/// The ways a transcript is written out. Subtitles are rendered here from the segments, so every format works
/// with any server that returns timed segments, whatever formats it offers itself.
public enum TranscriptFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// The text alone.
    case text
    /// The whole ``Transcript`` as JSON.
    case json
    /// SubRip subtitles: numbered cues, `00:00:01,250 --> 00:00:03,000`.
    case srt
    /// WebVTT subtitles: a `WEBVTT` header, cues with `00:00:01.250 --> 00:00:03.000`.
    case vtt

    /// The usual file extension, without the dot.
    public var fileExtension: String { self == .text ? "txt" : rawValue }

    /// Whether this format needs segment timings.
    public var needsTimings: Bool { self == .srt || self == .vtt }
}

extension Transcript {
    /// The transcript written in `format`. Subtitle cues are the segments, their text on one line each; a
    /// transcript without segments gives subtitles with no cues (``TranscriptFormat/needsTimings`` tells
    /// callers to check first).
    public func rendered(as format: TranscriptFormat) -> String {
        switch format {
        case .text:
            return text.trimmingCharacters(in: .whitespacesAndNewlines) + "\n"
        case .json:
            return renderedJSON()
        case .srt:
            return cues.enumerated().map { index, cue in
                "\(index + 1)\n\(Self.timestamp(cue.start, separator: ",")) --> \(Self.timestamp(cue.end, separator: ","))\n\(cue.text)\n"
            }.joined(separator: "\n")
        case .vtt:
            let body = cues.map { cue in
                "\(Self.timestamp(cue.start, separator: ".")) --> \(Self.timestamp(cue.end, separator: "."))\n\(cue.text)\n"
            }
            return (["WEBVTT\n"] + body).joined(separator: "\n")
        }
    }

    /// Segments as cues: text on one line, no blank lines or `-->` (either would end or break a cue), times
    /// never running backwards, and segments with no words dropped.
    private var cues: [(start: Double, end: Double, text: String)] {
        var result: [(start: Double, end: Double, text: String)] = []
        var previousEnd = 0.0
        for segment in segments {
            let words = segment.text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
            let text = words.replacingOccurrences(of: "-->", with: "->")
            guard !text.isEmpty else { continue }
            let start = max(segment.start.isFinite ? segment.start : 0, previousEnd, 0)
            let end = max(segment.end.isFinite ? segment.end : start, start)
            result.append((start, end, text))
            previousEnd = start
        }
        return result
    }

    private func renderedJSON() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding plain numbers and strings cannot fail; an empty object would hide a bug, so say so.
        guard let data = try? encoder.encode(self) else { return "{}\n" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// `HH:MM:SS,mmm` (SRT) or `HH:MM:SS.mmm` (WebVTT), rounded to the millisecond.
    static func timestamp(_ seconds: Double, separator: String) -> String {
        let milliseconds = Int((max(0, seconds) * 1000).rounded())
        let hours = milliseconds / 3_600_000
        let minutes = milliseconds / 60_000 % 60
        let secs = milliseconds / 1000 % 60
        let millis = milliseconds % 1000
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(secs, 2))\(separator)\(pad(millis, 3))"
    }
}
