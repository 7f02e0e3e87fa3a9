import Foundation
import ModelDepotCore
import Testing

@testable import ModelDepot
@testable import ModelDepotTrust

/// The pieces of a bill of materials that need no cache: a model card's front matter read as hostile text, the
/// purl, the serial number, the licence choice.
@Suite struct BillOfMaterialsFormatTests {
    static func card(_ text: String) -> ModelCardMetadata { ModelCardMetadata(readme: Data(text.utf8)) }

    @Test func frontMatterFieldsInEachYAMLShapeCardsUse() {
        let card = Self.card(
            """
            ---
            license: "apache-2.0"   # the licence
            language:
            - en
            - 'de'
            datasets: [acme/one, "acme/two"]
            base_model:
              - acme/base
            pipeline_tag: text-generation
            library_name: transformers
            tags:
            - a
            model-index:
            - name: x
              results:
              - task: {type: y}
            ---
            # Title
            license: mit
            """)
        #expect(card.license == ["apache-2.0"])
        #expect(card.languages == ["en", "de"])
        #expect(card.datasets == ["acme/one", "acme/two"])
        #expect(card.baseModels == ["acme/base"])
        #expect(card.pipelineTag == "text-generation")
        #expect(card.libraryName == "transformers")
        #expect(card.tags == ["a"])
    }

    @Test func commentsNullsAndAByteOrderMarkAreReadAsYAMLReadsThem() {
        let card = Self.card(
            "\u{FEFF}---\nlicense: null\nlicense_name: \"Acme #1\"  # the name\nlanguage: [en]  # one\npipeline_tag: ~\n---\n"
        )
        #expect(card.license.isEmpty && card.pipelineTag == nil)
        #expect(card.licenseName == "Acme #1")
        #expect(card.languages == ["en"])
        // A quote inside a plain value opens nothing: the comment after it still goes.
        #expect(Self.card("---\nlicense_name: Bob's licence # see X\n---\n").licenseName == "Bob's licence")
    }

    @Test func theEndpointABillShowsHasNoCredentialsQueryOrFragment() {
        let shown = BillOfMaterials.publicEndpoint(URL(string: "https://user:secret@hub.example/mirror/?token=x#f")!)
        #expect(shown.absoluteString == "https://hub.example/mirror")
    }

    @Test func hostileOrAbsentFrontMatterGivesNothingItCannotTrust() {
        #expect(Self.card("# No front matter\nlicense: mit\n") == ModelCardMetadata())
        #expect(Self.card("") == ModelCardMetadata())
        // Maps, anchors, aliases, block scalars and flow maps are not plain strings: dropped.
        let odd = Self.card(
            """
            ---
            license: {id: mit}
            pipeline_tag: &tag text-generation
            library_name: *tag
            tags: |
              a
            datasets:
            - name: acme/one
            - acme/two
            language: "\u{0}en"
            ---
            """)
        #expect(odd.license.isEmpty && odd.pipelineTag == nil && odd.libraryName == nil && odd.tags.isEmpty)
        #expect(odd.datasets == ["acme/two"])
        #expect(odd.languages.isEmpty)
        // An endless front matter is read only so far; a value longer than a line of text is dropped.
        let long = Self.card(
            "---\nlicense: mit\npipeline_tag: \(String(repeating: "x", count: 300))\n"
                + String(repeating: "tags:\n- t\n", count: 20_000))
        #expect(long.license == ["mit"] && long.pipelineTag == nil)
        #expect(long.tags.count < 20_000)
    }

    static func bill(card: ModelCardMetadata, endpoint: String = "https://huggingface.co") throws -> BillOfMaterials {
        BillOfMaterials(
            repo: try RepoID("acme/model"), type: .model, commit: String(repeating: "a", count: 40), files: [],
            signature: .absent, endpoint: URL(string: endpoint)!, revision: nil, card: card, listIsRecorded: true)
    }

    @Test func purlNamesTheHubOnlyWhenItIsNotHuggingFace() throws {
        let commit = String(repeating: "a", count: 40)
        #expect(try Self.bill(card: .init()).purl(hubHost: "huggingface.co") == "pkg:huggingface/acme/model@\(commit)")
        let mirrored = try Self.bill(card: .init(), endpoint: "http://mirror:8080")
        #expect(
            mirrored.purl(hubHost: "mirror")
                == "pkg:huggingface/acme/model@\(commit)?repository_url=http%3A%2F%2Fmirror%3A8080")
    }

    @Test func licencesAreOneSPDXExpressionOrNamedOneByOne() throws {
        var card = ModelCardMetadata()
        card.license = ["apache-2.0", "MIT"]
        #expect(try Self.bill(card: card).licenseChoice()?.first?["expression"] as? String == "Apache-2.0 AND MIT")
        card.license = ["other"]
        card.licenseName = "acme-research"
        let named = try Self.bill(card: card).licenseChoice()?.first?["license"] as? [String: Any]
        #expect(named?["name"] as? String == "acme-research" && named?["id"] == nil)
        card.license = ["llama3", "mit"]
        let mixed = try Self.bill(card: card).licenseChoice() ?? []
        #expect(mixed.compactMap { ($0["license"] as? [String: Any])?["name"] as? String } == ["llama3"])
        #expect(mixed.compactMap { ($0["license"] as? [String: Any])?["id"] as? String } == ["MIT"])
    }

    /// A pickle importing something neither known safe nor known dangerous is not called safe.
    @Test func picklesAreDangerousUnknownOrSafe() throws {
        var bill = try Self.bill(card: .init())
        func verdict(_ imports: [PickleImport]) -> String? {
            bill.files = [
                BillOfMaterials.File(
                    path: "pytorch_model.bin", size: 1, sha256: String(repeating: "0", count: 64),
                    verification: .verified, downloaded: nil,
                    pickle: PickleFile(container: .raw(protocol: 2), imports: imports), pickleProblem: nil,
                    gitBlobID: nil)
            ]
            let file = (bill.modelComponent()["components"] as? [[String: Any]])?.first
            return ((file?["properties"] as? [[String: String]]) ?? []).first { $0["name"] == "modeldepot:pickle" }?[
                "value"]
        }
        let safe = PickleImport(module: "collections", name: "OrderedDict", verdict: .safe)
        #expect(verdict([safe]) == "imports only known-safe globals")
        #expect(
            verdict([safe, PickleImport(module: "acme", name: "Model", verdict: .unknown)])
                == "imports globals not known to be safe (treat as unsafe)")
        #expect(verdict([PickleImport(module: "os", name: "system", verdict: .dangerous)]) == "dangerous")
    }

    @Test func serialNumberIsAVersion8UUIDOfTheContentAndTheBillIsDeterministic() throws {
        let bill = try Self.bill(card: .init())
        let first = bill.cycloneDX()
        #expect(first == bill.cycloneDX())
        let document = try #require(try JSONSerialization.jsonObject(with: first) as? [String: Any])
        let serial = try #require(document["serialNumber"] as? String)
        #expect(
            serial.wholeMatch(of: /urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/)
                != nil, "\(serial)")
        var other = bill
        other.commit = String(repeating: "b", count: 40)
        let otherSerial = (try JSONSerialization.jsonObject(with: other.cycloneDX()) as? [String: Any])?["serialNumber"]
        #expect(otherSerial as? String != serial)
    }
}
