#if canImport(SwiftUI)
    import ModelDepot
    import ModelDepotScreens
    import SwiftUI

    /// Where the Hub token comes from (never the token itself), whether the endpoint accepts it, the endpoint,
    /// mirrors and network settings, as ``SettingsScreen`` says them. Never compiled here.
    public struct TokenStatusView: View {
        let downloads: ModelDownloads
        let tokenOrigin: HubEnvironment.TokenOrigin
        @State private var screen: SettingsScreen?

        public init(downloads: ModelDownloads, tokenOrigin: HubEnvironment.TokenOrigin) {
            self.downloads = downloads
            self.tokenOrigin = tokenOrigin
        }

        public var body: some View {
            Form {
                if let screen {
                    Section("Hub token") {
                        LabeledContent("Source", value: screen.tokenSource)
                        Text(screen.tokenStatus)
                    }
                    Section("Where models come from") {
                        LabeledContent("Endpoint", value: screen.endpoint)
                        Text(screen.mirrorsText)
                        ForEach(screen.mirrors, id: \.label) { LabeledContent($0.label, value: $0.value) }
                    }
                    Section("Network") {
                        ForEach(screen.network, id: \.label) { LabeledContent($0.label, value: $0.value) }
                    }
                } else {
                    ProgressView()
                }
            }
            .navigationTitle("Settings")
            // Asking the endpoint whether it accepts the token is a network call: it runs in `.task`, not `body`.
            .task { screen = await SettingsScreen.load(downloads, tokenOrigin: tokenOrigin) }
        }
    }
#endif
