import Foundation

/// What a registry's `401` asks for, from its `WWW-Authenticate` header: `Basic realm="…"`, or the token flow of
/// the distribution specification, `Bearer realm="https://auth…/token",service="…",scope="repository:x:pull"`.
public struct RegistryChallenge: Sendable, Equatable {
    public enum Scheme: String, Sendable {
        case basic, bearer
    }

    public var scheme: Scheme
    /// The parameters, keys lower-cased (`realm`, `service`, `scope`, `error`).
    public var parameters: [String: String]

    public var realm: String? { parameters["realm"] }

    /// The first Basic or Bearer challenge in `header`; nil when it has neither.
    public init?(header: String) {
        var scanner = Substring(header)
        func skipSpaces() { scanner = scanner.drop { $0 == " " || $0 == "\t" || $0 == "," } }
        skipSpaces()
        let schemeName = scanner.prefix { !$0.isWhitespace }
        guard let scheme = Scheme(rawValue: schemeName.lowercased()) else { return nil }
        scanner = scanner.dropFirst(schemeName.count)
        var parameters: [String: String] = [:]
        while true {
            skipSpaces()
            let key = scanner.prefix { $0 != "=" && $0 != "," && !$0.isWhitespace }
            guard !key.isEmpty else { break }
            scanner = scanner.dropFirst(key.count)
            guard scanner.first == "=" else { break }
            scanner = scanner.dropFirst()
            var value = ""
            if scanner.first == "\"" {
                scanner = scanner.dropFirst()
                while let character = scanner.first, character != "\"" {
                    if character == "\\", let escaped = scanner.dropFirst().first {
                        value.append(escaped)
                        scanner = scanner.dropFirst(2)
                    } else {
                        value.append(character)
                        scanner = scanner.dropFirst()
                    }
                }
                scanner = scanner.dropFirst()
            } else {
                let token = scanner.prefix { $0 != "," && !$0.isWhitespace }
                value = String(token)
                scanner = scanner.dropFirst(token.count)
            }
            parameters[key.lowercased()] = value
        }
        self.scheme = scheme
        self.parameters = parameters
    }
}
