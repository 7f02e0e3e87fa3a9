/// Decides how many connections a download uses, from the throughput it measures.
///
/// The same shape TCP uses: a slow start that doubles the connections while each doubling pays off (a CDN
/// that caps each connection reaches full speed within a few samples), then one more at a time while
/// throughput keeps growing, and halving on errors and 429s, so a throttled server sees fewer connections
/// and a fast one more. Pure: the engine feeds it samples and asks for the target; tests feed it numbers.
package struct ConcurrencyController: Sendable, Equatable {
    package let minimum: Int
    package let maximum: Int
    package private(set) var target: Int
    /// Relative gain over the baseline that justifies one more connection.
    package var growthThreshold: Double = 0.1
    /// Relative gain a doubling must bring for slow start to double again.
    package var slowStartThreshold: Double = 0.25
    /// Doubling until a doubling stops paying off or a failure happens.
    package private(set) var inSlowStart = true
    /// Throughput (bytes/s) measured at the current connection count.
    private var baseline: Double?
    /// After a decrease the next sample only sets the baseline: the lower level must be measured first.
    private var holdNextSample = false

    package init(initial: Int, maximum: Int, minimum: Int = 1) {
        self.minimum = max(1, minimum)
        self.maximum = max(self.minimum, maximum)
        self.target = min(max(initial, self.minimum), self.maximum)
    }

    /// Records the throughput of all connections together over the last measurement window.
    package mutating func record(throughput: Double) {
        if holdNextSample {
            baseline = throughput
            holdNextSample = false
            return
        }
        guard target < maximum else {
            baseline = max(baseline ?? 0, throughput)
            return
        }
        guard let baseline else {
            baseline = throughput
            grow()
            return
        }
        if inSlowStart {
            if throughput >= baseline * (1 + slowStartThreshold) {
                self.baseline = throughput
                grow()
                return
            }
            inSlowStart = false
        }
        if throughput <= baseline * (1 + growthThreshold) { return }
        self.baseline = throughput
        grow()
    }

    private mutating func grow() {
        target = min(maximum, inSlowStart ? target * 2 : target + 1)
    }

    /// Records a failed or throttled request: halve the connections.
    package mutating func recordFailure() {
        let halved = max(minimum, target / 2)
        if halved < target { holdNextSample = true }
        target = halved
        baseline = nil
        inSlowStart = false
    }
}
