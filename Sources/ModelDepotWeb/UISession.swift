import Foundation
import Synchronization

/// The secret that opens the web app. `modeldepot ui` prints a URL with a one-time token; opening it trades
/// the token for a session cookie (`HttpOnly; SameSite=Strict`) and a redirect to a clean URL, so the secret
/// lives neither in the history nor in a `Referer`. With `--token-file`, that token opens it as often as
/// needed (a web app others reach over the network).
public final class UISession: Sendable {
    /// The cookie's name for an app on `port`: browsers keep cookies per host, not per port, so two apps on
    /// one machine (or any other local server) would otherwise share, and overwrite, one cookie.
    static func cookieName(port: Int) -> String { "modeldepot_ui_\(port)" }

    private struct State {
        var oneTimeToken: String?
    }

    private let state: Mutex<State>
    private let fixedToken: String?
    /// The cookie's value: random, made at start, never shown.
    let cookieValue: String

    /// A session opened by a one-time token (nil `fixedToken`) or by `fixedToken` every time.
    public init(fixedToken: String? = nil) {
        self.fixedToken = fixedToken
        state = Mutex(State(oneTimeToken: fixedToken == nil ? Self.randomHex() : nil))
        cookieValue = Self.randomHex()
    }

    /// The token the launch URL carries.
    public var launchToken: String { fixedToken ?? state.withLock { $0.oneTimeToken } ?? "" }

    /// Trades `token` for the cookie's value: once for the one-time token, every time for a fixed one.
    func exchange(_ token: String) -> String? {
        if let fixedToken { return Self.constantTimeEqual(token, fixedToken) ? cookieValue : nil }
        return state.withLock { state in
            guard let expected = state.oneTimeToken, Self.constantTimeEqual(token, expected) else { return nil }
            state.oneTimeToken = nil
            return cookieValue
        }
    }

    /// Whether a request's `Cookie` header carries this session's cookie.
    func admits(cookieHeader: String?, port: Int) -> Bool {
        guard let cookieHeader else { return false }
        let name = Self.cookieName(port: port)
        for pair in cookieHeader.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0] == name, Self.constantTimeEqual(parts[1], cookieValue) {
                return true
            }
        }
        return false
    }

    static func randomHex(bytes: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// Compares without stopping at the first difference, so timing does not tell how much of a guess was
    /// right.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
