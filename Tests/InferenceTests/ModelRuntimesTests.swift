import Foundation
import ModelDepot
import ModelDepotInference
import ModelDepotPlatform
import ModelDepotTesting
import Synchronization
import Testing

/// The runtime manager with scripted runtimes: a slow start loads once however many ask, a start that crashes or
/// finds its port taken fails with the runtime's last lines and may be tried again, a runtime that dies later shows
/// as failed, idle models are unloaded, and models no runtime here serves say why.
@Suite struct ModelRuntimesTests {
    /// A runtime that behaves as the script says.
    final class ScriptedModel: RunningModel {
        let endpoint: URL?
        let running = Mutex(true)
        let stops = Mutex(0)
        let lines: String

        init(port: Int, lines: String = "llama server listening") {
            endpoint = URL(string: "http://127.0.0.1:\(port)/v1")
            self.lines = lines
        }

        var isRunning: Bool { running.withLock { $0 } }
        func lastLines() -> String { lines }
        func crash() { running.withLock { $0 = false } }
        func stop() async {
            running.withLock { $0 = false }
            stops.withLock { $0 += 1 }
        }
    }

    /// Launches scripted runtimes: each launch takes the next step of the script.
    final class ScriptedLauncher: RuntimeLauncher {
        let fit = Mutex<MemoryFit?>(nil)
        func memoryFit(_ entry: CatalogEntry, kind: RuntimeKind) -> MemoryFit? { fit.withLock { $0 } }

        enum Step {
            case start(ScriptedModel)
            case crashOnStart(String)
            /// Holds the start until `release` is called.
            case slowStart(ScriptedModel)
        }

        let steps: Mutex<[Step]>
        let launches = Mutex(0)
        let gate = Mutex(false)

        init(_ steps: [Step]) { self.steps = Mutex(steps) }

        func release() { gate.withLock { $0 = true } }

        func launch(_ entry: CatalogEntry, kind: RuntimeKind) async throws -> any RunningModel {
            launches.withLock { $0 += 1 }
            let step = steps.withLock { $0.removeFirst() }
            switch step {
            case .start(let model): return model
            case .crashOnStart(let lines):
                throw ModelDepotError(.unavailable, "llama-server exited before it answered: \(lines)")
            case .slowStart(let model):
                _ = await waitUntil { self.gate.withLock { $0 } }
                return model
            }
        }
    }

    static func entry(
        _ name: String = "tiny-chat", format: ModelFormat = .gguf, capabilities: [ModelCapability] = [.textGeneration]
    )
        -> CatalogEntry
    {
        CatalogEntry(
            name: name, repo: try! RepoID("acme/\(name)"), files: ["m"], required: ["m"], format: format,
            capabilities: capabilities, sizeBytes: 1, description: name)
    }

