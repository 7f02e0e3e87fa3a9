import Foundation
import ModelDepot
import ModelDepotMirrorContract
import ModelDepotScreens
import ModelDepotTesting
import Testing

/// The charts as data: given these progress reports or values, these samples, points, ticks and lines.
@Suite struct ChartTests {
    static func at(_ seconds: Double) -> Duration { .milliseconds(Int64(seconds * 1000)) }

    /// Rates by second, newest last, of the last `count` seconds.
    static func tail(_ samples: [ThroughputHistory.Sample], _ count: Int) -> [Double?] {
        samples.suffix(count).map(\.bytesPerSecond)
    }

    @Test func aSteadyDownloadIsItsRateEverySecondAndTheFirstReportIsOnlyABaseline() {
        var history = ThroughputHistory()
        // 1000 bytes a second in reports four times a second, counted from 5 MB (the first report is the baseline).
        for report in 0...40 {
            history.record(
                receivedBytes: 5_000_000 + Int64(report) * 250, flowing: true, at: Self.at(Double(report) / 4))
        }
        let samples = history.samples(at: Self.at(10.2))
        #expect(samples.count == ThroughputHistory.window)
        #expect(samples.map(\.secondsAgo) == Array((0..<ThroughputHistory.window).reversed()))
        // Second 0 saw 750 bytes after the baseline; seconds 1…9 a full 1000; before second 0, nothing.
        #expect(Self.tail(samples, 11) == [nil, 750, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000])
        // The second under way (10) is not shown: half of it would read as a drop.
        #expect(samples.last?.secondsAgo == 0 && samples.last?.bytesPerSecond == 1000)
    }

    /// A new run of the download (a retry, a resume) counts its received bytes from zero again: that drop moved
    /// nothing, and the bytes of the last report, which comes with the final state, still show.
    @Test func aNewRunCountsFromZeroAndTheLastBytesStillShow() {
        var history = ThroughputHistory()
        history.record(receivedBytes: 3_000_000, flowing: true, at: Self.at(0.2))
        history.record(receivedBytes: 3_000_500, flowing: false, at: Self.at(0.8))  // cancelled
        history.record(receivedBytes: 0, flowing: false, at: Self.at(2.1))  // retried: a new run asks the Hub
        history.record(receivedBytes: 0, flowing: true, at: Self.at(2.3))
        history.record(receivedBytes: 1000, flowing: true, at: Self.at(3.4))
        history.record(receivedBytes: 2_000_000, flowing: false, at: Self.at(4.5))  // the last bytes, then done
        #expect(Self.tail(history.samples(at: Self.at(5.1)), 5) == [500, nil, 0, 1000, 1_999_000])
    }

    @Test func aPauseIsAGapAndAStallIsZero() {
        var history = ThroughputHistory()
        history.record(receivedBytes: 0, flowing: true, at: Self.at(0.1))
        history.record(receivedBytes: 2000, flowing: true, at: Self.at(1.9))
        history.record(receivedBytes: 2500, flowing: false, at: Self.at(2.5))  // paused mid-second
        history.record(receivedBytes: 2500, flowing: true, at: Self.at(5.2))  // resumed
        history.record(receivedBytes: 3500, flowing: true, at: Self.at(5.9))
        // Then nothing arrives while it still runs: a stall.
        let samples = history.samples(at: Self.at(8.5))
        #expect(Self.tail(samples, 8) == [0, 2000, 500, nil, nil, 1000, 0, 0])
        // Waiting for a retry is no flow either.
        history.record(receivedBytes: 3500, flowing: false, at: Self.at(8.6))
        #expect(Self.tail(history.samples(at: Self.at(11)), 2) == [nil, nil])
        #expect(!history.isEmpty(at: Self.at(11)))
        #expect(history.isEmpty(at: Self.at(200)))
    }

