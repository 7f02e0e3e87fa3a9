import ModelDepot
import ModelDepotScreens
import Testing

#if canImport(SwiftUI)
    import ModelDepotSwiftUI
    import SwiftUI
#endif

/// The samples of "Adding model screens to your app" (the DocC article): what can run here runs; the views are
/// compiled only where SwiftUI exists.
enum AddingModelScreensSamples {
    enum AppModels {
        /// One set of downloads for the whole app, from the Hub the environment names into its cache.
        static func makeDownloads() throws -> ModelDownloads {
            try ModelDownloads(manager: ModelManager(), catalog: ModelCatalog.builtIn())
        }
    }

    #if canImport(SwiftUI)
        struct ModelsTab: View {
            let downloads: ModelDownloads

            var body: some View {
                NavigationStack {
                    ModelListView(downloads: downloads) { name in
                        // Open the model in the app: its chat, its embedder.
                        print("use \(name)")
                    }
                }
            }
        }

        struct FirstRun: View {
            let downloads: ModelDownloads
            @Binding var done: Bool

            var body: some View {
                OnboardingDownloadView(model: "whisper-tiny-en-ct2", downloads: downloads) { done = true }
            }
        }
    #endif
}

@Suite struct AddingModelScreensSampleTests {
    @Test func theArticlesDownloadsAreMadeFromTheEnvironment() throws {
        let downloads = try AddingModelScreensSamples.AppModels.makeDownloads()
        #expect(downloads.catalog.entry(named: "whisper-tiny-en-ct2") != nil)
    }
}
