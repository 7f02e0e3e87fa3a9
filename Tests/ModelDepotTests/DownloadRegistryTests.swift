import Foundation
import Testing

@testable import ModelDepot

/// The manager's registry of downloads, as a value: a signature-checked download and a plain one of the same
/// request are kept apart, and forgetting one never forgets the other.
@Suite struct DownloadRegistryTests {
    static func task(_ request: SnapshotRequest) -> ModelDownloadTask {
        ModelDownloadTask(request: request) { _ in throw ModelDepotError(.cancelled, "never run") }
    }

    @Test func aSignedDownloadAndAPlainOneOfOneRequestAreKeptApart() throws {
        let request = SnapshotRequest(repo: try RepoID("acme/model"))
        var registry = DownloadRegistry()
        let signed = Self.task(request)
        registry.add(signed, kind: .signed)
        // A plain request may not join the signed download, which may end refused.
        #expect(registry.plainTask(for: request) == nil)
        #expect(registry.task(for: request) === signed)
        let plain = Self.task(request)
        registry.add(plain)
        #expect(registry.tasks.count == 2 && registry.plainTask(for: request) === plain)
        #expect(registry.task(for: request) === plain)
        // A retried plain download replaces the plain one only, and moves to the end.
        let retried = Self.task(request)
        registry.add(retried)
        #expect(registry.tasks.map(ObjectIdentifier.init) == [ObjectIdentifier(signed), ObjectIdentifier(retried)])
        // Forgetting a task that was replaced forgets nothing; forgetting the current one keeps the other kind.
        registry.remove(plain)
        #expect(registry.tasks.count == 2)
        registry.remove(retried)
        #expect(registry.tasks.map(ObjectIdentifier.init) == [ObjectIdentifier(signed)])
        #expect(registry.task(for: request) === signed)
        // A pickle-refusing download is a kind of its own: found by its kind, and kept apart from the signed one.
        let refusing = Self.task(request)
        registry.add(refusing, kind: .refusingPickles)
        #expect(registry.task(for: request, kind: .refusingPickles) === refusing)
        #expect(registry.task(for: request, kind: .signed) === signed && registry.plainTask(for: request) == nil)
        #expect(registry.tasks.count == 2)
    }
}