    @Test func aFileStartedAgainNeverGivesANegativeRateAndTheMemoryStaysBounded() {
        var history = ThroughputHistory()
        history.record(receivedBytes: 0, flowing: true, at: .zero)
        history.record(receivedBytes: 9000, flowing: true, at: Self.at(1.5))
        history.record(receivedBytes: 100, flowing: true, at: Self.at(2.5))  // the server ignored the range
        #expect(Self.tail(history.samples(at: Self.at(3)), 2) == [9000, 0])
        // A day of reports, a second apart, then a week of silence: never more than the window kept.
        for second in 0..<86_400 {
            history.record(receivedBytes: Int64(second) * 10, flowing: true, at: .seconds(second))
        }
        #expect(history.storedSeconds <= ThroughputHistory.window + 2)
        history.record(receivedBytes: 0, flowing: false, at: .seconds(7 * 86_400))
        #expect(history.storedSeconds <= ThroughputHistory.window + 2)
        // It was running when the reports stopped: a stall (0), and then stopped (a gap).
        #expect(history.samples(at: .seconds(7 * 86_400 + 1)).allSatisfy { $0.bytesPerSecond == 0 })
        #expect(history.samples(at: .seconds(7 * 86_400 + 2)).last?.bytesPerSecond == .some(nil))
    }

    @Test func downloadsAddUpAndASecondIsAGapOnlyWhenItIsOneInAll() {
        var one = ThroughputHistory()
        var other = ThroughputHistory()
        one.record(receivedBytes: 0, flowing: true, at: Self.at(0.5))
        one.record(receivedBytes: 100, flowing: false, at: Self.at(1.5))
        other.record(receivedBytes: 0, flowing: false, at: Self.at(0.5))
        other.record(receivedBytes: 0, flowing: true, at: Self.at(2.1))
        other.record(receivedBytes: 300, flowing: true, at: Self.at(2.9))
        let sum = ThroughputHistory.sum([one, other], at: Self.at(3.5))
        #expect(Self.tail(sum, 4) == [nil, 0, 100, 300])
    }

