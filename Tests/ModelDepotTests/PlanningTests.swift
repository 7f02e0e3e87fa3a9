import Foundation
import Testing

@testable import ModelDepot
@testable import ModelDepotCache
@testable import ModelDepotCore
@testable import ModelDepotHub
@testable import ModelDepotTransfer

@Suite struct RetryPolicyTests {
    @Test func delaysGrowExponentiallyUpToTheCap() {
        let policy = RetryPolicy(baseDelay: .milliseconds(100), maxDelay: .seconds(1), jitter: 0)
        let delays = (1...6).map { policy.delay(afterAttempt: $0, random: 0.9) }
        #expect(
            delays == [
                .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1),
                .seconds(1),
            ])
    }

    @Test func jitterOnlyShortensAndRetryAfterWins() {
        let policy = RetryPolicy(baseDelay: .seconds(1), jitter: 0.5)
        #expect(policy.delay(afterAttempt: 1, random: 0) == .seconds(1))
        #expect(policy.delay(afterAttempt: 1, random: 1) == .milliseconds(500))
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(9), random: 0) == .seconds(9))
        #expect(policy.delay(afterAttempt: 1, retryAfter: .milliseconds(1), random: 0) == .seconds(1))
    }
}

@Suite struct ConcurrencyControllerTests {
    @Test func slowStartDoublesWhileEachDoublingPaysOff() {
        var controller = ConcurrencyController(initial: 4, maximum: 32)
        controller.record(throughput: 64)  // first sample: double
        #expect(controller.target == 8)
        controller.record(throughput: 128)  // +100 %: double again
        #expect(controller.target == 16)
        controller.record(throughput: 140)  // +9 %: slow start ends, and it is not enough for +1
        #expect(controller.target == 16)
        #expect(!controller.inSlowStart)
        controller.record(throughput: 160)  // +14 % over the baseline: one more
        #expect(controller.target == 17)
    }

    @Test func halvesOnFailureAndMeasuresBeforeGrowingAgain() {
        var controller = ConcurrencyController(initial: 4, maximum: 8)
        controller.record(throughput: 100)
        #expect(controller.target == 8)
        controller.recordFailure()
        #expect(controller.target == 4)
        controller.record(throughput: 500)  // first sample after a decrease only sets the baseline
        #expect(controller.target == 4)
        controller.record(throughput: 520)  // +4 %: stay
        #expect(controller.target == 4)
        controller.record(throughput: 600)  // additive from now on
        #expect(controller.target == 5)
    }

    @Test func staysWithinBounds() {
        var controller = ConcurrencyController(initial: 20, maximum: 4)
        #expect(controller.target == 4)
        for step in 1...10 { controller.record(throughput: Double(step * 1000)) }
        #expect(controller.target == 4)
        for _ in 0..<10 { controller.recordFailure() }
        #expect(controller.target == 1)
    }
}

@Suite struct SegmentSchedulerTests {
    @Test func handsOutRangesInOrderSkippingWhatIsDone() {
        var scheduler = SegmentScheduler(total: 100, segmentSize: 30, minimumSteal: 10, done: ByteRangeSet([30..<50]))
        guard case .assigned(let first) = scheduler.next(), case .assigned(let second) = scheduler.next() else {
            Issue.record("expected two segments")
            return
        }
        #expect(first.range == 0..<30)
        #expect(second.range == 50..<80)
    }

    @Test func anIdleConnectionStealsTheLargerHalfOfTheLargestRemainder() {
        var scheduler = SegmentScheduler(total: 100, segmentSize: 100, minimumSteal: 10, stealThreshold: .seconds(1))
        guard case .assigned(let whole) = scheduler.next(now: .zero) else {
            Issue.record("no segment")
            return
        }
        scheduler.recordWrite(id: whole.id, 0..<20)
        // 20 bytes/s: the remaining 80 bytes need 4 s, beyond the threshold.
        guard case .assigned(let stolen) = scheduler.next(now: .seconds(1)) else {
            Issue.record("no steal")
            return
        }
        #expect(stolen.range == 60..<100)
        #expect(scheduler.end(of: whole.id) == 60)
        // The victim is told its new end when it writes.
        #expect(scheduler.recordWrite(id: whole.id, 20..<30) == 60)
    }

    @Test func aRangeThatWillFinishSoonIsNotSplit() {
        var scheduler = SegmentScheduler(total: 1000, segmentSize: 1000, minimumSteal: 10, stealThreshold: .seconds(1))
        guard case .assigned(let whole) = scheduler.next(now: .zero) else {
            Issue.record("no segment")
            return
        }
        scheduler.recordWrite(id: whole.id, 0..<900)
        // 900 bytes/s with 100 left: done in a tenth of a second; splitting would only waste in-flight bytes.
        #expect(scheduler.next(now: .seconds(1)) == .wait)
        #expect(scheduler.next(now: .milliseconds(100)) == .wait, "too early to judge the pace")
    }

    @Test func failedSegmentsReturnWhatTheyDidNotWrite() {
        var scheduler = SegmentScheduler(total: 100, segmentSize: 50, minimumSteal: 40)
        guard case .assigned(let first) = scheduler.next(), case .assigned(let second) = scheduler.next() else {
            Issue.record("expected two segments")
            return
        }
        #expect(scheduler.next() == .wait)
        scheduler.recordWrite(id: first.id, 0..<10)
        scheduler.release(id: first.id)
        guard case .assigned(let retry) = scheduler.next() else {
            Issue.record("expected the remainder")
            return
        }
        #expect(retry.range == 10..<50)
        scheduler.recordWrite(id: retry.id, 10..<50)
        scheduler.recordWrite(id: second.id, 50..<100)
        scheduler.release(id: retry.id)
        scheduler.release(id: second.id)
        #expect(scheduler.isComplete)
        #expect(scheduler.next() == .finished)
    }

