import Foundation
import ModelDepotCore

/// What a registry is asked with: a user name and password (or an access token as the password, as GHCR and
/// Docker Hub take them), or a token sent as `Bearer` as it is.
public enum RegistryCredential: Sendable, Equatable {
    case basic(user: String, password: String)
    case bearer(String)

    /// The `Authorization` value of a Basic credential.
    var basicHeader: String? {
        guard case .basic(let user, let password) = self else { return nil }
        return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// The credential stored for `registry` where Docker and the containers tools keep them: `$DOCKER_CONFIG/
    /// config.json` (else `~/.docker/config.json`), then `$REGISTRY_AUTH_FILE`, then
    /// `$XDG_RUNTIME_DIR/containers/auth.json` — an `auths` entry keyed by the registry (`host:port`, or with
    /// `https://` and a path, as old Docker wrote it), its `auth` the base64 of `user:password`, or an
    /// `identitytoken`/`registrytoken`. Nil when none names it.
    ///
    /// - Throws: `invalidArgument` for a file that names the registry with an `auth` that is not base64 of
    ///   `user:password`.
    public static func stored(
        for registry: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> RegistryCredential? {
        for file in authFiles(environment) {
            guard let data = FileManager.default.contents(atPath: file),
                let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let auths = document["auths"] as? [String: Any]
            else { continue }
            // Docker Hub's credential is stored under its v1 index address whatever the reference calls it.
            let names: Set<String> =
                OCIReference.dockerHubNames.contains(registry.lowercased())
                ? OCIReference.dockerHubNames : [registry.lowercased()]
            for (key, value) in auths where names.contains(registryKey(key)) {
                guard let entry = value as? [String: Any] else { continue }
                if let token = (entry["registrytoken"] as? String), !token.isEmpty { return .bearer(token) }
                if let encoded = entry["auth"] as? String, !encoded.isEmpty {
                    guard let decoded = Data(base64Encoded: encoded).flatMap({ String(data: $0, encoding: .utf8) }),
                        let colon = decoded.firstIndex(of: ":")
                    else {
                        throw ModelDepotError(
                            .invalidArgument,
                            "\(file) has an 'auth' for \(registry) that is not base64 of user:password; log in again (docker login / skopeo login)."
                        )
                    }
                    let user = String(decoded[..<colon])
                    let password = String(decoded[decoded.index(after: colon)...])
                    if let identity = entry["identitytoken"] as? String, !identity.isEmpty {
                        return .basic(user: user, password: identity)
                    }
                    return .basic(user: user, password: password)
                }
            }
        }
        return nil
    }

    /// `host:port` of an `auths` key (`https://host:port/v1/` as old Docker wrote them).
    static func registryKey(_ key: String) -> String {
        var text = key.lowercased()
        for scheme in ["https://", "http://"] where text.hasPrefix(scheme) {
            text = String(text.dropFirst(scheme.count))
        }
        return String(text.split(separator: "/").first ?? "")
    }

    static func authFiles(_ environment: [String: String]) -> [String] {
        var files: [String] = []
        if let config = environment["DOCKER_CONFIG"], !config.isEmpty {
            files.append(config + "/config.json")
        } else if let home = environment["HOME"], !home.isEmpty {
            files.append(home + "/.docker/config.json")
        }
        if let file = environment["REGISTRY_AUTH_FILE"], !file.isEmpty { files.append(file) }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            files.append(runtime + "/containers/auth.json")
        }
        return files
    }
}
