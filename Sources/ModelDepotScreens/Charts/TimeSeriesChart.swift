import Foundation
import ModelDepot

/// A line chart over time, as geometry a page draws in SVG without computing anything: each series' unbroken
/// stretches as polyline points in a fixed view box (so nothing shifts when values arrive), the value axis' ticks
/// with their labels, an optional limit line, and a sentence saying the same for screen readers. Series differ by
/// dash pattern and label, not by colour alone.
public struct TimeSeriesChart: Sendable, Equatable, Encodable {
    /// What the values count; decides the axis' round numbers and how values are written.
    public enum Unit: String, Sendable, Equatable, Encodable {
        /// Bytes per second, in binary units ("1.5 MiB/s").
        case bytesPerSecond
        /// Events per second ("120/s").
        case perSecond
        /// A share from 0 to 1, written as a percentage; the axis always ends at 100 %.
        case fraction
        /// A count ("3").
        case count
    }

    /// One line.
    public struct Series: Sendable, Equatable, Encodable {
        public var key: String
        public var label: String
        /// SVG `stroke-dasharray`: empty is solid.
        public var dash: String
        /// Each unbroken stretch as SVG polyline points ("x,y x,y …"); a gap (no value) ends a stretch.
        public var segments: [String]
        /// The value at the end of the window, or the last one before a gap that lasts to the end.
        public var latestText: String?
    }

    /// A horizontal grid line of the value axis.
    public struct Tick: Sendable, Equatable, Encodable {
        public var y: Double
        public var label: String
    }

    /// A horizontal line at a set value (a bandwidth limit, a budget).
    public struct Limit: Sendable, Equatable, Encodable {
        public var y: Double
        public var value: Double
        public var label: String
    }

    /// A label along the time axis.
    public struct TimeLabel: Sendable, Equatable, Encodable {
        public var x: Double
        public var label: String
        /// SVG `text-anchor`: the first starts at its x, the last ends there, the others are centred.
        public var anchor: String
    }

    /// The view box: `0 0 width height`.
    public var width: Double
    public var height: Double
    /// Where the plot's value axis starts (the bottom line) and ends.
    public var plotTop: Double
    public var plotBottom: Double
    public var unit: Unit
    /// The value at the top of the plot.
    public var maximum: Double
    public var series: [Series]
    public var ticks: [Tick]
    public var limit: Limit?
    public var timeLabels: [TimeLabel]
    /// The chart in a sentence (latest, peak and average of each series, the limit), for screen readers.
    public var summary: String
    /// Whether any series has a value in the window.
    public var hasValues: Bool

    /// Values of one line, oldest first, evenly spaced over the window; nil is a gap.
    public struct Values: Sendable {
        public var key: String
        public var label: String
        public var dash: String
        public var values: [Double?]

        public init(key: String, label: String, dash: String = "", values: [Double?]) {
            self.key = key
            self.label = label
            self.dash = dash
            self.values = values
        }
    }

    static let viewWidth = 600.0
    static let viewHeight = 150.0
    static let top = 12.0
    static let bottom = 128.0

    /// Lays `lines` out. `window` words the time axis ("2 min ago" … "now"); `limit` draws a line at that value
    /// and keeps it inside the plot.
    public init(
        _ lines: [Values], unit: Unit, window: Duration, limit: (value: Double, label: String)? = nil,
        strings: ChartStrings = .english
    ) {
        // A value that is not a number (a rate over no time) is drawn as a gap, never as infinity.
        let lines = lines.map { line in
            var line = line
            line.values = line.values.map { $0.flatMap { $0.isFinite ? $0 : nil } }
            return line
        }
        width = Self.viewWidth
        height = Self.viewHeight
        plotTop = Self.top
        plotBottom = Self.bottom
        self.unit = unit
        let all = lines.flatMap { $0.values.compactMap { $0 } }
        maximum = Self.axisMaximum(for: max(all.max() ?? 0, limit?.value ?? 0), unit: unit)
        hasValues = !all.isEmpty
        let maximum = maximum
        func y(_ value: Double) -> Double {
            Self.bottom - min(max(value / maximum, 0), 1) * (Self.bottom - Self.top)
        }
        series = lines.map { line in
            let step = line.values.count > 1 ? Self.viewWidth / Double(line.values.count - 1) : Self.viewWidth
            var segments: [String] = []
            var stretch: [(x: Double, y: Double)] = []
            func close() {
                // A lone value is drawn as a short flat stroke back to where its interval began.
                if stretch.count == 1, let only = stretch.first {
                    stretch.insert((max(0, only.x - step), only.y), at: 0)
                }
                if !stretch.isEmpty { segments.append(stretch.map { Self.point($0.x, $0.y) }.joined(separator: " ")) }
                stretch = []
            }
            for (index, value) in line.values.enumerated() {
                guard let value else {
                    close()
                    continue
                }
                stretch.append((Double(index) * step, y(value)))
            }
            close()
            let latest = line.values.last { $0 != nil }.flatMap { $0 }
            return Series(
                key: line.key, label: line.label, dash: line.dash, segments: segments,
                latestText: latest.map { Self.format($0, unit) })
        }
        ticks = [0.5, 1].map { share in
            // Round numbers on the axis: "400 KiB/s", not "400.0 KiB/s".
            Tick(
                y: Self.round(y(maximum * share)),
                label: Self.format(maximum * share, unit).replacingOccurrences(of: ".0 ", with: " "))
        }
        self.limit = limit.map { Limit(y: Self.round(y($0.value)), value: $0.value, label: $0.label) }
        let seconds = Double(window.components.seconds)
        timeLabels = [
            TimeLabel(x: 0, label: strings.ago(seconds), anchor: "start"),
            TimeLabel(x: Self.viewWidth / 2, label: strings.ago(seconds / 2), anchor: "middle"),
            TimeLabel(x: Self.viewWidth, label: strings.now, anchor: "end"),
        ]
        summary = Self.summary(lines, unit: unit, window: seconds, limit: limit, strings: strings)
    }

