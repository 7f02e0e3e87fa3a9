import Foundation
import ModelDepot

/// What loading a model would take against what the machine has now: its weights as they are on disk, plus the
/// cache its runtime allocates (for llama.cpp, the KV cache of the context it is started with), as LM Studio's fit
/// estimate counts them.
public struct MemoryFit: Sendable, Equatable {
    public var weightBytes: Int64
    public var cacheBytes: Int64
    /// What the system says is available; nil when it does not say (then nothing is refused).
    public var availableBytes: Int64?
    /// What other models hold of ``availableBytes`` that the system does not count as taken: the estimates of
    /// those still loading, and the weights of those loaded (mapped from disk, so the system counts them as free).
    public var reservedBytes: Int64 = 0
    /// False when the runtime's cache could not be sized (a GGUF header without the figures): ``cacheBytes`` is 0
    /// and the estimate is a lower bound.
    public var cacheKnown = true

    public init(weightBytes: Int64, cacheBytes: Int64, availableBytes: Int64?) {
        self.weightBytes = weightBytes
        self.cacheBytes = cacheBytes
        self.availableBytes = availableBytes
    }

    public var neededBytes: Int64 { weightBytes + cacheBytes }

    /// False when the model clearly does not fit: it needs more than is available once the models loading now
    /// have what they need.
    public var fits: Bool { availableBytes.map { neededBytes <= $0 - reservedBytes } ?? true }

    /// For people: "needs about 4.4 GB (4.1 GB of weights, 288 MB of cache); 2.0 GB available".
    public var summary: String {
        var text =
            cacheKnown
            ? "needs about \(ByteFormat.string(neededBytes)) (\(ByteFormat.string(weightBytes)) of weights, \(ByteFormat.string(cacheBytes)) of cache)"
            : "needs at least \(ByteFormat.string(weightBytes)) for its weights (its header does not give the cache's size)"
        if let availableBytes {
            text += "; \(ByteFormat.string(max(0, availableBytes - reservedBytes))) available"
            if reservedBytes > 0 {
                text += " after the \(ByteFormat.string(reservedBytes)) other loaded or loading models hold"
            }
        }
        return text
    }
}
