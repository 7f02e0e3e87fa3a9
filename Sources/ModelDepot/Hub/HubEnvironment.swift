import Foundation

/// Where Python's `huggingface_hub` keeps things, resolved from the same environment variables in the same
/// order, so both tools find the same cache (the protocol note, §3).
public struct HubEnvironment: Sendable {
    public let variables: [String: String]

    public init(variables: [String: String] = ProcessInfo.processInfo.environment) {
        self.variables = variables
    }

    /// `HF_HOME`, else `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`.
    public var home: URL {
        if let home = value("HF_HOME") { return URL(fileURLWithPath: expand(home)) }
        if let xdg = value("XDG_CACHE_HOME") {
            return URL(fileURLWithPath: expand(xdg)).appendingPathComponent("huggingface")
        }
        return URL(fileURLWithPath: expand("~/.cache/huggingface"))
    }

    /// `HF_HUB_CACHE`, else the legacy `HUGGINGFACE_HUB_CACHE`, else `<home>/hub`.
    public var cacheDirectory: URL {
        if let cache = value("HF_HUB_CACHE") ?? value("HUGGINGFACE_HUB_CACHE") {
            return URL(fileURLWithPath: expand(cache))
        }
        return home.appendingPathComponent("hub")
    }

    /// `HF_ENDPOINT` without a trailing `/`, else `https://huggingface.co`.
    public var endpoint: String {
        var endpoint = value("HF_ENDPOINT") ?? "https://huggingface.co"
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        return endpoint
    }

    private func value(_ name: String) -> String? {
        guard let value = variables[name], !value.isEmpty else { return nil }
        return value
    }

    /// Expands a leading `~` and `$VARIABLES`, as Python's `expanduser(expandvars(…))` does.
    private func expand(_ path: String) -> String {
        var result = path
        for (name, value) in variables.sorted(by: { $0.key.count > $1.key.count }) {
            result = result.replacingOccurrences(of: "${\(name)}", with: value).replacingOccurrences(
                of: "$\(name)", with: value)
        }
        if result == "~" || result.hasPrefix("~/") {
            let home = variables["HOME"] ?? NSHomeDirectory()
            result = home + result.dropFirst()
        }
        return result
    }
}
