import ModelDepotCore

/// Hands out the byte ranges of a file to connections, lowest offset first, and takes back what failed.
///
/// Pure state: the download run wraps it in a lock. Ranges go out in file order so the contiguous prefix —
/// what the streaming hasher can consume — grows steadily. When nothing is left to hand out, an idle
/// connection steals the second half of a range still in flight whose connection would need more than
/// ``stealThreshold`` to finish it at its measured rate, so one slow connection cannot hold up the end of a
/// download (the "slow tail"). Fast ranges are left alone: splitting them wastes the bytes the server has
/// already pushed into the victim's socket.
struct SegmentScheduler: Sendable {
    struct Segment: Equatable, Sendable {
        let id: Int
        let range: Range<Int64>
    }

    enum Next: Equatable, Sendable {
        case assigned(Segment)
        /// Everything left is in flight; wait for a connection to finish or fail.
        case wait
        case finished
    }

    private struct Assignment {
        var cursor: Int64
        var end: Int64
        let start: Int64
        let startedAt: Duration
    }

    let total: Int64
    let segmentSize: Int64
    /// The smallest remainder worth splitting for a steal.
    let minimumSteal: Int64
    /// How long a range must still need, at its connection's pace, before it is worth splitting.
    let stealThreshold: Duration
    private(set) var done: ByteRangeSet
    private var assignments: [Int: Assignment] = [:]
    private var nextID = 0

    init(
        total: Int64, segmentSize: Int64, minimumSteal: Int64, stealThreshold: Duration = .seconds(1),
        done: ByteRangeSet = ByteRangeSet()
    ) {
        self.total = total
        self.segmentSize = max(1, segmentSize)
        self.minimumSteal = max(1, minimumSteal)
        self.stealThreshold = stealThreshold
        self.done = done
    }

    var isComplete: Bool { done.contains(0..<total) }
    var inFlightCount: Int { assignments.count }

    /// - Parameter now: the time on the download's clock, to measure each connection's pace.
    mutating func next(now: Duration = .zero) -> Next {
        if isComplete { return .finished }
        if let free = unassigned().first {
            let end = min(free.upperBound, free.lowerBound + segmentSize)
            return .assigned(assign(free.lowerBound..<end, now: now))
        }
        if let steal = stealCandidate(now: now) {
            let (victimID, victim) = steal
            let remaining = victim.end - victim.cursor
            let split = victim.cursor + remaining / 2
            assignments[victimID]?.end = split
            return .assigned(assign(split..<victim.end, now: now))
        }
        return assignments.isEmpty ? .finished : .wait
    }

    /// Records bytes written for segment `id`; returns where the segment now ends (a steal may shorten it).
    @discardableResult
    mutating func recordWrite(id: Int, _ range: Range<Int64>) -> Int64 {
        done.insert(range)
        guard var assignment = assignments[id] else { return range.upperBound }
        assignment.cursor = max(assignment.cursor, range.upperBound)
        assignments[id] = assignment
        return assignment.end
    }

    /// The current end of segment `id` (it shrinks when another connection steals its tail).
    func end(of id: Int) -> Int64? { assignments[id]?.end }

    /// The next byte segment `id` has to write.
    func cursor(of id: Int) -> Int64? { assignments[id]?.cursor }

    /// Ends segment `id`, finished or not: what it did not write becomes available again.
    mutating func release(id: Int) {
        assignments[id] = nil
    }

    private mutating func assign(_ range: Range<Int64>, now: Duration) -> Segment {
        let id = nextID
        nextID += 1
        assignments[id] = Assignment(
            cursor: range.lowerBound, end: range.upperBound, start: range.lowerBound, startedAt: now)
        return Segment(id: id, range: range)
    }

    /// Missing ranges that no connection is working on, ascending.
    private func unassigned() -> [Range<Int64>] {
        var busy = done
        for assignment in assignments.values where assignment.cursor < assignment.end {
            busy.insert(assignment.cursor..<assignment.end)
        }
        return busy.gaps(upTo: total)
    }

    private func stealCandidate(now: Duration) -> (Int, Assignment)? {
        let candidates = assignments.filter { _, assignment in
            guard assignment.end - assignment.cursor >= 2 * minimumSteal else { return false }
            let elapsed = now - assignment.startedAt
            guard elapsed >= stealThreshold / 4 else { return false }
            let written = Double(assignment.cursor - assignment.start)
            guard written > 0 else { return elapsed >= stealThreshold }
            let secondsLeft = Double(assignment.end - assignment.cursor) * elapsed.seconds / written
            return secondsLeft >= stealThreshold.seconds
        }
        let best = candidates.max { lhs, rhs in
            (lhs.value.end - lhs.value.cursor, rhs.key) < (rhs.value.end - rhs.value.cursor, lhs.key)
        }
        return best.map { ($0.key, $0.value) }
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
