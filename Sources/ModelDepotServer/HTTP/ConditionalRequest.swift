import Foundation
import HTTPTypes

/// What a request's preconditions (RFC 9110 §13) make of a file answer: `If-None-Match` turns a GET or HEAD of
/// the version the client has into a 304, and an `If-Range` that names another version turns a Range request
/// into a whole 200 — a client resuming a file that changed must not splice two versions together.
enum ConditionalRequest: Equatable {
    /// Answer as asked (a Range, when there is one, applies).
    case proceed
    /// The client has this version: 304, no body.
    case notModified
    /// The client's partial copy is of another version: ignore the Range and send the whole file.
    case ignoreRange

    /// - Parameters:
    ///   - etag: the current entity tag, unquoted (as the mirror sends it, quoted and strong).
    ///   - lastModified: the file's modification time, whole seconds (what `Last-Modified` says).
    ///   - now: when the answer is made; a date validator is only strong if the file is older than a second.
    static func evaluate(_ headers: HTTPFields, etag: String, lastModified: Date, now: Date = Date()) -> Self {
        let current = "\"\(etag)\""
        if let ifNoneMatch = headers[.ifNoneMatch] {
            // Weak comparison: W/"x" matches "x".
            let tags = ifNoneMatch.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if tags.contains("*") || tags.contains(where: { Self.opaque($0) == current }) { return .notModified }
        } else if let since = headers[.ifModifiedSince].flatMap(HTTPDate.parse), lastModified <= since {
            return .notModified
        }
        guard headers[.range] != nil, let ifRange = headers[.ifRange]?.trimmingCharacters(in: .whitespaces) else {
            return .proceed
        }
        if ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/") {
            // Strong comparison only: a weak tag never matches.
            return ifRange == current ? .proceed : .ignoreRange
        }
        guard let date = HTTPDate.parse(ifRange), now.timeIntervalSince(lastModified) >= 1 else { return .ignoreRange }
        return date == lastModified ? .proceed : .ignoreRange
    }

    private static func opaque(_ tag: String) -> String {
        tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
    }
}

/// HTTP's date format (RFC 9110 §5.6.7, IMF-fixdate), to whole seconds. Written and read by hand over
/// `gmtime_r`/`timegm`: every file answer carries one, and making a `DateFormatter` for each cost more than the
/// rest of a small file's answer.
enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func string(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return "\(weekdays[Int(parts.tm_wday)]), \(digits(parts.tm_mday, 2)) \(months[Int(parts.tm_mon)]) "
            + "\(digits(parts.tm_year + 1900, 4)) \(digits(parts.tm_hour, 2)):\(digits(parts.tm_min, 2)):"
            + "\(digits(parts.tm_sec, 2)) GMT"
    }

    /// The date an IMF-fixdate names; nil for anything else.
    static func parse(_ text: String) -> Date? {
        let fields = text.trimmingCharacters(in: .whitespaces).split(separator: " ")
        guard fields.count == 6, fields[0].hasSuffix(","), weekdays.contains(String(fields[0].dropLast())),
            fields[5] == "GMT", let month = months.firstIndex(of: String(fields[2])),
            let day = number(fields[1], digits: 2), (1...31).contains(day),
            let year = number(fields[3], digits: 4)
        else { return nil }
        let time = fields[4].split(separator: ":", omittingEmptySubsequences: false)
        guard time.count == 3, let hour = number(time[0], digits: 2), let minute = number(time[1], digits: 2),
            let second = number(time[2], digits: 2), hour < 24, minute < 60, second <= 60
        else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return Date(timeIntervalSince1970: Double(timegm(&parts)))
    }

    /// The time as `Last-Modified` can say it: whole seconds.
    static func truncated(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }

    private static func digits(_ value: Int32, _ count: Int) -> String {
        let text = String(value)
        return text.count >= count ? text : String(repeating: "0", count: count - text.count) + text
    }

    private static func number(_ text: Substring, digits: Int) -> Int? {
        guard text.count == digits, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }
}

/// `Content-Disposition` for a file name from a repository (RFC 6266). A name that is plain printable ASCII goes in
/// the quoted `filename` as it is. Any other also gets `filename*` (RFC 8187: its UTF-8, percent-encoded), which
/// wget, browsers and Python prefer, and a quoted fallback with `_` for what it cannot carry: non-ASCII, control
/// characters, and `"` and `\` too, because curl -J reads a quoted name up to its first `"` and cuts it at a `\`
/// (RFC 9110's quoted-pair escapes would give it `quo\`, then the URL's own name).
enum ContentDisposition {
    static func inline(filename: String) -> String {
        let plain = filename.unicodeScalars.allSatisfy {
            $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F && $0 != "\"" && $0 != "\\"
        }
        if plain { return "inline; filename=\"\(filename)\"" }
        let fallback = String(
            String.UnicodeScalarView(
                filename.unicodeScalars.map { scalar in
                    scalar.isASCII && scalar.value >= 0x20 && scalar.value != 0x7F && scalar != "\"" && scalar != "\\"
                        ? scalar : "_"
                }))
        return "inline; filename=\"\(fallback)\"; filename*=UTF-8''" + percentEncoded(filename)
    }

    /// RFC 8187's `attr-char` set stays; every other byte is `%XX`.
    private static func percentEncoded(_ text: String) -> String {
        let attrChars = Set("!#$&+-.^_`|~".utf8).union(Set("0123456789".utf8))
            .union(Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8))
        return text.utf8.map { attrChars.contains($0) ? String(UnicodeScalar($0)) : String(format: "%%%02X", $0) }
            .joined()
    }
}
