import Foundation
import Testing

@testable import ModelDepotCore
@testable import ModelDepotTransfer

/// The download run's decisions without a socket: probe outcomes, range grants and steals, restarts on a
/// changed file, refreshed URLs, checkpoints and the bytes on disk.
@Suite struct DownloadFlowTests {
    static let url = URL(string: "https://hub.example/acme/tiny/resolve/main/model.gguf")!
    static let segment: Int64 = 1 << 20

    static func flow(total: Int64? = nil, connections: Int = 4) -> DownloadFlow {
        var configuration = DownloadConfiguration()
        configuration.segmentSize = segment
        configuration.initialConnections = connections
        configuration.maxConnections = connections
        configuration.checkpointBytes = 1 << 20
        return DownloadFlow(url: url, expectedSize: total, configuration: configuration)
    }

    static func partial(_ range: Range<Int64>, of total: Int64, etag: String? = "\"v1\"") -> DownloadFlow.Answer {
        DownloadFlow.Answer(
            status: 206, contentRange: ContentRange(range: range, total: total),
            validators: ResourceValidators(etag: etag, lastModified: nil))
    }

    static func record(total: Int64, done: [Range<Int64>], etag: String = "\"v1\"") -> ResumeRecord {
        ResumeRecord(
            url: url.absoluteString, totalSize: total, validators: ResourceValidators(etag: etag, lastModified: nil),
            completed: ByteRangeSet(done), expectedSHA256: nil)
    }

    static func code(_ body: () throws -> Void) -> ModelDepotError.Code? {
        do {
            try body()
            return nil
        } catch {
            return (error as? ModelDepotError)?.code
        }
    }

    // MARK: Probe outcomes

    @Test func aFreshRangedProbeStartsParallelRangesAndItsBodyServesTheFirstSegment() throws {
        var flow = Self.flow()
        let probe = flow.probe(resuming: nil)
        #expect(probe == DownloadFlow.Probe(range: 0..<Self.segment, ifRange: nil))
        let start = try flow.probeAnswered(
            ranged: Self.partial(0..<Self.segment, of: 5 * Self.segment), requested: probe.range, resuming: nil,
            now: .zero)
        #expect(start.total == 5 * Self.segment && start.allocate && start.spaceNeeded == 5 * Self.segment)
        #expect(start.probeSegment?.range == 0..<Self.segment)
        #expect(flow.mode == .parallel && flow.phase == .downloading && flow.activeConnections == 1)
        #expect(flow.validators.etag == "\"v1\"")
    }

    @Test func aResumedProbeAsksForTheFirstGapWithIfRangeAndKeepsTheSavedBytes() throws {
        let total = 4 * Self.segment
        let saved = Self.record(total: total, done: [0..<Self.segment, 2 * Self.segment..<total])
        var flow = Self.flow()
        let probe = flow.probe(resuming: saved)
        #expect(probe.range == Self.segment..<2 * Self.segment)
        #expect(probe.ifRange == "\"v1\"")
        let start = try flow.probeAnswered(
            ranged: Self.partial(probe.range, of: total), requested: probe.range, resuming: saved, now: .zero)
        #expect(!start.allocate && start.spaceNeeded == 0)
        #expect(start.probeSegment?.range == Self.segment..<2 * Self.segment)
        #expect(flow.bytesResumed == 3 * Self.segment && flow.bytesCompleted == 3 * Self.segment)
    }