    /// Whatever order connections write and fail in, the scheduler ends with every byte done exactly once assigned.
    @Test func randomInterleavingsAlwaysCompleteTheFile() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let total = Int64.random(in: 1...5000, using: &generator)
            var scheduler = SegmentScheduler(total: total, segmentSize: 700, minimumSteal: 50, stealThreshold: .zero)
            var active: [(id: Int, cursor: Int64)] = []
            var steps = 0
            while !scheduler.isComplete && steps < 100_000 {
                steps += 1
                if active.count < 4, case .assigned(let segment) = scheduler.next() {
                    active.append((segment.id, segment.range.lowerBound))
                    continue
                }
                guard !active.isEmpty else { continue }
                let index = Int.random(in: 0..<active.count, using: &generator)
                let (id, cursor) = active[index]
                guard let end = scheduler.end(of: id), cursor < end else {
                    scheduler.release(id: id)
                    active.remove(at: index)
                    continue
                }
                if Int.random(in: 0..<10, using: &generator) == 0 {
                    scheduler.release(id: id)  // a failure: the rest goes back to the pool
                    active.remove(at: index)
                    continue
                }
                let next = min(end, cursor + Int64.random(in: 1...300, using: &generator))
                scheduler.recordWrite(id: id, cursor..<next)
                active[index].cursor = next
            }
            #expect(scheduler.isComplete)
            #expect(scheduler.done.count == total)
        }
    }
}

@Suite struct ResumeRecordTests {
    func record(url: String = "http://h/x", completed: [Range<Int64>]) -> ResumeRecord {
        ResumeRecord(
            url: url, totalSize: 1 << 30, validators: ResourceValidators(etag: "\"e\"", lastModified: nil),
            completed: ByteRangeSet(completed), expectedSHA256: nil)
    }

    func withFolder(_ body: (URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resume-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder)
    }

    @Test func savesInPlaceAndAShorterRecordCoversALongerOne() throws {
        try withFolder { folder in
            let path = folder.appendingPathComponent("x.incomplete.json").path
            let file = ResumeRecordFile(path: path)
            let long = record(completed: (0..<20).map { Int64($0) * 100..<Int64($0) * 100 + 50 })
            try file.save(long)
            let inode = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? NSNumber
            #expect(ResumeRecord.load(from: path) == long)
            let short = record(completed: [0..<2000])
            try file.save(short)
            #expect(ResumeRecord.load(from: path) == short)
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect(attributes[.systemFileNumber] as? NSNumber == inode, "rewritten in place, not replaced")
            #expect((attributes[.size] as? NSNumber)?.intValue == long.jsonText().utf8.count)
            try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
            #expect(ResumeRecord.load(from: path) == nil)
        }
    }

    @Test func aRecordLargerThanAPageIsReplacedWholeAndLaterOnesGoBackInPlace() throws {
        try withFolder { folder in
            let path = folder.appendingPathComponent("x.incomplete.json").path
            // An earlier run's sidecar, longer than a page.
            let earlier = record(url: "http://h/" + String(repeating: "a", count: 5000), completed: [0..<10])
            try Data(earlier.jsonText().utf8).write(to: URL(fileURLWithPath: path))
            let file = ResumeRecordFile(path: path)
            let first = record(completed: [0..<10])
            try file.save(first)
            #expect(ResumeRecord.load(from: path) == first)
            #expect(!FileManager.default.fileExists(atPath: path + ".tmp"))
            let big = record(url: "http://h/" + String(repeating: "b", count: 5000), completed: [0..<20])
            try file.save(big)
            #expect(ResumeRecord.load(from: path) == big)
            let small = record(completed: [0..<30])
            try file.save(small)
            #expect(ResumeRecord.load(from: path) == small)
        }
    }

    @Test func aSidecarThatCannotBeWrittenSaysWhere() throws {
        try withFolder { folder in
            let path = folder.appendingPathComponent("x.incomplete.json").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let error = #expect(throws: ModelDepotError.self) {
                try ResumeRecordFile(path: path).save(record(completed: [0..<10]))
            }
            #expect(error?.code == .fileSystem)
            #expect(error?.message.contains(path) == true)
        }
    }

    @Test(
        arguments: [
            ("http://h/x", "\"e\"", nil, nil),
            (
                "http://h/a%20b?q=\"x\"&y=\\", "W/\"tab\\there\u{09}\"", "Tue, 01 Jan 2030 00:00:00 GMT",
                String(repeating: "ab", count: 32)
            ),
            ("http://h/\u{1F}\u{0}é✓😀", nil, "\u{7F}\n", nil),
        ] as [(String, String?, String?, String?)])
    func handWrittenJSONReadsBackLikeTheEncodersOutput(url: String, etag: String?, lastModified: String?, sha: String?)
        throws
    {
        let record = ResumeRecord(
            url: url, totalSize: 1 << 40, validators: ResourceValidators(etag: etag, lastModified: lastModified),
            completed: ByteRangeSet([0..<10, 20..<(1 << 40)]), expectedSHA256: sha)
        let decoded = try JSONDecoder().decode(ResumeRecord.self, from: Data(record.jsonText().utf8))
        #expect(decoded == record)
        let viaEncoder = try JSONDecoder().decode(ResumeRecord.self, from: JSONEncoder().encode(record))
        #expect(decoded == viaEncoder)
    }
}
