#if canImport(SwiftUI)
    import ModelDepotScreens
    import SwiftUI

    /// The step before a model's first use, as Spezi's onboarding download: check the disk, offer the download
    /// with its size, show progress, and continue once the model is ready. Every word and every decision is
    /// ``OnboardingScreen``'s. Never compiled here.
    public struct OnboardingDownloadView: View {
        let model: String
        let downloads: ModelDownloads
        let onContinue: @MainActor () -> Void
        @State private var screen: OnboardingScreen?
        @State private var failure: (any Error)?

        public init(model: String, downloads: ModelDownloads, onContinue: @escaping @MainActor () -> Void) {
            self.model = model
            self.downloads = downloads
            self.onContinue = onContinue
        }

        public var body: some View {
            VStack(spacing: 16) {
                if let failure {
                    ErrorRetryView(failure) {
                        self.failure = nil
                        Task { await load() }
                    }
                } else if let screen {
                    Text(screen.title).font(.title2.bold())
                    Text(screen.message).multilineTextAlignment(.center)
                    Text(screen.sizeText).foregroundStyle(.secondary)
                    if let fraction = screen.fraction, screen.step == .downloading {
                        ProgressView(value: fraction)
                    }
                    if screen.step == .ready, let label = screen.actionLabel {
                        Button(label, action: onContinue).buttonStyle(.borderedProminent)
                    } else if let action = screen.action, let label = screen.actionLabel {
                        // "Use" here is the step's Continue.
                        ModelActionButton(
                            action, label: label, model: model, downloads: downloads,
                            onUse: { _ in await onContinue() }
                        ) { error, _ in
                            failure = error
                        }
                        .buttonStyle(.borderedProminent)
                    }
                } else {
                    ProgressView()
                }
            }
            .padding()
            // `.task` starts with the view and is cancelled when it goes (SwiftUI `View.task(priority:_:)`);
            // the screen is loaded again on every change the downloads announce.
            .task(id: model) {
                // Subscribed before the first load (ModelDownloads.screens), so no change is missed.
                do {
                    for try await _ in downloads.screens({ () }) { await load() }
                } catch {
                    failure = error
                }
            }
        }

        private func load() async {
            do {
                screen = try await OnboardingScreen.load(model, downloads: downloads)
            } catch {
                failure = error
            }
        }
    }
#endif
