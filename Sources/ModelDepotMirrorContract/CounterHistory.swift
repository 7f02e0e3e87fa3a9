/// A mirror's counters over the last ``capacity`` intervals (an hour of ten-second intervals by default): what its
/// dashboard's charts draw. Fed the counters as they stand now, at any times (``record(_:at:)``); an interval
/// holds the values last seen in it, so what a counter rose by in an interval is known whenever it was looked at.
/// Memory is bounded by ``capacity`` + 2 intervals, whatever the uptime.
public struct CounterHistory: Sendable, Equatable {
    /// One interval of the window: each counter's value at its end, and what it rose by during it.
    public struct Interval: Sendable, Equatable {
        public var values: [Int64]
        /// nil for the first interval ever recorded: it has nothing before it to compare with.
        public var increases: [Int64]?

        public init(values: [Int64], increases: [Int64]?) {
            self.values = values
            self.increases = increases
        }
    }

    public let interval: Duration
    public let capacity: Int
    private var buckets: [(index: Int64, values: [Int64])] = []

    public init(interval: Duration = .seconds(10), capacity: Int = 360) {
        precondition(interval > .zero && capacity > 0)
        self.interval = interval
        self.capacity = capacity
    }

    /// The counters (and gauges) as they stand at `time`, on a monotonic clock.
    public mutating func record(_ values: [Int64], at time: Duration) {
        let index = Int64(time / interval)
        if let last = buckets.last, index <= last.index {
            buckets[buckets.count - 1].values = values
        } else {
            if let last = buckets.last {
                // Intervals nobody looked in carry the values they ended with; after a long silence only the
                // window's worth is kept.
                for missing in max(last.index + 1, index - Int64(capacity) - 1)..<index {
                    buckets.append((missing, last.values))
                }
            }
            buckets.append((index, values))
        }
        if buckets.count > capacity + 2 { buckets.removeFirst(buckets.count - capacity - 2) }
    }

    /// The window's ``capacity`` whole intervals before the one `now` is in, oldest first; nil where nothing was
    /// recorded yet (before the mirror started). After the last record, values carry on unchanged.
    public func intervals(at now: Duration) -> [Interval?] {
        let current = Int64(now / interval)
        guard let first = buckets.first, let last = buckets.last else {
            return Array(repeating: nil, count: capacity)
        }
        return (1...capacity).reversed().map { ago -> Interval? in
            let index = current - Int64(ago)
            guard index >= first.index else { return nil }
            guard index <= last.index else {
                return Interval(values: last.values, increases: last.values.map { _ in 0 })
            }
            let position = Int(index - first.index)
            let values = buckets[position].values
            guard position > 0 else { return Interval(values: values, increases: nil) }
            let before = buckets[position - 1].values
            // A counter never goes down; one that did (a restart) rose by nothing.
            return Interval(values: values, increases: zip(values, before).map { max(0, $0 - $1) })
        }
    }

    /// Intervals held in memory.
    public var storedIntervals: Int { buckets.count }

    public static func == (one: CounterHistory, other: CounterHistory) -> Bool {
        one.interval == other.interval && one.capacity == other.capacity
            && one.buckets.map(\.index) == other.buckets.map(\.index)
            && one.buckets.map(\.values) == other.buckets.map(\.values)
    }
}