    @Test func aLineChartPlacesEachValueSplitsAtGapsAndDrawsTheLimit() {
        let chart = TimeSeriesChart(
            [.init(key: "rate", label: "ui-big", values: [nil, 1000, 1000, nil, 2000])], unit: .bytesPerSecond,
            window: .seconds(120), limit: (1500, "limit 1.5 KiB/s"))
        // 2000 × 1.1 = 2.1 KiB/s, rounded up to 3 KiB/s; the plot runs from y 128 (0) up to y 12 (3072).
        #expect(chart.maximum == 3072)
        #expect(chart.series[0].segments == ["150.0,90.2 300.0,90.2", "450.0,52.5 600.0,52.5"])
        #expect(chart.limit?.y == 71.4 && chart.limit?.value == 1500 && chart.limit?.label == "limit 1.5 KiB/s")
        #expect(chart.ticks.map(\.y) == [70, 12] && chart.ticks.map(\.label) == ["1.5 KiB/s", "3 KiB/s"])
        #expect(chart.timeLabels.map(\.label) == ["2 min ago", "1 min ago", "now"])
        #expect(chart.hasValues)
        #expect(chart.series[0].latestText == "2.0 KiB/s")
        #expect(
            chart.summary
                == "Last 2 minutes: ui-big now 2.0 KiB/s, peak 2.0 KiB/s, average 1.3 KiB/s. Limit 1.5 KiB/s.")
    }

    @Test func theAxisEndsOnARoundNumberAboveTheHighestValueOrTheLimit() throws {
        #expect(TimeSeriesChart.axisMaximum(for: 0, unit: .bytesPerSecond) == 1024)
        #expect(TimeSeriesChart.axisMaximum(for: 500_000, unit: .bytesPerSecond) == 600 * 1024)
        #expect(TimeSeriesChart.axisMaximum(for: 100 * 1024 * 1024, unit: .bytesPerSecond) == 150 * 1024 * 1024)
        #expect(TimeSeriesChart.axisMaximum(for: 0.3, unit: .fraction) == 1)
        #expect(TimeSeriesChart.axisMaximum(for: 0, unit: .count) == 1)
        #expect(TimeSeriesChart.axisMaximum(for: 37, unit: .perSecond) == 50)
        // A limit above every value still fits: its line is inside the plot.
        let chart = TimeSeriesChart(
            [.init(key: "rate", label: "x", values: [10, 20])], unit: .bytesPerSecond, window: .seconds(120),
            limit: (4 * 1024 * 1024, "limit"))
        #expect(chart.maximum == 5 * 1024 * 1024)
        let limitY = try #require(chart.limit?.y)
        #expect(limitY > chart.plotTop && limitY < chart.plotBottom)
    }

    @Test func aChartWithNothingInItSaysSo() {
        let chart = TimeSeriesChart(
            [
                .init(key: "served", label: "From the cache", values: Array(repeating: nil, count: 4)),
                .init(key: "pulled", label: "From upstream", dash: "6 3", values: [nil, 5, nil, nil]),
            ], unit: .perSecond, window: .seconds(3600))
        #expect(chart.series[0].segments.isEmpty)
        // A lone value is a short stroke from where its interval began.
        // 5/s on an axis to 6/s: y = 128 - 5/6 × 116.
        #expect(chart.series[1].segments == ["0.0,31.3 200.0,31.3"])
        #expect(chart.series[1].dash == "6 3")
        #expect(chart.timeLabels.map(\.label) == ["1 hour ago", "30 min ago", "now"])
        #expect(
            chart.summary
                == "Last hour: From the cache: nothing; From upstream stopped now, peak 5.0/s, average 5.0/s.")
    }

    @Test func theStorageChartSplitsBarsByRevisionOnOneScaleWithTheBudget() {
        let chart = StorageChart(
            [
                .init(
                    id: "acme/small", sizeOnDisk: 200,
                    revisions: [.init(name: "1111111", refs: ["main"], exclusiveBytes: 200)],
                    partialBytes: 0),
                .init(
                    id: "acme/big", sizeOnDisk: 600,
                    revisions: [
                        .init(name: "2222222", refs: ["main", "v1"], exclusiveBytes: 300),
                        .init(name: "abc1234", refs: [], exclusiveBytes: 200),
                    ], partialBytes: 0),
            ], budget: 1000)
        #expect(chart.scaleBytes == 1000)
        #expect(chart.bars.map(\.label) == ["Whole cache", "acme/big", "acme/small"])
        #expect(chart.bars.map(\.y) == [0, 34, 68])
        #expect(chart.barsHeight == 102 && chart.height == 118)
        let whole = chart.bars[0].pieces
        #expect(whole.map(\.kind) == [.current, .detached])
        #expect(whole.map(\.x) == [0, 360] && whole.map(\.width) == [360, 120])
        // acme/big: what main uses alone, what its two revisions share, then the old revision (hatched).
        let big = chart.bars[1].pieces
        #expect(big.map(\.kind) == [.current, .current, .detached])
        #expect(big.map(\.bytes) == [300, 100, 200] && big.map(\.x) == [0, 180, 240])
        #expect(big[0].label == "acme/big@2222222 (main, v1): 300 B")
        #expect(big[1].label == "acme/big, shared by revisions: 100 B")
        #expect(big[2].label == "acme/big@abc1234, without a branch: 200 B")
        #expect(chart.bars[2].pieces.map(\.label) == ["acme/small@1111111 (main): 200 B"])
        #expect(chart.budget?.x == 600 && chart.budget?.bytes == 1000 && chart.budget?.anchor == "end")
        #expect(chart.budget?.label == "budget 1000 B")
        #expect(chart.legend.map(\.kind) == [.current, .detached])
        #expect(
            chart.summary
                == "The cache takes 800 B; the largest: acme/big 600 B, acme/small 200 B. "
                + "Old revisions without a branch: 200 B. It fits the budget of 1000 B, with 200 B to spare.")
        // Over the budget: the scale is the cache, and the line sits inside it. Partial downloads come on top of the
        // finished files (the cache's report counts them apart).
        let over = StorageChart(
            [
                .init(
                    id: "a/b", sizeOnDisk: 4000,
                    revisions: [.init(name: "3333333", refs: ["main"], exclusiveBytes: 4000)], partialBytes: 1000)
            ],
            budget: 1000)
        #expect(over.scaleBytes == 5000 && over.budget?.x == 120 && over.budget?.anchor == "start")
        #expect(over.bars[1].pieces.map(\.kind) == [.current, .partial])
        #expect(over.bars[1].pieces.map(\.bytes) == [4000, 1000])
        #expect(over.summary.hasSuffix("It is 3.9 KiB over the budget of 1000 B."))
    }

    /// A real cache with three revisions: each revision's own bytes come from the snapshots' links; what only old
    /// revisions share is old too; a pin keeps every revision of its repository (a prune leaves it alone).
    @Test func aRepositorysRevisionsAreMeasuredFromTheCache() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-storage-chart")
        defer { folder.remove() }
        let repo = folder.path("models--acme--two")
        let blobs = ["shared": 1000, "only-new": 300, "only-old": 200, "old-shared": 50]
        try FileManager.default.createDirectory(
            at: repo.appendingPathComponent("blobs"), withIntermediateDirectories: true)
        for (name, size) in blobs { try Data(count: size).write(to: repo.appendingPathComponent("blobs/\(name)")) }
        let (new, old, older) = (
            String(repeating: "a", count: 40), String(repeating: "b", count: 40), String(repeating: "c", count: 40)
        )
        let snapshots = [
            (new, ["w.bin": "shared", "x.bin": "only-new"]),
            (old, ["w.bin": "shared", "y.bin": "only-old", "z.bin": "old-shared"]),
            (older, ["z.bin": "old-shared"]),
        ]
        for (commit, files) in snapshots {
            let snapshot = repo.appendingPathComponent("snapshots/\(commit)")
            try FileManager.default.createDirectory(at: snapshot, withIntermediateDirectories: true)
            for (file, blob) in files {
                try FileManager.default.createSymbolicLink(
                    atPath: snapshot.appendingPathComponent(file).path, withDestinationPath: "../../blobs/\(blob)")
            }
        }
        try FileManager.default.createDirectory(
            at: repo.appendingPathComponent("refs"), withIntermediateDirectories: true)
        try Data(new.utf8).write(to: repo.appendingPathComponent("refs/main"))
        let manager = try ScreensFixture.offline(in: folder).manager
        var bar = try #require(await StorageScreen.load(manager).chart?.bars.first { $0.label == "acme/two" })
        #expect(bar.pieces.map(\.kind) == [.current, .current, .detached, .detached])
        #expect(bar.pieces.map(\.bytes) == [300, 1000, 200, 50])
        #expect(bar.pieces[0].label.hasPrefix("acme/two@aaaaaaa (main)"))
        #expect(bar.pieces[3].label == "acme/two, shared by old revisions only: 50 B")
        try manager.pin(try RepoID("acme/two"), type: .model)
        bar = try #require(await StorageScreen.load(manager).chart?.bars.first { $0.label == "acme/two" })
        #expect(bar.pieces.map(\.kind) == [.current, .current, .current])
        #expect(bar.pieces.map(\.bytes) == [300, 200, 1050])
        #expect(bar.pieces[1].label == "acme/two@bbbbbbb (pinned): 200 B")
    }

    @Test func manyRepositoriesShareABarAfterTheLargestTen() {
        let repositories = (0..<14).map {
            StorageChart.Repository(id: "acme/m\($0)", sizeOnDisk: Int64(100 + $0), revisions: [], partialBytes: 0)
        }
        let chart = StorageChart(repositories)
        #expect(chart.bars.count == 1 + StorageChart.shownRepositories + 1)
        #expect(chart.bars[1].label == "acme/m13")
        #expect(chart.bars.last?.label == "4 others" && chart.bars.last?.sizeText == "406 B")
        #expect(chart.budget == nil)
    }

    /// A real download through the screens, on a clock the test moves: its second shows its bytes, and the chart
    /// ends when it does.
    @Test func aDownloadsSamplesComeFromItsProgressOnTheInjectedClock() async throws {
        let clock = TestClock()
        try await ScreensFixture.with(clock: clock) { fixture in
            try await fixture.downloads.start("chat")
            try #require(await fixture.waitFor("chat") { if case .completed = $0 { true } else { false } })
            // Nothing whole has passed yet on the test's clock.
            #expect(await fixture.downloads.throughput(of: "chat") == nil)
            clock.advance(by: .seconds(1))
            let samples = try #require(await fixture.downloads.throughput(of: "chat"))
            let moved = try #require(samples.last?.bytesPerSecond)
            #expect(moved > 0 && moved <= Double(ScreensFixture.weights.count + 8), "\(moved)")
            let screen = await DownloadsScreen.load(fixture.downloads)
            #expect(screen.rows.first?.throughputSamples == samples)
            #expect(screen.rows.first?.throughput?.series.first?.segments.isEmpty == false)
            #expect(screen.throughputSamples.last?.bytesPerSecond == moved)
            // Done: the next second is a gap, and two minutes later the chart is gone.
            clock.advance(by: .seconds(1))
            #expect(await fixture.downloads.throughput(of: "chat")?.last?.bytesPerSecond == .some(nil))
            clock.advance(by: .seconds(121))
            #expect(await fixture.downloads.throughput(of: "chat") == nil)
            #expect(await DownloadsScreen.load(fixture.downloads).rows.first?.throughput == nil)
        }
    }
}