    @Test func aChangedFileOnResumeIsASourceChange() {
        let total = 4 * Self.segment
        let saved = Self.record(total: total, done: [0..<Self.segment])
        let range = Self.segment..<2 * Self.segment
        var flow = Self.flow()
        #expect(
            Self.code {
                _ = try flow.probeAnswered(
                    ranged: Self.partial(range, of: total, etag: "\"v2\""), requested: range, resuming: saved,
                    now: .zero)
            } == .sourceChanged)
        #expect(
            Self.code {
                _ = try flow.probeAnswered(
                    ranged: Self.partial(range, of: total + 1), requested: range, resuming: saved, now: .zero)
            } == .sourceChanged)
        #expect(Self.code { try flow.probeAnsweredWhole(resuming: saved) } == .sourceChanged)
        #expect(
            Self.code {
                try flow.probeAnsweredUnsatisfiable(DownloadFlow.Answer(status: 416), resuming: saved)
            } == .sourceChanged)
        #expect(flow.mode == .probing, "a refused answer changes nothing")
    }

    @Test func aProbeWithoutAUsableContentRangeIsAProtocolViolation() {
        var flow = Self.flow()
        let requested = 0..<Self.segment
        #expect(
            Self.code {
                _ = try flow.probeAnswered(
                    ranged: DownloadFlow.Answer(status: 206), requested: requested, resuming: nil, now: .zero)
            } == .protocolViolation)
        #expect(
            Self.code {
                _ = try flow.probeAnswered(
                    ranged: Self.partial(100..<Self.segment, of: 9 * Self.segment), requested: requested,
                    resuming: nil, now: .zero)
            } == .protocolViolation)
    }

    @Test func aWholeFileAnswerMeansOneStreamAnd416MeansAnEmptyFile() throws {
        var streamed = Self.flow()
        try streamed.probeAnsweredWhole(resuming: nil)
        #expect(streamed.mode == .singleStream)

        var empty = Self.flow()
        try empty.probeAnsweredUnsatisfiable(
            DownloadFlow.Answer(status: 416, contentRange: ContentRange(range: nil, total: 0)), resuming: nil)
        #expect(empty.mode == .empty && empty.total == 0 && empty.isComplete)

        var broken = Self.flow()
        #expect(
            Self.code {
                try broken.probeAnsweredUnsatisfiable(
                    DownloadFlow.Answer(status: 416, contentRange: ContentRange(range: nil, total: 10)), resuming: nil)
            } == .protocolViolation)
    }

    @Test func aSizeOtherThanTheExpectedOneIsRefusedBeforeAByteIsWritten() {
        var flow = Self.flow(total: 3 * Self.segment)
        #expect(
            Self.code {
                _ = try flow.probeAnswered(
                    ranged: Self.partial(0..<Self.segment, of: 5 * Self.segment), requested: 0..<Self.segment,
                    resuming: nil, now: .zero)
            } == .sizeMismatch)
        var stream = Self.flow(total: 10)
        #expect(Self.code { try stream.streamStarted(total: 11) } == .sizeMismatch)
    }

    // MARK: Range grants and steals

    @Test func connectionsGetRangesInFileOrderAndParkAboveTheTarget() throws {
        var flow = Self.flow(connections: 2)
        _ = try flow.probeAnswered(
            ranged: Self.partial(0..<Self.segment, of: 3 * Self.segment), requested: 0..<Self.segment,
            resuming: nil, now: .zero)
        #expect(
            flow.nextStep(connection: 1, now: .zero) == .fetch(.init(id: 1, range: Self.segment..<2 * Self.segment)))
        #expect(flow.nextStep(connection: 2, now: .zero) == .parked, "the target is two connections")
        #expect(flow.activeConnections == 2)
        #expect(
            flow.nextStep(connection: 0, now: .zero) == .fetch(.init(id: 2, range: 2 * Self.segment..<3 * Self.segment))
        )
    }

    @Test func anIdleConnectionStealsTheTailOfASlowRange() throws {
        var flow = Self.flow(connections: 2)
        let total = 2 * Self.segment
        _ = try flow.probeAnswered(
            ranged: Self.partial(0..<Self.segment, of: total), requested: 0..<Self.segment, resuming: nil, now: .zero)
        guard case .fetch(let second) = flow.nextStep(connection: 1, now: .zero) else {
            Issue.record("no second range")
            return
        }
        _ = flow.wrote(segment: 0, 0..<Self.segment, now: .milliseconds(100))
        flow.segmentEnded(0)
        // The second range has written 64 KiB in 2 s: far more than a second to go, so its tail is taken.
        _ = flow.wrote(segment: second.id, Self.segment..<Self.segment + (64 << 10), now: .seconds(2))
        guard case .fetch(let stolen) = flow.nextStep(connection: 0, now: .seconds(2)) else {
            Issue.record("the idle connection did not steal")
            return
        }
        #expect(stolen.range.upperBound == total)
        #expect(flow.end(of: second.id) == stolen.range.lowerBound, "the slow range now ends where the steal starts")
    }

    @Test func everythingInFlightMeansIdleAndEverythingWrittenMeansFinished() throws {
        var flow = Self.flow(connections: 2)
        _ = try flow.probeAnswered(
            ranged: Self.partial(0..<Self.segment, of: Self.segment), requested: 0..<Self.segment, resuming: nil,
            now: .zero)
        #expect(flow.nextStep(connection: 1, now: .zero) == .idle)
        flow.idleEnded()
        _ = flow.wrote(segment: 0, 0..<Self.segment, now: .milliseconds(10))
        flow.segmentEnded(0)
        #expect(flow.isComplete)
        #expect(flow.nextStep(connection: 1, now: .milliseconds(10)) == .finished)
        #expect(flow.activeConnections == 0)
    }

    // MARK: Later answers

    @Test func aLaterRangeMustBeTheSameVersionOfTheFile() throws {
        var flow = Self.flow()
        let total = 3 * Self.segment
        _ = try flow.probeAnswered(
            ranged: Self.partial(0..<Self.segment, of: total), requested: 0..<Self.segment, resuming: nil, now: .zero)
        let from = Self.segment
        #expect(try flow.checkRangedAnswer(Self.partial(from..<total, of: total), from: from))
        #expect(try !flow.checkRangedAnswer(DownloadFlow.Answer(status: 503), from: from), "the server's own error")
        #expect(
            Self.code { _ = try flow.checkRangedAnswer(DownloadFlow.Answer(status: 200), from: from) } == .sourceChanged
        )
        #expect(
            Self.code { _ = try flow.checkRangedAnswer(DownloadFlow.Answer(status: 416), from: from) } == .sourceChanged
        )
        #expect(
            Self.code {
                _ = try flow.checkRangedAnswer(Self.partial(from..<total, of: total, etag: "\"v2\""), from: from)
            }
                == .sourceChanged)
        #expect(
            Self.code { _ = try flow.checkRangedAnswer(Self.partial(0..<total, of: total), from: from) }
                == .sourceChanged)
    }

    // MARK: Redirects, checkpoints, bytes on disk

    @Test func aRefusedRedirectTargetSendsTheNextAttemptBackToTheOriginalURL() {
        var flow = Self.flow()
        let signed = URL(string: "https://cdn.example/blob?signature=abc")!
        flow.redirected(to: signed)
        #expect(flow.resolvedURL == signed)
        flow.urlRefused()
        #expect(flow.resolvedURL == Self.url)
    }

    @Test func writesAreBookedOnDiskAndACheckpointIsDueEveryMebibyte() throws {
        var flow = Self.flow()
        let total = 2 * Self.segment
        _ = try flow.probeAnswered(
            ranged: Self.partial(0..<Self.segment, of: total), requested: 0..<Self.segment, resuming: nil, now: .zero)
        let half = Self.segment / 2
        #expect(!flow.wrote(segment: 0, 0..<half, now: .milliseconds(1)).checkpoint)
        #expect(flow.wrote(segment: 0, half..<Self.segment, now: .milliseconds(2)).checkpoint)
        #expect(flow.bytesOnDisk == ByteRangeSet([0..<Self.segment]))
        #expect(flow.hashablePrefix == Self.segment)
        let saved = try #require(flow.resumeRecord(expectedSHA256: nil))
        #expect(saved.completed == ByteRangeSet([0..<Self.segment]) && saved.totalSize == total)
        #expect(flow.bytesReceived == Self.segment)
    }

    @Test func aSingleStreamThatEndsShortIsANetworkError() throws {
        var flow = Self.flow()
        try flow.probeAnsweredWhole(resuming: nil)
        try flow.streamStarted(total: 100)
        flow.streamed(60)
        #expect(flow.bytesOnDisk == ByteRangeSet([0..<60]))
        #expect(Self.code { try flow.streamEnded(size: 60, digest: "x") } == .network)
        var complete = Self.flow()
        try complete.streamStarted(total: 100)
        complete.streamed(100)
        try complete.streamEnded(size: 100, digest: "abc")
        #expect(complete.sha256 == "abc" && complete.total == 100)
    }

    @Test func progressIsReportedAtMostEveryIntervalUnlessForced() {
        var flow = Self.flow()
        #expect(flow.progress(now: .zero, force: false) != nil)
        #expect(flow.progress(now: .milliseconds(50), force: false) == nil)
        #expect(flow.progress(now: .milliseconds(60), force: true) != nil)
        let changed = flow.wait(.server("hub.example"))
        let again = flow.wait(.server("hub.example"))
        #expect(changed && !again, "the same wait again is not news")
        #expect(flow.progress(now: .milliseconds(300), force: false)?.waiting == .server("hub.example"))
    }
}
