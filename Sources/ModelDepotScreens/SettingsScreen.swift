import Foundation
import ModelDepot

/// The Settings screen: where the Hub token comes from and whether the endpoint accepts it (never the token
/// itself), the endpoint and the mirrors asked before it, and how downloads use the network.
public struct SettingsScreen: Sendable, Equatable, Encodable {
    /// A label and its value, in the order shown.
    public struct Fact: Sendable, Equatable, Encodable {
        public var label: String
        public var value: String
    }

    /// What the token check found: `accepted`, `refused`, `none`, `offline` or `unavailable`.
    public var tokenState: String
    /// "HF_TOKEN (environment)", "the token file /home/me/.cache/huggingface/token", "none".
    public var tokenSource: String
    /// "Accepted by http://…: signed in as alice." and the like: what to do when it is not.
    public var tokenStatus: String
    public var endpoint: String
    /// Each mirror's URL and whether it gets a token of its own (MODELDEPOT_MIRROR_TOKEN).
    public var mirrors: [Fact]
    /// "No mirror: files come from the endpoint."
    public var mirrorsText: String
    /// Bandwidth, connections, network policy, offline mode, the cache folder.
    public var network: [Fact]
    /// The bandwidth limit every download shares, nil for none (the form's value).
    public var bandwidthBytesPerSecond: Int64?

    /// The screen for `downloads`' Hub client; `tokenOrigin` says where its token came from (the environment the
    /// client was made from). The endpoint is asked once (`GET /api/whoami-v2`) unless offline or tokenless.
    public static func load(
        _ downloads: ModelDownloads, tokenOrigin: HubEnvironment.TokenOrigin,
        strings: SettingsScreenStrings = .english
    ) async -> SettingsScreen {
        let pull = downloads.manager.pull
        let hub = pull.hub
        let check = await hub.checkToken()
        let endpoint = hub.endpoint.absoluteString
        let (state, status): (String, String) =
            switch check {
            case .accepted(let account): ("accepted", strings.accepted(endpoint, account.name))
            case .refused(let code): ("refused", strings.refused(endpoint, code))
            case .noToken: ("none", strings.noToken)
            case .offline: ("offline", strings.offline)
            case .unavailable(let reason): ("unavailable", strings.unavailable(reason))
            }
        let source: String =
            switch tokenOrigin {
            case .variable(let name): strings.fromVariable(name)
            case .file(let url): strings.fromFile(url.path)
            case .disabled: strings.disabled
            case .none: check == .noToken || check == .offline ? strings.noSource : strings.fromApp
            }
        let configuration = pull.downloadConfiguration
        let limit = downloads.bandwidth.bytesPerSecond
        let policy = configuration.networkPolicy
        return SettingsScreen(
            tokenState: state, tokenSource: source, tokenStatus: status, endpoint: endpoint,
            mirrors: hub.mirrors.map {
                Fact(
                    label: $0.endpoint.absoluteString,
                    value: $0.token == nil ? strings.noMirrorToken : strings.mirrorToken)
            },
            mirrorsText: hub.mirrors.isEmpty ? strings.noMirrors : strings.mirrorsTried(hub.mirrors.count),
            network: [
                Fact(
                    label: strings.bandwidthLabel, value: limit.map { ByteFormat.rate(Double($0)) } ?? strings.noLimit),
                Fact(
                    label: strings.connectionsLabel,
                    value: strings.connections(configuration.initialConnections, configuration.maxConnections)),
                Fact(
                    label: strings.networksLabel,
                    value: configuration.networkConditions == nil && policy != .any
                        ? strings.policyNotEnforced(strings.policy(policy)) : strings.policy(policy)),
                Fact(label: strings.offlineLabel, value: hub.isOffline ? strings.yes : strings.no),
                Fact(label: strings.cacheLabel, value: downloads.manager.cache.root.path),
            ],
            bandwidthBytesPerSecond: limit)
    }
}

/// The Settings screen's words; replace them to translate the screen.
public struct SettingsScreenStrings: Sendable {
    public var title = "Settings"
    public var accepted: @Sendable (_ endpoint: String, _ name: String) -> String = { endpoint, name in
        "Accepted by \(endpoint): signed in as \(name)."
    }
    public var refused: @Sendable (_ endpoint: String, _ status: Int) -> String = { endpoint, status in
        "\(endpoint) refused the token (HTTP \(status)): it is wrong, expired or revoked. Make a new one and set HF_TOKEN or the token file."
    }
    public var noToken =
        "No token: public repositories only. Set HF_TOKEN or run `hf auth login` for private and gated ones."
    public var offline = "Offline mode is on, so the token was not checked."
    public var unavailable: @Sendable (String) -> String = { "Could not check the token: \($0)" }
    public var fromVariable: @Sendable (String) -> String = { "the \($0) environment variable" }
    public var fromFile: @Sendable (String) -> String = { "the token file \($0)" }
    public var fromApp = "given by the app"
    public var disabled = "none (HF_HUB_DISABLE_IMPLICIT_TOKEN is set)"
    public var noSource = "none"
    public var noMirrors = "No mirror: files come from the endpoint."
    public var mirrorsTried: @Sendable (Int) -> String = {
        "\($0 == 1 ? "This mirror is" : "These \($0) mirrors are") asked first, in order; the endpoint is the last resort."
    }
    public var mirrorToken = "sent MODELDEPOT_MIRROR_TOKEN"
    public var noMirrorToken = "no token (never the Hub's)"
    public var bandwidthLabel = "Bandwidth limit"
    public var noLimit = "No limit"
    public var connectionsLabel = "Connections per file"
    public var connections: @Sendable (_ initial: Int, _ maximum: Int) -> String = { "\($0), up to \($1)" }
    public var networksLabel = "Networks"
    public var policy: @Sendable (NetworkPolicy) -> String = { policy in
        var parts = [policy.allowsExpensive ? "cellular allowed" : "Wi-Fi and wired only"]
        if !policy.allowsConstrained { parts.append("not in Low Data Mode") }
        parts.append(policy.waitsForConnectivity ? "waits for a network" : "fails without one")
        return parts.joined(separator: ", ")
    }
    /// A policy that cannot hold: nothing tells this platform what the network is.
    public var policyNotEnforced: @Sendable (String) -> String = {
        "\($0) — not enforced: this system does not say whether the network is cellular or metered"
    }
    public var offlineLabel = "Offline mode"
    public var cacheLabel = "Cache folder"
    public var yes = "On"
    public var no = "Off"

    public static let english = SettingsScreenStrings()
}