    /// The top of the value axis: a round number (1, 1.5, 2, 3, 4, 5, 6 or 8 times a power of ten, in the unit's
    /// own scale) a tenth above the highest value, so the line never touches the top.
    package static func axisMaximum(for highest: Double, unit: Unit) -> Double {
        if unit == .fraction { return 1 }
        let wanted = max(highest * 1.1, unit == .bytesPerSecond ? 1024 : 1)
        var scale = 1.0
        if unit == .bytesPerSecond {
            while wanted / scale >= 1000 && scale < pow(1024, 4) { scale *= 1024 }
        }
        let value = wanted / scale
        let power = pow(10, floor(log10(value)))
        let step = [1, 1.5, 2, 3, 4, 5, 6, 8, 10].first { $0 * power >= value * (1 - 1e-9) } ?? 10
        return step * power * scale
    }

    /// A value as the axis and the summary write it.
    static func format(_ value: Double, _ unit: Unit) -> String {
        switch unit {
        case .bytesPerSecond: ByteFormat.rate(value)
        case .perSecond: value >= 10 ? "\(Int(value.rounded()))/s" : String(format: "%.1f/s", value)
        case .fraction: "\(Int((value * 100).rounded())) %"
        case .count: value == value.rounded() ? "\(Int(value))" : String(format: "%.1f", value)
        }
    }

    private static func summary(
        _ lines: [Values], unit: Unit, window: Double, limit: (value: Double, label: String)?, strings: ChartStrings
    ) -> String {
        let parts = lines.map { line -> String in
            let values = line.values.compactMap { $0 }
            guard let peak = values.max() else { return strings.nothing(line.label) }
            let latest = line.values.last.flatMap { $0 }
            return strings.line(
                line.label, latest.map { format($0, unit) }, format(peak, unit),
                format(values.reduce(0, +) / Double(values.count), unit))
        }
        var text = strings.during(window) + ": " + parts.joined(separator: "; ") + "."
        if let limit { text += " " + limit.label.prefix(1).uppercased() + limit.label.dropFirst() + "." }
        return text
    }

    private static func point(_ x: Double, _ y: Double) -> String {
        String(format: "%.1f,%.1f", x, y)
    }

    private static func round(_ value: Double) -> Double { (value * 10).rounded() / 10 }
}

/// The words of the charts; replace them to translate.
public struct ChartStrings: Sendable {
    public var now = "now"
    /// "2 min ago", "1 hour ago".
    public var ago: @Sendable (_ seconds: Double) -> String = { seconds in
        switch seconds {
        case ..<60: "\(Int(seconds)) s ago"
        case ..<3600: "\(Int((seconds / 60).rounded())) min ago"
        case ..<7200: "1 hour ago"
        default: "\(Int((seconds / 3600).rounded())) hours ago"
        }
    }
    /// "Last 2 minutes", "Last hour".
    public var during: @Sendable (_ seconds: Double) -> String = { seconds in
        switch seconds {
        case ..<90: "Last \(Int(seconds)) seconds"
        case ..<3600: "Last \(Int((seconds / 60).rounded())) minutes"
        case ..<7200: "Last hour"
        default: "Last \(Int((seconds / 3600).rounded())) hours"
        }
    }
    /// A series with no value in the window.
    public var nothing: @Sendable (_ label: String) -> String = { "\($0): nothing" }
    /// A series: its latest value (nil when it ends in a gap), its peak and average.
    public var line: @Sendable (_ label: String, _ latest: String?, _ peak: String, _ average: String) -> String = {
        label, latest, peak, average in
        "\(label) \(latest.map { "now \($0)" } ?? "stopped now"), peak \(peak), average \(average)"
    }

    public static let english = ChartStrings()
}