extension ChartTests {
    @Test func samplesAreCutIntoStretchesAtTheirGaps() {
        let samples = [nil, 1, 2, nil, nil, 3, nil, 4].enumerated().map {
            ThroughputHistory.Sample(secondsAgo: 7 - $0.offset, bytesPerSecond: $0.element)
        }
        #expect(ThroughputHistory.stretches(samples).map { $0.map(\.secondsAgo) } == [[6, 5], [2], [0]])
        #expect(ThroughputHistory.stretches([]).isEmpty)
    }
}

/// The mirror's hour: its counters kept interval by interval, and the dashboard's charts of them.
extension ChartTests {
    @Test func counterHistoryKeepsWhatEachIntervalAddedAndStaysBounded() {
        var history = CounterHistory(interval: .seconds(10), capacity: 6)
        history.record([0, 0], at: .seconds(3))
        history.record([100, 1], at: .seconds(9))
        history.record([400, 2], at: .seconds(15))
        // Nobody looked between 20 and 40: those intervals carry 400 (nothing added), then 1000 arrived.
        history.record([1000, 0], at: .seconds(41))
        let intervals = history.intervals(at: .seconds(55))
        #expect(intervals.count == 6)
        #expect(intervals.map { $0?.increases } == [nil, nil, [300, 1], [0, 0], [0, 0], [600, 0]])
        #expect(intervals[0] == nil && intervals[1]?.values == [100, 1])
        // After the last record the values carry on, adding nothing; the interval under way is not shown.
        #expect(history.intervals(at: .seconds(75)).suffix(2).map { $0?.increases } == [[0, 0], [0, 0]])
        for second in stride(from: 0, to: 100_000, by: 7) { history.record([Int64(second), 0], at: .seconds(second)) }
        #expect(history.storedIntervals <= 8)
        #expect(CounterHistory().intervals(at: .seconds(5)).allSatisfy { $0 == nil })
    }

