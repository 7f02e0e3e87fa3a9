import Foundation
import ModelDepotCore

/// Where an artifact is in an OCI registry: `oci://registry[:port]/repository[:tag][@sha256:…]`, as `skopeo`,
/// `oras` and Kubernetes' ImageVolume name it (with the scheme this command line uses for registries).
///
/// The registry answers over https, except one on this machine (`localhost`, `127.0.0.1`, `[::1]`), which is
/// asked over plain http as Docker allows for local registries; ``plainHTTP`` says so for any other.
public struct OCIReference: Sendable, Hashable, CustomStringConvertible {
    /// `host` or `host:port`.
    public var registry: String
    /// The repository in the registry, lower case, `/`-separated (`acme/tiny-llm`).
    public var repository: String
    /// The tag asked for; `latest` when neither a tag nor a digest is given.
    public var tag: String?
    /// The manifest's digest, when the reference pins one.
    public var digest: OCIDigest?
    /// Whether the registry is asked over http rather than https.
    public var plainHTTP: Bool

    /// The tag, or the digest when one is given: what the manifest is asked for by.
    public var manifestReference: String { digest?.description ?? tag ?? "latest" }

    /// The registry's base URL (`https://host:port`); Docker Hub's API answers at `registry-1.docker.io`.
    public var registryURL: URL {
        let host = Self.dockerHubNames.contains(registry) ? "registry-1.docker.io" : registry
        return URL(string: "\(plainHTTP ? "http" : "https")://\(host)")!
    }

    /// The names people give Docker Hub.
    static let dockerHubNames: Set<String> = ["docker.io", "index.docker.io", "registry-1.docker.io"]

    public var description: String {
        var text = "oci://\(registry)/\(repository)"
        if let tag { text += ":\(tag)" }
        if let digest { text += "@\(digest)" }
        return text
    }

    /// Whether `text` names an OCI artifact (`oci://…`) rather than a Hub repository or URL.
    public static func names(_ text: String) -> Bool { text.lowercased().hasPrefix("oci://") }

    /// Parses `oci://registry/repository[:tag][@digest]`.
    ///
    /// - Parameters:
    ///   - text: the reference as typed.
    ///   - plainHTTP: ask a registry that is not on this machine over http (`--plain-http`).
    /// - Throws: `invalidArgument` naming what is wrong: no registry, a repository name OCI refuses (upper case
    ///   among them, as registries and `skopeo` refuse it), a tag too long, a digest that is not `sha256:` and 64
    ///   hex digits.
    public init(parsing text: String, plainHTTP: Bool = false) throws {
        guard Self.names(text) else {
            throw Self.invalid(text, "it must start with oci:// (oci://registry/repository:tag)")
        }
        let rest = String(text.dropFirst("oci://".count))
        guard let slash = rest.firstIndex(of: "/") else {
            throw Self.invalid(text, "it names no repository after the registry (oci://registry/repository:tag)")
        }
        let registry = String(rest[..<slash])
        var path = String(rest[rest.index(after: slash)...])
        guard Self.isRegistryName(registry) else {
            throw Self.invalid(text, "'\(registry)' is not a registry host (host or host:port)")
        }
        if let at = path.firstIndex(of: "@") {
            let digestText = String(path[path.index(after: at)...])
            guard let digest = OCIDigest(digestText) else {
                throw Self.invalid(
                    text, "'\(digestText)' is not a digest this client checks (sha256: and 64 lower-case hex digits)")
            }
            self.digest = digest
            path = String(path[..<at])
        } else {
            digest = nil
        }
        // A tag follows the last ':' after the last '/' (a port sits in the registry part, already split off).
        let lastSlash = path.lastIndex(of: "/") ?? path.startIndex
        if let colon = path[lastSlash...].lastIndex(of: ":") {
            let tagText = String(path[path.index(after: colon)...])
            guard Self.isTag(tagText) else {
                throw Self.invalid(
                    text,
                    "'\(tagText)' is not a tag (letters, digits, '_', '.', '-'; up to 128, not starting with '.' or '-')"
                )
            }
            tag = tagText
            path = String(path[..<colon])
        } else {
            tag = digest == nil ? "latest" : nil
        }
        guard Self.isRepositoryName(path) else {
            throw Self.invalid(
                text,
                "'\(path)' is not an OCI repository name (lower-case letters and digits, separated by '/', '.', '_' or '-'; OCI refuses upper case)"
            )
        }
        self.registry = registry
        // Docker Hub's official images live under library/ (`docker.io/ubuntu` is `library/ubuntu`).
        self.repository = Self.dockerHubNames.contains(registry) && !path.contains("/") ? "library/" + path : path
        self.plainHTTP = plainHTTP || Self.isLoopback(registry)
    }

    /// A reference to `repository` in `registry` by tag or digest.
    public init(registry: String, repository: String, tag: String? = nil, digest: OCIDigest? = nil, plainHTTP: Bool) {
        self.registry = registry
        self.repository = repository
        self.tag = tag
        self.digest = digest
        self.plainHTTP = plainHTTP
    }

    /// This reference pinned to `digest` (the tag kept, for people).
    public func pinned(to digest: OCIDigest) -> OCIReference {
        var pinned = self
        pinned.digest = digest
        return pinned
    }

    static func invalid(_ text: String, _ why: String) -> ModelDepotError {
        ModelDepotError(.invalidArgument, "'\(text)' is not an OCI reference: \(why).")
    }

    static func isLoopback(_ registry: String) -> Bool {
        let host: Substring
        if registry.hasPrefix("[") {
            host = registry.split(separator: "]").first.map { $0.dropFirst() } ?? ""
        } else {
            host = registry.split(separator: ":").first ?? ""
        }
        return host == "localhost" || host == "127.0.0.1" || host == "::1"
    }

    static func isRegistryName(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 255 else { return false }
        return text.utf8.allSatisfy { byte in
            (97...122).contains(byte) || (65...90).contains(byte) || (48...57).contains(byte)
                || [UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]")]
                    .contains(byte)
        }
    }

    /// The distribution specification's `<name>`: path components of `[a-z0-9]+` joined by `.`, `_`, `__` or
    /// runs of `-`, separated by `/`.
    public static func isRepositoryName(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 255 else { return false }
        for component in text.split(separator: "/", omittingEmptySubsequences: false) {
            let bytes = Array(component.utf8)
            guard let first = bytes.first, let last = bytes.last, isAlphanumeric(first), isAlphanumeric(last) else {
                return false
            }
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if isAlphanumeric(byte) {
                    index += 1
                    continue
                }
                // A separator: '.', '_', '__' or one or more '-', each between alphanumerics.
                var end = index + 1
                switch byte {
                case UInt8(ascii: "."): break
                case UInt8(ascii: "_"): if bytes[end] == UInt8(ascii: "_") { end += 1 }
                case UInt8(ascii: "-"): while bytes[end] == UInt8(ascii: "-") { end += 1 }
                default: return false
                }
                guard isAlphanumeric(bytes[end]) else { return false }
                index = end
            }
        }
        return true
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool { (97...122).contains(byte) || (48...57).contains(byte) }

    /// The specification's tag: `[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`.
    public static func isTag(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, bytes.count <= 128 else { return false }
        func allowed(_ byte: UInt8) -> Bool {
            (97...122).contains(byte) || (65...90).contains(byte) || (48...57).contains(byte)
                || byte == UInt8(ascii: "_")
        }
        return allowed(first)
            && bytes.dropFirst().allSatisfy { allowed($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
    }
}
