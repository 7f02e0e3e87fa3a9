#if canImport(SwiftUI)
    import ModelDepotScreens
    import SwiftUI

    /// The catalog's models with their badges and the one action each offers, as ``ModelsScreen`` lists them;
    /// a row opens ``ModelDetailView``. Never compiled here.
    public struct ModelListView: View {
        let downloads: ModelDownloads
        @State private var screen: ModelsScreen?
        @State private var failure: (any Error)?

        public init(downloads: ModelDownloads) {
            self.downloads = downloads
        }

        public var body: some View {
            List {
                if let failure {
                    ErrorRetryView(failure) { self.failure = nil }
                }
                if let message = screen?.emptyMessage {
                    Text(message).foregroundStyle(.secondary)
                }
                ForEach(screen?.rows ?? [], id: \.name) { row in
                    // NavigationLink(destination:label:) pushes the detail inside the app's NavigationStack.
                    NavigationLink {
                        ModelDetailView(model: row.name, downloads: downloads)
                    } label: {
                        VStack(alignment: .leading, spacing: 4) {
                            Text(row.name).font(.headline)
                            Text(row.description).font(.subheadline).foregroundStyle(.secondary)
                            HStack {
                                Text(row.sizeText)
                                ModelStatusBadge(row.status)
                            }
                        }
                    }
                    .swipeActions {
                        if let action = row.status.action, let label = row.status.actionLabel {
                            ModelActionButton(action, label: label, model: row.name, downloads: downloads) {
                                failure = $0
                            }
                        }
                    }
                }
            }
            .navigationTitle("Models")
            .task {
                screen = await ModelsScreen.load(downloads)
                for await _ in await downloads.changes() { screen = await ModelsScreen.load(downloads) }
            }
        }
    }
#endif
