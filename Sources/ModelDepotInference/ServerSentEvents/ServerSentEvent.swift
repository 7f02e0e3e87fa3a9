/// One event of a `text/event-stream` body.
public struct ServerSentEvent: Sendable, Hashable {
    /// The `event:` field; `message` when the server sent none.
    public var type: String
    /// The `data:` lines joined with `\n`.
    public var data: String
    /// The last `id:` seen in the stream up to this event.
    public var lastEventID: String?

    public init(type: String = "message", data: String, lastEventID: String? = nil) {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
    }
}
