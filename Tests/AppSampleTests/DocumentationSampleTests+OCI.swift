import Foundation
import ModelDepot
import ModelDepotOCI

// The OCI article's sample, apart from the others: registries are a product of their own (`ModelDepotOCI`), and
// the other samples compile with `import ModelDepot` alone (ModelDepotTesting only for the test that runs one).

/// "Moving models through OCI registries".
enum MovingModelsThroughOCIRegistriesSamples {
    static func pushAndPull() async throws {
        let models = try ModelManager()
        let reference = try OCIReference(parsing: "oci://registry.example/models/tiny-llm:main")
        let client = RegistryClient(
            registry: reference.registryURL, credential: try RegistryCredential.stored(for: reference.registry))
        let pushed = try await models.pushModelPack(try RepoID("acme/tiny-llm"), to: reference, client: client)
        print(pushed.digest)  // the commit, as the registry names it

        let pulled = try await models.pullModelPack(reference.pinned(to: OCIDigest(pushed.digest)!), client: client)
        print(pulled.folder)  // snapshots/<commit>/ of acme/tiny-llm, where Python's huggingface_hub finds it too
    }
}
