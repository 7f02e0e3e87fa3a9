import Foundation
import Testing

@testable import ModelDepot
@testable import ModelDepotCore

/// Errors grouped for a person: every code the library declares has its category, the category survives a JSON
/// round trip, and the remedy a thrower attaches is what front ends act on.
@Suite struct ErrorCategoryTests {
    @Test func everyCodeTheLibraryDeclaresHasACategory() throws {
        let declared = ModelDepotError.Code.coreCodes + [.signatureInvalid, .unsafeFormat]
        #expect(declared.count == Set(declared.map(\.rawValue)).count, "a code is listed twice")
        for code in declared { #expect(code.category != .other, "\(code) has no category") }
        let expected: [ModelDepotError.Code: ModelDepotError.Category] = [
            .network: .network, .rateLimited: .network, .expiredURL: .network, .unauthorized: .authorization,
            .gatedRepository: .authorization, .repositoryNotFound: .notFound, .notCached: .notFound,
            .insufficientDiskSpace: .storage, .locked: .storage, .checksumMismatch: .integrity,
            .signatureInvalid: .integrity, .unsafeFormat: .integrity, .cancelled: .cancelled, .invalidURL: .input,
        ]
        for (code, category) in expected { #expect(code.category == category, "\(code)") }
        // An app's own code has none, and is still equal to itself by name.
        #expect(ModelDepotError.Code("myApp").category == .other)
        #expect(ModelDepotError.Code("network") == .network)
    }

    @Test func aDecodedCodeKeepsItsCategory() throws {
        let encoded = try JSONEncoder().encode([ModelDepotError.Code.checksumMismatch, .init("myApp")])
        #expect(String(decoding: encoded, as: UTF8.self) == #"["checksumMismatch","myApp"]"#)
        let decoded = try JSONDecoder().decode([ModelDepotError.Code].self, from: encoded)
        #expect(decoded.map(\.category) == [.integrity, .other])
    }

    @Test func theSuggestionFollowsTheRemedyThenTheCategory() {
        let offline = ModelDepotError(.notCached, "Offline.", remedy: .goOnline)
        #expect(offline.recoverySuggestion?.contains("HF_HUB_OFFLINE") == true)
        #expect(ModelDepotError(.network, "Reset.").recoverySuggestion?.contains("resumes") == true)
        #expect(ModelDepotError(.network, "Reset.").isRetryable)
        #expect(ModelDepotError(.gatedRepository, "Gated.").recoverySuggestion?.contains("terms") == true)
        #expect(!ModelDepotError(.gatedRepository, "Gated.").isRetryable)
        #expect(ModelDepotError(.cancelled, "Stop.").recoverySuggestion != nil)
        // Where the message says it all, nothing is made up.
        #expect(ModelDepotError(.invalidArgument, "Bad flag.").recoverySuggestion == nil)
    }

    /// The remedies the Hub client attaches where the command line once matched the message's wording.
    @Test func theHubClientNamesTheSettingToFix() throws {
        let error = #expect(throws: ModelDepotError.self) {
            try HubClient(environment: HubEnvironment(variables: ["HF_ENDPOINT": "ftp://mirror"]))
        }
        #expect(error?.remedy == .fixEndpoint)
    }

    /// A URL's last component names the downloaded file; the library refuses every name that is not a plain file
    /// name in the folder, saying to choose the output path.
    @Test func aURLNameThatIsNotAPlainFileNameIsRefused() throws {
        let folder = URL(fileURLWithPath: "/tmp/modeldepot-names/inner")
        for path in ["/a%2F..%2F..%2Fx", "/..%5C..%5Cx", "/a%00x", "/.hidden", "/", "/a/..", "/%0Ax"] {
            let url = try #require(URL(string: "http://host\(path)"), "\(path)")
            let error = #expect(throws: ModelDepotError.self, "\(path)") {
                try ModelManager.destination(for: url, output: nil, in: folder)
            }
            #expect(error?.remedy == .chooseOutputPath, "\(path)")
        }
        let plain = try ModelManager.destination(for: URL(string: "http://host/m/model.gguf")!, output: nil, in: folder)
        #expect(plain.path == "/tmp/modeldepot-names/inner/model.gguf")
        let named = URL(fileURLWithPath: "/tmp/elsewhere/mine.gguf")
        #expect(
            try ModelManager.destination(for: URL(string: "http://host/a%2F..%2Fx")!, output: named, in: folder)
                == named)
    }
}
