#if canImport(SwiftUI)
    import ModelDepotScreens
    import SwiftUI

    /// The catalog's models with their badges and the one action each offers, as ``ModelsScreen`` lists them;
    /// a row opens ``ModelDetailView``; "Use" on a ready model calls the app's `onUse` with its catalog name.
    /// Never compiled here.
    public struct ModelListView: View {
        let downloads: ModelDownloads
        let onUse: @Sendable (String) async throws -> Void
        @State private var screen: ModelsScreen?
        @State private var failure: (any Error)?
        @State private var retry: (@MainActor () -> Void)?

        public init(downloads: ModelDownloads, onUse: @escaping @Sendable (String) async throws -> Void) {
            self.downloads = downloads
            self.onUse = onUse
        }

        public var body: some View {
            List {
                if let failure {
                    // Retry runs the action that failed again.
                    ErrorRetryView(failure) {
                        self.failure = nil
                        retry?()
                    }
                }
                if let message = screen?.emptyMessage {
                    Text(message).foregroundStyle(.secondary)
                }
                ForEach(screen?.rows ?? [], id: \.name) { row in
                    // NavigationLink(destination:label:) pushes the detail inside the app's NavigationStack.
                    NavigationLink {
                        ModelDetailView(model: row.name, downloads: downloads, onUse: onUse)
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
                            ModelActionButton(
                                action, label: label, model: row.name, downloads: downloads, onUse: onUse
                            ) { error, again in
                                failure = error
                                retry = again
                            }
                        }
                    }
                }
            }
            .navigationTitle("Models")
            .task {
                // Subscribed before the first load (ModelDownloads.screens), so no change is missed. A progress
                // tick redecides the statuses from memory (ModelsScreen.withDownloads); the disk is read again only
                // when ModelDownloads.generation moves (a download began or ended, the cache changed).
                var loadedAt = -1
                do {
                    for try await _ in downloads.screens({ () }) {
                        let generation = await downloads.generation
                        if let shown = screen, generation == loadedAt {
                            screen = await shown.withDownloads(downloads)
                        } else {
                            loadedAt = generation
                            screen = await ModelsScreen.load(downloads)
                        }
                    }
                } catch {
                    failure = error
                }
            }
        }
    }
#endif
