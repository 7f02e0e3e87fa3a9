#if canImport(SwiftUI)
    import ModelDepot
    import SwiftUI

    /// An error as a person reads it, with Retry: the message of a `ModelDepotError` (which says what to do),
    /// else the error's description. Never compiled here.
    public struct ErrorRetryView: View {
        let message: String
        let retry: @MainActor () -> Void

        public init(_ error: any Error, retry: @escaping @MainActor () -> Void) {
            self.message = (error as? ModelDepotError)?.message ?? "\(error)"
            self.retry = retry
        }

        public var body: some View {
            // ContentUnavailableView (iOS 17, macOS 14) is Apple's view for an empty or failed state.
            ContentUnavailableView {
                Label("Something went wrong", systemImage: "exclamationmark.triangle")
            } description: {
                Text(message)
            } actions: {
                Button("Retry", action: retry)
            }
        }
    }
#endif
