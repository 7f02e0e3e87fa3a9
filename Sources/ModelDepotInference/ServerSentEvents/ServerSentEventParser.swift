import ModelDepot

/// Turns the bytes of a `text/event-stream` body into events, incrementally, following the HTML
/// standard's rules: lines end in CRLF, LF or CR (also when a CRLF is split across two reads); a line
/// starting with `:` is a comment; `data:` lines accumulate, joined with `\n`; one space after the colon is
/// dropped; an event is dispatched by a blank line, and one with no data is not dispatched; a leading BOM is
/// skipped; an event not ended by a blank line when the body ends is discarded.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// for try await chunk in body {
///     for event in try chunk.withUnsafeBytes({ try parser.parse($0) }) { … }
/// }
/// ```
public struct ServerSentEventParser: Sendable {
    /// The longest line or event accepted; a server sending more without a line break is treated as broken
    /// rather than buffered without bound.
    public let maximumEventBytes: Int

    /// The last `retry:` value, in milliseconds.
    public private(set) var retryMilliseconds: Int?
    /// Comment lines seen so far (servers send them as keep-alive pings).
    public private(set) var commentCount = 0

    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var eventType: String?
    private var lastEventID: String?
    private var afterCarriageReturn = false
    private var atStreamStart = true

    public init(maximumEventBytes: Int = 16 << 20) {
        self.maximumEventBytes = maximumEventBytes
    }

    /// True when bytes of an unfinished line or event are buffered: a body ending now would lose them.
    public var hasPendingEvent: Bool { !line.isEmpty || hasData || eventType != nil }

    /// Feeds the next bytes of the body and returns the events they complete.
    public mutating func parse(_ bytes: some Sequence<UInt8>) throws -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\n"):
                if let event = try endLine() { events.append(event) }
            case UInt8(ascii: "\r"):
                afterCarriageReturn = true
                if let event = try endLine() { events.append(event) }
            default:
                line.append(byte)
                if line.count > maximumEventBytes { throw Self.tooLong(maximumEventBytes) }
            }
        }
        return events
    }

    private mutating func endLine() throws -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if atStreamStart {
            atStreamStart = false
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
        }
        if line.isEmpty { return dispatch() }
        if line[0] == UInt8(ascii: ":") {
            commentCount += 1
            return nil
        }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let name = colon.map { line[..<$0] } ?? line[...]
        var valueStart = colon.map { $0 + 1 } ?? line.endIndex
        if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = line[valueStart...]
        switch String(decoding: name, as: UTF8.self) {
        case "data":
            if hasData { data.append(UInt8(ascii: "\n")) }
            data.append(contentsOf: value)
            hasData = true
            if data.count > maximumEventBytes { throw Self.tooLong(maximumEventBytes) }
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "id":
            if !value.contains(0) { lastEventID = String(decoding: value, as: UTF8.self) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
                retryMilliseconds = Int(String(decoding: value, as: UTF8.self))
            }
        default:
            break  // unknown fields are ignored, as the standard says
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
            eventType = nil
        }
        guard hasData else { return nil }
        let type = eventType.flatMap { $0.isEmpty ? nil : $0 } ?? "message"
        return ServerSentEvent(type: type, data: String(decoding: data, as: UTF8.self), lastEventID: lastEventID)
    }

    private static func tooLong(_ limit: Int) -> ModelDepotError {
        ModelDepotError(
            .protocolViolation,
            "The server sent an event stream line or event longer than \(limit) bytes; it is not a valid reply stream.")
    }
}
