#if canImport(SwiftUI)
    import ModelDepotScreens
    import SwiftUI

    /// Downloads under way and done: each with its state, bytes, speed, time left, files and the buttons
    /// ``DownloadsScreen`` offers (pause, resume, cancel, retry). Never compiled here.
    public struct DownloadsView: View {
        let downloads: ModelDownloads
        let onUse: @Sendable (String) async throws -> Void
        @State private var screen: DownloadsScreen?
        @State private var failure: (any Error)?
        @State private var retry: (@MainActor () -> Void)?

        /// `onUse` opens a finished model in the app (its "Use" button).
        public init(downloads: ModelDownloads, onUse: @escaping @Sendable (String) async throws -> Void) {
            self.downloads = downloads
            self.onUse = onUse
        }

        public var body: some View {
            List {
                if let failure {
                    ErrorRetryView(failure) {
                        self.failure = nil
                        retry?()
                    }
                }
                if let overall = screen?.overallText {
                    VStack(alignment: .leading) {
                        Text(overall)
                        if let fraction = screen?.overallFraction { ProgressView(value: fraction) }
                    }
                }
                #if canImport(Charts)
                    if let screen, screen.throughput.hasValues {
                        ThroughputChartView(
                            samples: screen.throughputSamples, limit: screen.bandwidthBytesPerSecond,
                            chart: screen.throughput)
                    }
                #endif
                if let message = screen?.emptyMessage {
                    Text(message).foregroundStyle(.secondary)
                }
                ForEach(screen?.rows ?? [], id: \.name) { row in
                    VStack(alignment: .leading, spacing: 4) {
                        HStack {
                            Text(row.name).font(.headline)
                            Spacer()
                            Text(row.stateText).foregroundStyle(.secondary)
                        }
                        if let fraction = row.fraction { ProgressView(value: fraction) }
                        Text(
                            [row.bytesText, row.speedText, row.etaText, row.filesText].compactMap { $0 }.joined(
                                separator: " · ")
                        )
                        .font(.caption).monospacedDigit()
                        if let waiting = row.waiting { Text(waiting).font(.caption).foregroundStyle(.orange) }
                        if let message = row.message { Text(message).font(.caption).foregroundStyle(.red) }
                        #if canImport(Charts)
                            if let samples = row.throughputSamples, let chart = row.throughput {
                                ThroughputChartView(
                                    samples: samples, limit: screen?.bandwidthBytesPerSecond, chart: chart)
                            }
                        #endif
                        HStack {
                            ForEach(row.actions, id: \.action) { button in
                                ModelActionButton(
                                    button.action, label: button.label, model: row.name, downloads: downloads,
                                    onUse: onUse
                                ) { error, again in
                                    failure = error
                                    retry = again
                                }
                                .buttonStyle(.bordered)
                            }
                        }
                    }
                }
            }
            .navigationTitle("Downloads")
            .task {
                do {
                    for try await loaded in downloads.screens({ await DownloadsScreen.load(downloads) }) {
                        screen = loaded
                    }
                } catch {
                    failure = error
                }
            }
        }
    }
#endif
