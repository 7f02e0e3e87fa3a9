#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot
    import ModelDepotOCI

    /// How to reach an OCI registry: over http for one not on this machine, and with which credential (else the
    /// one `docker login`/`skopeo login` stored for it, else anonymously).
    struct RegistryOptions: ParsableArguments {
        @Option(
            help:
                "A file holding a registry token, sent as Bearer (default: the credential docker login or skopeo login stored for the registry, else none)."
        )
        var registryTokenFile: String?

        @Flag(help: "Ask the registry over plain http (a registry on this machine always is).")
        var plainHTTP = false

        /// Parses an `oci://` reference with these options.
        func reference(_ text: String) throws -> OCIReference {
            try OCIReference(parsing: text, plainHTTP: plainHTTP)
        }

        /// The client for `reference`'s registry, through `network`'s proxies and certificate authorities.
        func client(for reference: OCIReference, network: NetworkSettings) throws -> RegistryClient {
            var credential: RegistryCredential?
            if let registryTokenFile {
                guard let text = try? String(contentsOfFile: registryTokenFile, encoding: .utf8) else {
                    throw ModelDepotError(
                        .invalidArgument, "--registry-token-file \(registryTokenFile) cannot be read.")
                }
                let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
                guard !token.isEmpty, !token.contains(where: \.isNewline) else {
                    throw ModelDepotError(
                        .invalidArgument, "--registry-token-file \(registryTokenFile) must hold one token on one line.")
                }
                credential = .bearer(token)
            } else {
                credential = try RegistryCredential.stored(for: reference.registry)
            }
            return RegistryClient(
                registry: reference.registryURL, credential: credential,
                transport: DefaultTransport.shared(for: network))
        }
    }
#endif
