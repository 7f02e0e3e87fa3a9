#if canImport(SwiftUI)
    import ModelDepotScreens
    import SwiftUI

    /// The one button a screen offers for a model (download, pause, resume, retry, repair): its label comes
    /// from the screen, and the action runs through ``ModelDownloads/perform(_:on:)``. A failure is handed to
    /// `onError`, for the screen's error view. Never compiled here.
    public struct ModelActionButton: View {
        let action: ModelAction
        let label: String
        let model: String
        let downloads: ModelDownloads
        let onError: @MainActor (any Error) -> Void

        public init(
            _ action: ModelAction, label: String, model: String, downloads: ModelDownloads,
            onError: @escaping @MainActor (any Error) -> Void = { _ in }
        ) {
            self.action = action
            self.label = label
            self.model = model
            self.downloads = downloads
            self.onError = onError
        }

        public var body: some View {
            // The work runs in a Task started by the tap, not in `body` (Apple: keep `body` free of side effects).
            Button(label) {
                Task {
                    do {
                        try await downloads.perform(action, on: model)
                    } catch {
                        onError(error)
                    }
                }
            }
        }
    }
#endif
