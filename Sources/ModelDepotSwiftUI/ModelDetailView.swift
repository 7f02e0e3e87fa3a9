#if canImport(SwiftUI)
    import ModelDepotScreens
    import SwiftUI

    /// One model: its facts, files, where it lives, whether it fits, and its action, as ``ModelDetailScreen``
    /// tells them. Never compiled here.
    public struct ModelDetailView: View {
        let model: String
        let downloads: ModelDownloads
        @State private var screen: ModelDetailScreen?
        @State private var failure: (any Error)?

        public init(model: String, downloads: ModelDownloads) {
            self.model = model
            self.downloads = downloads
        }

        public var body: some View {
            Form {
                if let failure {
                    ErrorRetryView(failure) {
                        self.failure = nil
                        Task { await load() }
                    }
                } else if let screen {
                    Section {
                        Text(screen.description)
                        ModelStatusBadge(screen.status)
                        if let action = screen.status.action, let label = screen.status.actionLabel {
                            ModelActionButton(action, label: label, model: model, downloads: downloads) { failure = $0 }
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
            .task(id: model) {
                await load()
                for await _ in await downloads.changes() { await load() }
            }
        }

        private func load() async {
            do {
                screen = try await ModelDetailScreen.load(model, downloads: downloads)
            } catch {
                failure = error
            }
        }
    }
#endif
