import ModelDepotCore
import Testing

/// `hf://` URIs as huggingface_hub's file system writes them, and plain repository ids.
struct HubReferenceTests {
    @Test func urisGiveTypeRevisionAndPath() throws {
        let plain = try HubReference(parsing: "acme/tiny")
        #expect(
            plain.repo.description == "acme/tiny" && plain.type == .model && plain.revision == nil && plain.path == nil)
        #expect(try HubReference(parsing: "acme/tiny", defaultType: .dataset).type == .dataset)
        let model = try HubReference(parsing: "hf://acme/tiny/sub/config.json")
        #expect(model.repo.description == "acme/tiny" && model.type == .model && model.path == "sub/config.json")
        let dataset = try HubReference(parsing: "hf://datasets/acme/corpus@v1.0/train/part-0.parquet")
        #expect(dataset.type == .dataset && dataset.revision == "v1.0" && dataset.path == "train/part-0.parquet")
        let space = try HubReference(parsing: "HF://spaces/acme/demo/")
        #expect(space.type == .space && space.path == nil)
        let explicitModel = try HubReference(parsing: "hf://models/acme/tiny", defaultType: .dataset)
        #expect(explicitModel.type == .model)
        // A revision with a slash is percent-encoded, as huggingface_hub writes it.
        #expect(try HubReference(parsing: "hf://acme/tiny@refs%2Fpr%2F3").revision == "refs/pr/3")
        let commit = String(repeating: "a", count: 40)
        #expect(try HubReference(parsing: "hf://acme/tiny@\(commit)/model.gguf").revision == commit)
        #expect(HubReference.isURI("hf://x/y") && !HubReference.isURI("x/y"))
    }

    /// `hf download datasets/org/name` takes the type from the id, as the Hub's own URLs write it.
    @Test func idsWithTheirTypeInFront() throws {
        let dataset = try HubReference(parsing: "datasets/acme/corpus")
        #expect(dataset.type == .dataset && dataset.repo.description == "acme/corpus" && dataset.path == nil)
        #expect(try HubReference(parsing: "spaces/acme/demo").type == .space)
        #expect(try HubReference(parsing: "models/acme/tiny", defaultType: .dataset).type == .model)
        // Two segments are an organisation and a name, even when the organisation is called "datasets".
        let org = try HubReference(parsing: "datasets/corpus")
        #expect(org.type == .model && org.repo.description == "datasets/corpus")
        #expect(HubReference.namesType("datasets/acme/corpus") && HubReference.namesType("hf://spaces/a/b"))
        #expect(!HubReference.namesType("datasets/corpus") && !HubReference.namesType("hf://acme/tiny"))
    }

    @Test(arguments: [
        ("hf://", "names no repository"), ("hf://acme", "names no repository"),
        ("hf://datasets/acme", "names no repository"), ("hf://acme/tiny@", "revision after '@'"),
        ("hf://acme/ti..ny", "not a valid repository id"), ("hf://acme/tiny//x", "empty segment"),
        ("hf://acme/tiny@%zz", "percent-encoded"), ("not a repo", "not a valid repository id"),
    ])
    func badReferencesSayWhatIsWrong(text: String, reason: String) {
        #expect {
            _ = try HubReference(parsing: text)
        } throws: { error in
            (error as? ModelDepotError)?.code == .invalidArgument && "\(error)".contains(reason)
        }
    }
}