    @Test func theMirrorChartsAreRatesRatiosAndGaugesOfItsIntervals() {
        typealias Counter = MirrorDashboardState.TrafficCounter
        func interval(_ increases: [Counter: Int64], running: Int64) -> CounterHistory.Interval {
            var values = Array(repeating: Int64(0), count: Counter.allCases.count)
            values[Counter.pullsRunning.rawValue] = running
            var added = Array(repeating: Int64(0), count: Counter.allCases.count)
            for (counter, value) in increases { added[counter.rawValue] = value }
            return .init(values: values, increases: added)
        }
        let traffic: [CounterHistory.Interval?] = [
            nil,
            interval(
                [.servedBytes: 10_240, .upstreamBytes: 5120, .cacheHits: 3, .pullsStarted: 1, .requests: 50],
                running: 2),
            interval([.requests: 20, .refused: 5], running: 0),
        ]
        let charts = MirrorScreen.charts(traffic, interval: .seconds(10), strings: .english)
        #expect(charts.map(\.key) == ["bytes", "requests", "hits", "pulls"])
        let bytes = charts[0].chart
        #expect(bytes.series.map(\.label) == ["Served to clients", "Pulled from upstream"])
        #expect(bytes.series.map(\.dash) == ["", "6 4"])
        // 10 KiB in 10 s is 1 KiB/s, then nothing; the first interval is before the mirror started (a gap).
        #expect(bytes.series[0].latestText == "0 B/s")
        #expect(bytes.summary.contains("Served to clients now 0 B/s, peak 1.0 KiB/s"))
        #expect(charts[1].chart.summary.contains("Refused (429, 421) now 0.5/s, peak 0.5/s"))
        // 3 of 4 files without asking upstream; none asked in the last interval (a gap, not 0 %).
        #expect(charts[2].chart.series[0].segments.count == 1)
        #expect(charts[2].chart.summary.contains("stopped now, peak 75 %"))
        #expect(charts[3].chart.summary.contains("Running now 0, peak 2"))
        #expect(charts[3].chart.series.map(\.label) == ["Running", "Waiting for a turn"])
        #expect(charts[0].chart.timeLabels.map(\.label) == ["30 s ago", "15 s ago", "now"])
        #expect(MirrorScreen.charts([], interval: .seconds(10), strings: .english).isEmpty)
    }
}
