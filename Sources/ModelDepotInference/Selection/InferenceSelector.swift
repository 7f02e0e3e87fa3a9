import Foundation
import ModelDepot

/// Where replies come from.
public enum InferenceMode: String, Sendable, Hashable, CaseIterable {
    /// A remote OpenAI-compatible API (Hugging Face's router, a hosted endpoint).
    case cloud
    /// A downloaded model served on this machine.
    case local
}

/// Whether a mode can be used now, and if not, what is missing.
public enum InferenceAvailability: Sendable, Equatable {
    case available
    case unavailable(reason: String)

    public var isAvailable: Bool { self == .available }
}

/// Checks cloud and local inference before either is used, so an app can offer only what works and say
/// exactly what the rest needs.
///
/// ```swift
/// let selector = InferenceSelector(manager: manager, catalog: try ModelCatalog.builtIn())
/// switch await selector.cloudAvailability(baseURL: URL(string: "https://router.huggingface.co/v1")!) { … }
/// switch selector.localAvailability(model: "qwen2.5-0.5b-instruct-q4") { … }
/// ```
public struct InferenceSelector: Sendable {
    public let environment: HubEnvironment
    public let manager: ModelManager
    public let catalog: ModelCatalog
    let findRuntime: @Sendable () -> LocalServerRuntime?
    let transport: any HTTPTransport

    /// Chooses among the runtimes this machine has, the servers `environment` names and `catalog`'s models.
    public init(environment: HubEnvironment = HubEnvironment(), manager: ModelManager, catalog: ModelCatalog) {
        self.init(
            environment: environment, manager: manager, catalog: catalog,
            transport: OpenAICompatibleProvider.sharedTransport)
    }

    /// The same over `transport`, finding a local runtime with `findRuntime`.
    package init(
        environment: HubEnvironment = HubEnvironment(), manager: ModelManager, catalog: ModelCatalog,
        transport: any HTTPTransport,
        findRuntime: @escaping @Sendable () -> LocalServerRuntime? = { LocalServerRuntime.find() }
    ) {
        self.environment = environment
        self.manager = manager
        self.catalog = catalog
        self.transport = transport
        self.findRuntime = findRuntime
    }

    /// Cloud is available when a credential is at hand for a host that needs one (Hugging Face's always do)
    /// and the endpoint answers its model list with that credential.
    public func cloudAvailability(baseURL: URL, apiKey: String? = nil) async -> InferenceAvailability {
        let credentials = InferenceCredentials.resolve(for: baseURL, apiKey: apiKey, environment: environment)
        if credentials == .none, InferenceCredentials.isHuggingFace(baseURL, environment: environment) {
            return .unavailable(
                reason:
                    "No Hugging Face token: set HF_TOKEN (or log in with `hf auth login`) to use \(baseURL.host ?? "the endpoint")."
            )
        }
        do {
            let provider = try OpenAICompatibleProvider(
                baseURL: baseURL, credentials: credentials, transport: transport, retryPolicy: .none)
            _ = try await provider.models()
            return .available
        } catch let error as ModelDepotError {
            return .unavailable(reason: error.message)
        } catch {
            return .unavailable(reason: "\(error)")
        }
    }

    /// Local is available when the catalog model is downloaded, verified and GGUF, and a local server
    /// program is installed.
    public func localAvailability(model name: String) -> InferenceAvailability {
        do {
            _ = try LocalModel.resolve(name, catalog: catalog, manager: manager)
        } catch let error as ModelDepotError {
            return .unavailable(reason: error.message)
        } catch {
            return .unavailable(reason: "\(error)")
        }
        guard findRuntime() != nil else { return .unavailable(reason: LocalServerRuntime.installHint) }
        return .available
    }

    /// The first mode of `preference` that is available, or every reason none is.
    public func select(
        _ preference: [InferenceMode], cloudURL: URL, apiKey: String? = nil, localModel: String
    ) async -> Result<InferenceMode, ModelDepotError> {
        var reasons: [String] = []
        for mode in preference {
            let availability =
                switch mode {
                case .cloud: await cloudAvailability(baseURL: cloudURL, apiKey: apiKey)
                // May hash a multi-gigabyte GGUF once (an unverified download) and ask Python what it has
                // installed: off the cooperative pool.
                case .local:
                    (try? await BlockingWork.run { [self] in localAvailability(model: localModel) })
                        ?? .unavailable(reason: "cannot check the local model")
                }
            switch availability {
            case .available: return .success(mode)
            case .unavailable(let reason): reasons.append("\(mode.rawValue): \(reason)")
            }
        }
        return .failure(
            ModelDepotError(.unavailable, "No inference mode is available.\n" + reasons.joined(separator: "\n")))
    }
}
