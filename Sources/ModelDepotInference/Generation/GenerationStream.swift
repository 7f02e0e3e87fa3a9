/// A streamed reply: an `AsyncSequence` of ``GenerationChunk``s. Each iteration sends its own request.
///
/// ```swift
/// var reply = ""
/// for try await chunk in stream { reply += chunk.text }   // or: let generation = try await stream.collect()
/// ```
/// It ends after the chunk with ``GenerationChunk/isComplete`` set. A body that ends before the server's end
/// marker throws `incompleteStream`; cancelling the iterating task throws `cancelled`.
public struct GenerationStream: AsyncSequence, Sendable {
    public typealias Element = GenerationChunk

    private let makeNext: @Sendable () -> (() async throws -> GenerationChunk?)

    /// - Parameter makeNext: returns a fresh `next` function each time the stream is iterated.
    public init(makeNext: @escaping @Sendable () -> (() async throws -> GenerationChunk?)) {
        self.makeNext = makeNext
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let nextChunk: () async throws -> GenerationChunk?
        public mutating func next() async throws -> GenerationChunk? { try await nextChunk() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(nextChunk: makeNext()) }

    /// Only the text of each chunk.
    public var text: AsyncThrowingMapSequence<GenerationStream, String> { map(\.text) }

    /// Waits for the whole reply.
    public func collect() async throws -> Generation {
        var text = ""
        var last: GenerationChunk?
        for try await chunk in self {
            text += chunk.text
            last = chunk
        }
        return Generation(text: text, last: last)
    }
}
