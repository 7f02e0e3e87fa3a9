import Synchronization

/// Bytes written just past the hashed prefix of a download, kept where they already lie (the transport's buffers)
/// so the hasher takes them from memory instead of reading them back from the partial file.
///
/// Connections fill a file out of order; SHA-256 needs it in order. A chunk written within `capacity` bytes of
/// where the hasher stands is held until the hasher reaches it; one further ahead is not (its bytes are read back
/// from the page cache when their turn comes), so the memory held stays under `capacity` whatever the file's size
/// or the number of connections. Held chunks are references to buffers that exist anyway: holding one copies
/// nothing. What counts against `capacity` is the memory held chunks keep alive — each transport buffer once,
/// however many chunks are slices of it, and all of it, however few of its bytes were read — so small reads into
/// large buffers cannot hold more than the window.
final class HashWindow: Sendable {
    struct Piece: Sendable {
        let chunk: BodyChunk
        let count: Int
        /// The buffer it is a slice of (nil: its own bytes) and that buffer's size, at least `count`.
        let storage: UInt?
        let retained: Int
    }

    private struct State {
        /// Where the hasher stands: nothing below it is held again.
        var hashed: Int64 = 0
        var held: [Int64: Piece] = [:]
        /// Memory the held pieces keep alive.
        var heldBytes = 0
        /// How many held pieces share each transport buffer, which counts once.
        var sharing: [UInt: Int] = [:]
        /// Bytes the hasher took from memory and bytes it had to read back, for the run's trace.
        var fromMemory: Int64 = 0
        var readBack: Int64 = 0
    }

    /// The most bytes held, counted from the hasher's position.
    let capacity: Int64
    private let state: Mutex<State>

    init(capacity: Int64, hashedFrom start: Int64 = 0) {
        self.capacity = capacity
        state = Mutex(State(hashed: start))
    }

    /// The first `count` bytes of `chunk` were written at `offset`: held when they lie within the window.
    func offer(_ chunk: BodyChunk, count: Int, at offset: Int64) {
        guard count > 0 else { return }
        let (storage, size) = chunk.retained
        let retained = max(count, size)
        state.withLock { state in
            let added = storage.flatMap { state.sharing[$0] } == nil ? retained : 0
            guard offset >= state.hashed, offset + Int64(count) <= state.hashed + capacity,
                Int64(state.heldBytes + added) <= capacity, state.held[offset] == nil
            else { return }
            state.held[offset] = Piece(chunk: chunk, count: count, storage: storage, retained: retained)
            state.heldBytes += added
            if let storage { state.sharing[storage, default: 0] += 1 }
        }
    }

    /// The held piece that starts at `offset`, no longer held; the hasher stands past it once it is hashed.
    func take(at offset: Int64) -> Piece? {
        state.withLock { state in
            guard let piece = state.held.removeValue(forKey: offset) else { return nil }
            Self.release(piece, in: &state)
            state.fromMemory += Int64(piece.count)
            state.hashed = offset + Int64(piece.count)
            // Overlapping writes (a range sent again after a retry) leave pieces the hasher has now passed.
            if state.held.keys.contains(where: { $0 < state.hashed }) {
                for (start, passed) in state.held where start < state.hashed {
                    state.held[start] = nil
                    Self.release(passed, in: &state)
                }
            }
            return piece
        }
    }

    /// Stops counting `piece`, and its buffer once no other held piece shares it.
    private static func release(_ piece: Piece, in state: inout State) {
        guard let storage = piece.storage else {
            state.heldBytes -= piece.retained
            return
        }
        let left = state.sharing[storage, default: 1] - 1
        if left == 0 {
            state.sharing[storage] = nil
            state.heldBytes -= piece.retained
        } else {
            state.sharing[storage] = left
        }
    }

    /// The hasher stands at `offset`, having read the bytes from `from` back from the file (nil: none): pieces
    /// that start below it (none, when writes were disjoint) are dropped, and nothing below it is held from now
    /// on. Returns the start of the next held piece, where reading back must stop.
    @discardableResult
    func advance(to offset: Int64, readBackFrom from: Int64? = nil) -> Int64? {
        state.withLock { state in
            if let from { state.readBack += offset - from }
            state.hashed = offset
            var next: Int64?
            for (start, piece) in state.held {
                if start < offset {
                    state.held[start] = nil
                    Self.release(piece, in: &state)
                } else if start < (next ?? .max) {
                    next = start
                }
            }
            return next
        }
    }

    /// How the hasher got its bytes: (from memory, read back from the file).
    var sources: (fromMemory: Int64, readBack: Int64) { state.withLock { ($0.fromMemory, $0.readBack) } }

    /// Memory the held pieces keep alive now.
    var heldBytes: Int { state.withLock { $0.heldBytes } }
}
