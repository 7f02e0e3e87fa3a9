import Foundation
import ModelDepot

/// A runtime serving one model: a local server's process, or an encoder in this process.
public protocol RunningModel: Sendable {
    /// Where it answers (the API root of a local server); nil for a model in this process.
    var endpoint: URL? { get }
    /// Whether it still runs (a server process that exited has not).
    var isRunning: Bool { get }
    /// Its last lines of output: why it stopped or failed to start.
    func lastLines() -> String
    /// Stops it and returns once it has ended.
    func stop() async
    /// The memory its process has in RAM now; nil for a model in this process or when the system does not say.
    var residentBytes: Int64? { get }
    /// The encoder itself, for a model that runs in this process; nil for a server (talk to ``endpoint``).
    var embedder: (any TextEmbedder)? { get }
}

extension RunningModel {
    public var residentBytes: Int64? { nil }
    public var embedder: (any TextEmbedder)? { nil }
}

/// Starts the runtime for a model: the real servers, or scripted ones in tests.
public protocol RuntimeLauncher: Sendable {
    func launch(_ entry: CatalogEntry, kind: RuntimeKind) async throws -> any RunningModel
    /// What loading `entry` would take against the memory available now; nil when unknown.
    func memoryFit(_ entry: CatalogEntry, kind: RuntimeKind) -> MemoryFit?
    /// Whether the program for `kind` is installed here: what it is (`llama-server (/usr/bin/llama-server)`), or
    /// what installs it; nil when the launcher cannot tell.
    func installation(of kind: RuntimeKind) async -> Result<String, RuntimeUnavailable>?
}

extension RuntimeLauncher {
    public func memoryFit(_ entry: CatalogEntry, kind: RuntimeKind) -> MemoryFit? { nil }
    public func installation(of kind: RuntimeKind) async -> Result<String, RuntimeUnavailable>? { nil }
}
