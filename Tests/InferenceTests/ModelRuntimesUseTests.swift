import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

@testable import ModelDepotInference

/// What a model in use and a person's choices mean to the runtime manager: a use under way (a long reply) keeps a
/// model from the idle unload however long it takes; "load anyway" is remembered for the model.
@Suite struct ModelRuntimesUseTests {
    typealias Scripted = ModelRuntimesTests.ScriptedModel

    @Test func aModelInUseIsNotUnloadedWhenIdle() async throws {
        let clock = TestClock()
        let chat = Scripted(port: 4021)
        let runtimes = ModelRuntimes(
            launcher: ModelRuntimesTests.ScriptedLauncher([.start(chat)]), idleTime: .seconds(600), clock: clock)
        try await runtimes.load(ModelRuntimesTests.entry())
        var use: RuntimeUse? = await runtimes.use("tiny-chat")
        clock.advance(by: .seconds(3600))
        #expect(await runtimes.unloadIdle().isEmpty, "an hour-long reply is still a use")
        withExtendedLifetime(use) {}
        use = nil
        // The use ends when its last reference goes; the idle time starts then.
        #expect(await waitUntil { await runtimes.loaded.first?.uses == 0 })
        #expect(await runtimes.unloadIdle().isEmpty && chat.isRunning)
        clock.advance(by: .seconds(601))
        #expect(await runtimes.unloadIdle() == ["tiny-chat"])
        #expect(!chat.isRunning)
    }

    @Test func loadAnywayIsRememberedForTheModel() async throws {
        let launcher = ModelRuntimesTests.ScriptedLauncher([.start(Scripted(port: 4022)), .start(Scripted(port: 4023))])
        launcher.fit.withLock { $0 = MemoryFit(weightBytes: 9_000, cacheBytes: 0, availableBytes: 1_000) }
        let runtimes = ModelRuntimes(launcher: launcher)
        let entry = ModelRuntimesTests.entry()
        try await runtimes.load(entry, ignoringMemory: true)
        await runtimes.unload(entry.name)
        // Loaded again (after an idle unload, say) without the flag: the person's word still holds.
        try await runtimes.load(entry)
        #expect(launcher.launches.withLock { $0 } == 2)
    }
}
