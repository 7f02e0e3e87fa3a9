import Foundation

/// A server's rate limit as it announces it (IETF draft-ietf-httpapi-ratelimit-headers, which the Hub follows):
/// `RateLimit: "api";r=0;t=55` — `r` requests left, the window resets in `t` seconds — and
/// `RateLimit-Policy: "fixed window";"api";q=500;w=300` — a quota of `q` requests per `w` seconds.
package struct RateLimit: Sendable, Equatable, CustomStringConvertible {
    /// The limit's name (`api`), when it has one.
    package var name: String?
    /// Requests left in the window.
    package var remaining: Int
    /// How long until the window resets.
    package var reset: Duration
    /// The requests a window allows, from the policy.
    package var quota: Int?
    /// The window's length, from the policy.
    package var window: Duration?

    package init(name: String?, remaining: Int, reset: Duration, quota: Int? = nil, window: Duration? = nil) {
        self.name = name
        self.remaining = remaining
        self.reset = reset
        self.quota = quota
        self.window = window
    }

    /// The limit a response announces (the tightest when it names several), with its policy; nil without one.
    package init?(rateLimit: String?, policy: String?) {
        let limits = Self.items(rateLimit ?? "").compactMap { item -> RateLimit? in
            // A reset past a day is not a rate limit a client waits for: taken as no announcement (a 429 with it
            // still fails, by its Retry-After or at once).
            guard let remaining = item.parameters["r"].flatMap(Int.init), remaining >= 0,
                let reset = item.parameters["t"].flatMap(Int.init), (0...86_400).contains(reset)
            else { return nil }
            return RateLimit(name: item.names.first, remaining: remaining, reset: .seconds(reset))
        }
        guard var tightest = limits.min(by: { $0.remaining < $1.remaining }) else { return nil }
        let policies = Self.items(policy ?? "")
        let matching = policies.first { tightest.name != nil && $0.names.contains(tightest.name!) }
        if let policy = matching ?? (policies.count == 1 ? policies[0] : nil) {
            tightest.quota = policy.parameters["q"].flatMap(Int.init)
            tightest.window = policy.parameters["w"].flatMap(Int.init).map { .seconds($0) }
        }
        self = tightest
    }

    /// `the rate limit for api: 0 of 500 requests left, for 55 s more` — for messages and progress.
    package var description: String {
        let of = quota.map { " of \($0) requests" } ?? " requests"
        let per = window.map { " per \($0.components.seconds) s" } ?? ""
        return
            "the rate limit\(name.map { " for \($0)" } ?? "")\(per): \(remaining)\(of) left, for \(reset.components.seconds) s more"
    }

    /// A structured-field list's items: their quoted (or bare) names and their `key=value` parameters.
    private static func items(_ field: String) -> [(names: [String], parameters: [String: String])] {
        field.split(separator: ",").map { item in
            var names: [String] = []
            var parameters: [String: String] = [:]
            for part in item.split(separator: ";") {
                let text = part.trimmingCharacters(in: .whitespaces)
                if let equals = text.firstIndex(of: "=") {
                    parameters[String(text[..<equals]).lowercased()] = String(text[text.index(after: equals)...])
                } else if !text.isEmpty {
                    names.append(text.trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
                }
            }
            return (names, parameters)
        }
    }
}
