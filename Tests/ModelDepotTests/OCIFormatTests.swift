import Foundation
import ModelDepotCore
import ModelDepotOCI
import Testing

/// The OCI values read from hostile input: references as people type them, `WWW-Authenticate` challenges, digests,
/// media types, and ModelPack's parameter sizes.
@Suite struct OCIFormatTests {
    @Test func referencesParseAsSkopeoAndOrasNameThem() throws {
        let tagged = try OCIReference(parsing: "oci://registry.example:5000/acme/tiny-llm:v1.0")
        #expect(tagged.registry == "registry.example:5000" && tagged.repository == "acme/tiny-llm")
        #expect(tagged.tag == "v1.0" && tagged.digest == nil && !tagged.plainHTTP)
        #expect(tagged.registryURL.absoluteString == "https://registry.example:5000")

        let bare = try OCIReference(parsing: "oci://ghcr.io/acme/models/tiny")
        #expect(bare.tag == "latest" && bare.manifestReference == "latest")

        let digest = "sha256:" + String(repeating: "0f", count: 32)
        let pinned = try OCIReference(parsing: "oci://localhost:5000/acme/tiny:main@\(digest)")
        #expect(pinned.tag == "main" && pinned.digest?.description == digest && pinned.manifestReference == digest)
        #expect(pinned.plainHTTP, "a registry on this machine is asked over http")
        #expect(try OCIReference(parsing: "oci://127.0.0.1:1/a@\(digest)").tag == nil)
    }

    @Test(arguments: [
        "docker://r/a", "oci://", "oci://registry", "oci://registry/Acme/Tiny", "oci://r/a//b", "oci://r/-a",
        "oci://r/a:", "oci://r/a:.tag", "oci://r/a@sha256:abc",
        "oci://r/a@sha512:" + String(repeating: "0", count: 128),
        "oci://r/a__-b", "oci://r/a:" + String(repeating: "t", count: 129), "oci://r e/a", "oci://r/a/../b",
    ])
    func malformedReferencesAreRefusedWithWhy(_ text: String) {
        #expect(throws: ModelDepotError.self) { try OCIReference(parsing: text) }
    }

    @Test func challengesParseWithQuotesAndCommas() {
        let bearer = RegistryChallenge(
            header:
                #"Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push""#
        )
        #expect(bearer?.scheme == .bearer && bearer?.realm == "https://auth.example/token")
        #expect(bearer?.parameters["scope"] == "repository:a/b:pull,push")
        #expect(bearer?.parameters["service"] == "registry.example")
        #expect(RegistryChallenge(header: #"Basic realm="basic-realm""#)?.scheme == .basic)
        #expect(RegistryChallenge(header: "Negotiate abc") == nil)
        let escaped = RegistryChallenge(header: #"bearer realm="a\"b",error=insufficient_scope"#)
        #expect(escaped?.realm == #"a"b"# && escaped?.parameters["error"] == "insufficient_scope")
    }

    @Test func digestsOtherThanSHA256AreNotTrusted() throws {
        #expect(OCIDigest("sha256:" + String(repeating: "a", count: 64)) != nil)
        #expect(OCIDigest("sha256:" + String(repeating: "A", count: 64)) == nil, "upper case is not canonical")
        #expect(OCIDigest("sha512:" + String(repeating: "a", count: 128)) == nil)
        let json = Data(#"{"mediaType":"x","digest":"md5:abc","size":1}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(OCIDescriptor.self, from: json) }
    }

    @Test func layerTypesFollowModelPackAndTheToolsThatWriteIt() {
        #expect(OCIMediaType.rawLayerType(forPath: "model-00001-of-00002.safetensors") == OCIMediaType.weightRaw)
        #expect(OCIMediaType.rawLayerType(forPath: "q4/model.gguf") == OCIMediaType.weightRaw)
        #expect(OCIMediaType.rawLayerType(forPath: "tokenizer.json") == OCIMediaType.weightConfigRaw)
        #expect(OCIMediaType.rawLayerType(forPath: "model.sig") == OCIMediaType.weightConfigRaw)
        #expect(OCIMediaType.rawLayerType(forPath: "README.md") == OCIMediaType.docRaw)
        #expect(OCIMediaType.rawLayerType(forPath: "LICENSE") == OCIMediaType.docRaw)
        #expect(OCIMediaType.rawLayerType(forPath: "modeling.py") == OCIMediaType.codeRaw)
        #expect(OCIMediaType.layerKind(of: OCIMediaType.weightRaw) == .raw)
        #expect(OCIMediaType.layerKind(of: "application/vnd.cnai.model.weight.v1.tar") == .tar(gzip: false))
        #expect(OCIMediaType.layerKind(of: "application/vnd.cncf.model.doc.v1.tar+gzip") == .tar(gzip: true))
        #expect(OCIMediaType.layerKind(of: "application/vnd.docker.ai.gguf.v3") == .raw)
        #expect(OCIMediaType.layerKind(of: "application/vnd.cncf.model.weight.v1.tar+zstd") == nil, "zstd: refused")
        #expect(OCIMediaType.layerKind(of: "application/vnd.cncf.model.evil.v1.raw") == nil)
    }

    @Test func parameterSizesAreWrittenAsTheSpecificationShowsThem() {
        #expect(ModelPackConfig.paramSize(1_100_048_384) == "1.1B")
        #expect(ModelPackConfig.paramSize(8_030_261_248) == "8B")
        #expect(ModelPackConfig.paramSize(137_000_000) == "137M")
        #expect(ModelPackConfig.paramSize(22_700) == "22.7K")
        #expect(ModelPackConfig.paramSize(16) == "16")
    }

    @Test func anUploadResumesWhereTheRegistrysRangeSaysItStands() {
        #expect(RegistryClient.uploadedEnd("0-33554431") == 33_554_432)
        #expect(RegistryClient.uploadedEnd("bytes=0-99") == 100)
        #expect(RegistryClient.uploadedEnd("0-0") == 0, "distribution's answer for an empty upload: start again")
        #expect(RegistryClient.uploadedEnd(nil) == nil && RegistryClient.uploadedEnd("garbage") == nil)
    }
}
