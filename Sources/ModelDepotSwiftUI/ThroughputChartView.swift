#if canImport(SwiftUI) && canImport(Charts)
    import Charts
    import ModelDepotScreens
    import SwiftUI

    /// A download's speed over the last two minutes, drawn with Swift Charts from the same samples the web app's
    /// chart draws (``DownloadsScreen/throughputSamples``, ``DownloadsScreen/Row/throughputSamples``): one line per
    /// run of seconds that moved bytes (pauses and retries are gaps), the bandwidth limit as a dashed rule, and the
    /// chart's sentence as its accessibility label. Never compiled here.
    ///
    /// Uses `Chart`, `LineMark(x:y:series:)`, `PointMark(x:y:)`, `RuleMark(y:)`, `.chartXScale(domain:)` (Swift
    /// Charts, iOS 16 and macOS 13 and later).
    public struct ThroughputChartView: View {
        let samples: [ThroughputHistory.Sample]
        let limit: Int64?
        let summary: String

        /// `chart` is the same values laid out for SVG; only its sentence is used here.
        public init(samples: [ThroughputHistory.Sample], limit: Int64?, chart: TimeSeriesChart) {
            self.samples = samples
            self.limit = limit
            self.summary = chart.summary
        }

        public var body: some View {
            Chart {
                ForEach(Array(ThroughputHistory.stretches(samples).enumerated()), id: \.offset) { index, stretch in
                    ForEach(stretch, id: \.secondsAgo) { sample in
                        LineMark(
                            x: .value("Seconds ago", -sample.secondsAgo),
                            y: .value("Bytes per second", sample.bytesPerSecond ?? 0),
                            series: .value("Stretch", index))
                    }
                    // A line of one point draws nothing: a second alone between gaps is a dot.
                    if stretch.count == 1, let sample = stretch.first {
                        PointMark(
                            x: .value("Seconds ago", -sample.secondsAgo),
                            y: .value("Bytes per second", sample.bytesPerSecond ?? 0))
                    }
                }
                if let limit {
                    RuleMark(y: .value("Bytes per second", Double(limit)))
                        .lineStyle(StrokeStyle(lineWidth: 1, dash: [6, 4]))
                        .foregroundStyle(.red)
                }
            }
            .chartXScale(domain: -(ThroughputHistory.window - 1)...0)
            .frame(height: 120)
            .accessibilityElement(children: .ignore)
            .accessibilityLabel(summary)
        }
    }
#endif
