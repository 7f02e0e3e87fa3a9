#if canImport(SwiftUI)
    import ModelDepotScreens
    import SwiftUI

    /// One model: its facts, files, where it lives, whether it fits, and its action, as ``ModelDetailScreen``
    /// tells them; "Use" calls the app's `onUse`. The plan (Hub calls) is made once per model shown; a change of
    /// the downloads redecides only the status (``ModelDetailScreen/updated(downloads:strings:)``). A failed action
    /// shows above the page rather than in its place. Never compiled here.
    public struct ModelDetailView: View {
        let model: String
        let downloads: ModelDownloads
        let onUse: @Sendable (String) async throws -> Void
        @State private var screen: ModelDetailScreen?
        @State private var failure: (any Error)?
        @State private var retry: (@MainActor () -> Void)?
        /// Bumped by Retry after a failed load: the page is followed again from scratch.
        @State private var attempt = 0

        public init(model: String, downloads: ModelDownloads, onUse: @escaping @Sendable (String) async throws -> Void)
        {
            self.model = model
            self.downloads = downloads
            self.onUse = onUse
        }

        public var body: some View {
            Form {
                if let failure {
                    ErrorRetryView(failure) {
                        self.failure = nil
                        retry?()
                    }
                }
                if let screen {
                    Section {
                        Text(screen.description)
                        ModelStatusBadge(screen.status)
                        if let action = screen.status.action, let label = screen.status.actionLabel {
                            ModelActionButton(
                                action, label: label, model: model, downloads: downloads, onUse: onUse
                            ) { error, again in
                                failure = error
                                retry = again
                            }
                        }
                        Text(screen.planText).foregroundStyle(screen.fits ? Color.secondary : Color.red)
                    }
                    Section {
                        // LabeledContent (iOS 16, macOS 13) lays a label and its value out as Settings does.
                        ForEach(screen.facts, id: \.label) { fact in LabeledContent(fact.label, value: fact.value) }
                        if let location = screen.location { LabeledContent("Folder", value: location) }
                    }
                    Section("Files") {
                        ForEach(screen.files, id: \.path) { file in
                            LabeledContent(file.path, value: file.sizeText)
                        }
                    }
                }
            }
            .navigationTitle(model)
            .task(id: "\(model)#\(attempt)") {
                screen = nil
                do {
                    // One tick now and one per change, subscribed before the first load.
                    for try await _ in downloads.screens({ () }) {
                        if let shown = screen {
                            screen = try await shown.updated(downloads: downloads)
                        } else {
                            screen = try await ModelDetailScreen.load(model, downloads: downloads)
                        }
                    }
                } catch {
                    failure = error
                    retry = { attempt += 1 }
                }
            }
        }
    }
#endif
