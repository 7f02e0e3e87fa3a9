import Testing

@testable import ModelDepotTransfer

/// The bandwidth cap's arithmetic on an injected timeline: connections asking for chunks as soon as their last
/// one is granted, and the bytes granted in each window counted.
struct TokenBucketTests {
    /// Runs `connections` greedy readers of `chunk` bytes for `seconds`, calling `change` at each second, and
    /// returns the bytes granted in each one-second window.
    static func simulate(
        rate: Int64?, connections: Int, chunk: Int, seconds: Int,
        change: (Int, inout TokenBucket, Duration) -> Void = { _, _, _ in }
    ) -> [Int] {
        var bucket = TokenBucket(bytesPerSecond: rate, now: .zero)
        var ready = [Duration](repeating: .zero, count: connections)
        var windows = [Int](repeating: 0, count: seconds)
        var changed = 0
        while true {
            let index = ready.indices.min { ready[$0] < ready[$1] }!
            let now = ready[index]
            guard now < .seconds(seconds) else { break }
            while changed < seconds, .seconds(changed) <= now {
                change(changed, &bucket, now)
                changed += 1
            }
            let usable = now + bucket.reserve(chunk, now: now)
            // The bytes count in the window where they may be used; the reader asks again right after.
            let second = Int(usable.components.seconds)
            if second < seconds { windows[second] += chunk }
            ready[index] = usable + .microseconds(50)
        }
        return windows
    }

    @Test func manyConnectionsTogetherStayWithinTheRate() {
        let rate: Int64 = 20_000_000
        let windows = Self.simulate(rate: rate, connections: 16, chunk: 64 << 10, seconds: 12)
        // The first window may also spend the initial allowance; every later one is the rate, to within a chunk
        // per connection.
        for (second, bytes) in windows.enumerated().dropFirst() {
            #expect(abs(Double(bytes) - Double(rate)) <= 0.05 * Double(rate), "second \(second): \(bytes) bytes")
        }
        let total = windows.reduce(0, +)
        #expect(Double(total) <= Double(rate) * (12 + TokenBucket.burst / .seconds(1)) + Double(16 << 16))
    }

    @Test func aChangedRateAppliesToWhatIsNotYetGranted() {
        let windows = Self.simulate(rate: 8_000_000, connections: 4, chunk: 32 << 10, seconds: 10) {
            second, bucket, now in
            if second == 5 { bucket.setRate(2_000_000, now: now) }
        }
        for second in 1..<5 { #expect(abs(Double(windows[second]) - 8e6) <= 0.05 * 8e6, "\(windows)") }
        // The second after the change still pays off what was granted before it; then the new rate holds.
        for second in 7..<10 { #expect(abs(Double(windows[second]) - 2e6) <= 0.05 * 2e6, "\(windows)") }
    }

    @Test func noRateMeansNoWaitAndAnIdleCapSavesOnlyAQuarterSecond() {
        var open = TokenBucket(bytesPerSecond: nil, now: .zero)
        #expect(open.reserve(1 << 30, now: .zero) == .zero)
        var bucket = TokenBucket(bytesPerSecond: 1_000_000, now: .zero)
        // Idle for a minute: 250 ms of bytes pass at once, the next byte waits.
        #expect(bucket.reserve(250_000, now: .seconds(60)) == .zero)
        #expect(bucket.reserve(100_000, now: .seconds(60)) == .milliseconds(100))
        // Lifting the cap lets everything through.
        bucket.setRate(nil, now: .seconds(60))
        #expect(bucket.reserve(1 << 30, now: .seconds(60)) == .zero)
    }
}