    @Test func twoLoadsAtOnceStartOneRuntime() async throws {
        let model = ScriptedModel(port: 4001)
        let launcher = ScriptedLauncher([.slowStart(model)])
        let runtimes = ModelRuntimes(launcher: launcher)
        async let first = runtimes.load(Self.entry())
        async let second = runtimes.load(Self.entry())
        #expect(await waitUntil { await runtimes.loaded.first?.state == .loading })
        launcher.release()
        let (a, b) = try await (first, second)
        #expect(a.endpoint == b.endpoint && a.endpoint == model.endpoint)
        #expect(launcher.launches.withLock { $0 } == 1)
        #expect(
            await runtimes.loaded == [
                .init(name: "tiny-chat", kind: .llamaServer, state: .ready(endpoint: model.endpoint))
            ])
    }

    @Test func aStartThatCrashesOrFindsItsPortTakenFailsWithItsLinesAndCanBeTriedAgain() async throws {
        let model = ScriptedModel(port: 4002)
        let launcher = ScriptedLauncher([
            .crashOnStart("error: out of memory loading tiny-chat"),
            .crashOnStart("couldn't bind HTTP server socket, port: 4002"),
            .start(model),
        ])
        let runtimes = ModelRuntimes(launcher: launcher)
        for expected in ["out of memory", "couldn't bind"] {
            let error = await #expect(throws: ModelDepotError.self) { try await runtimes.load(Self.entry()) }
            #expect(error?.message.contains(expected) == true)
            guard case .failed(let reason) = await runtimes.loaded.first?.state else {
                Issue.record("not shown as failed")
                return
            }
            #expect(reason.contains(expected), "\(reason)")
        }
        try await runtimes.load(Self.entry())
        #expect(await runtimes.loaded.first?.state == .ready(endpoint: model.endpoint))
    }

    @Test func aRuntimeThatDiesShowsAsFailedAndLoadsAgain() async throws {
        let dying = ScriptedModel(port: 4003, lines: "GGML_ASSERT failed; Aborted")
        let fresh = ScriptedModel(port: 4004)
        let launcher = ScriptedLauncher([.start(dying), .start(fresh)])
        let runtimes = ModelRuntimes(launcher: launcher)
        try await runtimes.load(Self.entry())
        dying.crash()
        guard case .failed(let reason) = await runtimes.loaded.first?.state else {
            Issue.record("a dead runtime shown as ready")
            return
        }
        #expect(reason.contains("GGML_ASSERT"))
        let again = try await runtimes.load(Self.entry())
        #expect(again.endpoint == fresh.endpoint && launcher.launches.withLock { $0 } == 2)
    }

    @Test func idleModelsAreUnloadedAndUnloadStopsTheRuntime() async throws {
        let clock = TestClock()
        let chat = ScriptedModel(port: 4005)
        let embed = ScriptedModel(port: 4006)
        let runtimes = ModelRuntimes(
            launcher: ScriptedLauncher([.start(chat), .start(embed)]), idleTime: .seconds(600), clock: clock)
        try await runtimes.load(Self.entry())
        try await runtimes.load(Self.entry("tiny-embed", capabilities: [.embeddings]))
        clock.advance(by: .seconds(400))
        await runtimes.touch("tiny-embed")
        clock.advance(by: .seconds(300))
        #expect(await runtimes.unloadIdle() == ["tiny-chat"])
        #expect(chat.stops.withLock { $0 } == 1 && embed.isRunning)
        await runtimes.unload("tiny-embed")
        #expect(embed.stops.withLock { $0 } == 1)
        #expect(await runtimes.loaded.isEmpty)
    }

    /// A model that clearly does not fit is refused with the estimate, unless loaded anyway.
    @Test func aModelTooBigForTheMemoryIsRefusedWithItsEstimate() async throws {
        let model = ScriptedModel(port: 4007)
        let launcher = ScriptedLauncher([.start(model)])
        launcher.fit.withLock {
            $0 = MemoryFit(weightBytes: 4_000_000_000, cacheBytes: 300_000_000, availableBytes: 2_000_000_000)
        }
        let runtimes = ModelRuntimes(launcher: launcher)
        #expect(await runtimes.memoryFit(Self.entry())?.fits == false)
        let error = await #expect(throws: ModelDepotError.self) { try await runtimes.load(Self.entry()) }
        #expect(error?.message.contains("does not fit") == true && error?.message.contains("available") == true)
        #expect(error?.code == .insufficientMemory, "a code of its own, so a page can offer to load it anyway")
        #expect(launcher.launches.withLock { $0 } == 0, "nothing started")
        try await runtimes.load(Self.entry(), ignoringMemory: true)
        #expect(model.isRunning && launcher.launches.withLock { $0 } == 1)
    }

    /// Two models loading at once cannot both take the same free memory: the second is counted against what the
    /// first will take (the system does not count it until it is loaded).
    @Test func twoModelsLoadingAtOnceAreEachCountedAgainstTheOther() async throws {
        let first = ScriptedModel(port: 4011)
        let launcher = ScriptedLauncher([.slowStart(first), .start(ScriptedModel(port: 4012))])
        launcher.fit.withLock {
            $0 = MemoryFit(weightBytes: 5_000_000_000, cacheBytes: 1_000_000_000, availableBytes: 10_000_000_000)
        }
        let runtimes = ModelRuntimes(launcher: launcher)
        async let loading = runtimes.load(Self.entry("big-one"))
        #expect(await waitUntil { await runtimes.loaded.first?.state == .loading })
        // 6 GB of 10 is promised to big-one: another 6 GB does not fit, and the estimate says why.
        let fit = try #require(await runtimes.memoryFit(Self.entry("big-two")))
        #expect(!fit.fits && fit.reservedBytes == 6_000_000_000, "\(fit)")
        let error = await #expect(throws: ModelDepotError.self) { try await runtimes.load(Self.entry("big-two")) }
        #expect(error?.code == .insufficientMemory)
        #expect(error?.message.contains("other loaded or loading models hold") == true, "\(error?.message ?? "")")
        launcher.release()
        _ = try await loading
        // Once big-one is up the system counts its cache as taken, but not its weights, mapped from disk: those stay
        // reserved.
        #expect(await runtimes.memoryFit(Self.entry("big-two"))?.reservedBytes == 5_000_000_000)
    }

    @Test func thisMachineSaysHowMuchMemoryIsAvailable() {
        let fit = MemoryFit(weightBytes: 1 << 30, cacheBytes: 1 << 28, availableBytes: nil)
        #expect(fit.fits, "unknown memory refuses nothing")
        #expect(fit.summary == "needs about 1.2 GiB (1.0 GiB of weights, 256.0 MiB of cache)", "\(fit.summary)")
        // Linux's MemAvailable, read from /proc/meminfo.
        #expect((AvailableMemory.current() ?? 0) > 0)
    }

    /// Unloaded while it starts: the runtime that then comes up is stopped, and the caller does not get it.
    @Test func anUnloadDuringAStartStopsWhatStartsAndTheCallerDoesNotGetIt() async throws {
        let model = ScriptedModel(port: 4008)
        let launcher = ScriptedLauncher([.slowStart(model)])
        let runtimes = ModelRuntimes(launcher: launcher)
        async let first = runtimes.load(Self.entry())
        #expect(await waitUntil { await runtimes.loaded.first?.state == .loading })
        await runtimes.unload("tiny-chat")
        launcher.release()
        var failure = ""
        do { _ = try await first } catch { failure = "\(error)" }
        #expect(failure.contains("unloaded while its runtime started"), "\(failure)")
        #expect(await waitUntil { !model.isRunning }, "the runtime that came up after the unload still runs")
        #expect(await runtimes.loaded.isEmpty)
    }

    @Test func unloadAllStopsEveryRuntime() async throws {
        let chat = ScriptedModel(port: 4011)
        let embed = ScriptedModel(port: 4012)
        let runtimes = ModelRuntimes(launcher: ScriptedLauncher([.start(chat), .start(embed)]))
        try await runtimes.load(Self.entry())
        try await runtimes.load(Self.entry("tiny-embed", capabilities: [.embeddings]))
        await runtimes.unloadAll()
        #expect(!chat.isRunning && !embed.isRunning)
        #expect(await runtimes.loaded.isEmpty)
    }

    @Test func modelsNoRuntimeServesSayWhy() async throws {
        #expect(RuntimeKind.serving(Self.entry()) == .success(.llamaServer))
        #expect(
            RuntimeKind.serving(Self.entry("minilm", format: .safetensors, capabilities: [.embeddings]))
                == .success(.sentenceEncoder))
        #expect(
            RuntimeKind.serving(Self.entry("tiny.en", format: .ctranslate2, capabilities: [.transcription]))
                == .success(.whisperServer))
        let runtimes = ModelRuntimes(launcher: ScriptedLauncher([]))
        let error = await #expect(throws: ModelDepotError.self) {
            try await runtimes.load(Self.entry("apple-chat", format: .coreml))
        }
        #expect(error?.message.contains("Core ML models run in apps on Apple devices") == true)
        #expect(
            RuntimeKind.serving(Self.entry("torchy", format: .pytorch)).map { _ in "" }
                == .failure(.init("no runtime here runs pytorch files; pick a GGUF build of this model")))
    }
}
