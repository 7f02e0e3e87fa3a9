#if os(Linux) || os(macOS)
    import ArgumentParser
    import ModelDepotHTTP

    /// `--tls-cert FILE --tls-key FILE`, for `serve` and `ui`: the server speaks https, with HTTP/2 offered by ALPN,
    /// and reads the files again on SIGHUP.
    struct TLSOptions: ParsableArguments {
        @Option(
            help: """
                A PEM file with the server's TLS certificate (then its intermediates): it speaks https, HTTP/2 or \
                HTTP/1.1. Read again on SIGHUP (after a renewal). Needs --tls-key.
                """)
        var tlsCert: String?

        @Option(help: "The PEM file with --tls-cert's private key.")
        var tlsKey: String?

        /// The certificate and key, read; nil for plain http.
        func serverTLS() throws -> ServerTLS? {
            switch (tlsCert, tlsKey) {
            case (let certificate?, let key?): return try ServerTLS(certificate: certificate, key: key)
            case (nil, nil): return nil
            default:
                throw ValidationError("--tls-cert and --tls-key go together: give both, or neither for plain http.")
            }
        }
    }
#endif
