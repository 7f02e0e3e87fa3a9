#if canImport(SwiftUI)
    import ModelDepotScreens
    import SwiftUI

    /// The one button a screen offers for a model (download, pause, resume, retry, repair, use): its label comes
    /// from the screen, and the action runs through ``ModelDownloads/run(_:on:onUse:)``: "Use" goes to the app's
    /// `onUse` (opening a model is the app's), every other action to the downloads. A failure is handed to
    /// `onError` with a way to try the same action again, for the screen's error view. Never compiled here.
    public struct ModelActionButton: View {
        let action: ModelAction
        let label: String
        let model: String
        let downloads: ModelDownloads
        let onUse: @Sendable (String) async throws -> Void
        let onError: @MainActor (any Error, _ retry: @escaping @MainActor () -> Void) -> Void

        public init(
            _ action: ModelAction, label: String, model: String, downloads: ModelDownloads,
            onUse: @escaping @Sendable (String) async throws -> Void,
            onError: @escaping @MainActor (any Error, _ retry: @escaping @MainActor () -> Void) -> Void = { _, _ in }
        ) {
            self.action = action
            self.label = label
            self.model = model
            self.downloads = downloads
            self.onUse = onUse
            self.onError = onError
        }

        public var body: some View {
            // The work runs in a Task started by the tap, not in `body` (Apple: keep `body` free of side effects).
            Button(label) { run() }
        }

        @MainActor private func run() {
            Task {
                do {
                    try await downloads.run(action, on: model, onUse: onUse)
                } catch {
                    onError(error) { run() }
                }
            }
        }
    }
#endif
