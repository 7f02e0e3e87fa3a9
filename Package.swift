// swift-tools-version: 6.0
import PackageDescription

/// Where the async-http-client transport (and SwiftNIO's sockets) is built: everywhere but in apps on Apple's
/// mobile platforms, which use URLSession.
let serverStack: [Platform] = [.linux, .macOS]
/// What the code checks for the server stack (`#if MODELDEPOT_SERVER_STACK`), set on exactly those platforms:
/// `canImport(NIOCore)` would also be true in an iOS build where another target (ModelDepotTesting) builds NIO,
/// and compile code against modules the app never links. scripts/check-app-deps holds the two to one list.
let serverStackDefine = SwiftSetting.define("MODELDEPOT_SERVER_STACK", .when(platforms: serverStack))

let package = Package(
    name: "ModelDepot",
    // Mutex (Synchronization) sets the floor: macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "ModelDepot", targets: ["ModelDepot"]),
        // Pushing and pulling models as OCI artifacts (ModelPack): apps that use registries import it.
        .library(name: "ModelDepotOCI", targets: ["ModelDepotOCI"]),
        .library(name: "ModelDepotCertificates", targets: ["ModelDepotCertificates"]),
        .library(name: "ModelDepotTesting", targets: ["ModelDepotTesting"]),
        .library(name: "ModelDepotServer", targets: ["ModelDepotServer"]),
        .library(name: "ModelDepotInference", targets: ["ModelDepotInference"]),
        .library(name: "ModelDepotEmbeddings", targets: ["ModelDepotEmbeddings"]),
        .library(name: "ModelDepotScreens", targets: ["ModelDepotScreens"]),
        .library(name: "ModelDepotSwiftUI", targets: ["ModelDepotSwiftUI"]),
        .executable(name: "modeldepot", targets: ["modeldepot"]),
        .executable(name: "modeldepot-bench", targets: ["modeldepot-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // TLS settings of the transport (extra certificate authorities); already under async-http-client.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // HTTP/2 by ALPN on the servers' TLS connections; already under hummingbird and async-http-client.
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        // Certificate chains of model signatures (X.509 parsing and RFC 5280 path validation; no hand-written ASN.1).
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        // The issuer of a certificate the transport refused, read with a DER parser (no hand-written ASN.1).
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // The mirror's /metrics (Prometheus exposition; its metric types are swift-metrics handlers) and its
        // graceful drain (already under Hummingbird; named here because the server uses it directly).
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Only for `swift package generate-documentation` (the DocC catalogue); nothing links it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The only code that touches the OS in non-portable ways (Linux and Darwin branches side by side); it
        // depends on nothing of ours but its C part. .ci/run refuses platform-specific calls anywhere else in Sources/.
        // PrivacyInfo.xcprivacy: the required-reason APIs a target calls, for App Store Connect (scripts/check-privacy
        // holds each manifest to its code).
        .target(
            name: "ModelDepotPlatform", dependencies: ["CModelDepotPlatform"],
            resources: [.copy("PrivacyInfo.xcprivacy")]),
        // The platform calls Swift cannot make (C, Linux only; empty elsewhere): starting a child process with a
        // parent-death signal, which needs `prctl` (variadic, not imported) between fork and exec.
        .target(name: "CModelDepotPlatform"),
        // Portable values every layer speaks: repository ids and paths, file patterns, wire encodings, the error
        // type, clocks. No I/O beyond Foundation.
        .target(
            name: "ModelDepotCore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        // The transfer engine: one HTTP exchange (redirects, retries, status → error), parallel ranges, crash-safe
        // resume, streaming SHA-256.
        .target(
            name: "ModelDepotTransfer",
            dependencies: [
                "ModelDepotCore",
                "ModelDepotPlatform",
                // The async-http-client transport and its socket stack: Linux's default, and macOS's for the command
                // line. Apps on iOS, tvOS, watchOS and visionOS download with URLSession and link none of it.
                .product(
                    name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: serverStack)),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: serverStack)),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: serverStack)),
                // async-http-client's ByteBuffer bodies, handed on inside BodyChunk without a copy.
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: serverStack)),
                // The transport's TLS: certificate authorities added to the system's (SSL_CERT_FILE, --ca-cert).
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: serverStack)),
                .product(name: "SwiftASN1", package: "swift-asn1", condition: .when(platforms: serverStack)),
                .product(name: "NIOTLS", package: "swift-nio", condition: .when(platforms: serverStack)),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                // Decodes API answers a proxy compressed although they were asked for as they are — where
                // async-http-client carries them; URLSession decodes them itself, so apps link no zlib wrapper.
                .product(name: "CompressNIO", package: "compress-nio", condition: .when(platforms: serverStack)),
            ],
            resources: [.copy("PrivacyInfo.xcprivacy")],
            swiftSettings: [serverStackDefine]
        ),
        // The Hub's HTTP API (resolve, tree, repository info) over the engine's exchange.
        .target(
            name: "ModelDepotHub",
            dependencies: [
                "ModelDepotCore", "ModelDepotPlatform", "ModelDepotTransfer",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The cache on disk, byte-for-byte huggingface_hub's layout: where it lives, one walk, refs, trees, reports.
        .target(
            name: "ModelDepotCache",
            dependencies: ["ModelDepotCore", "ModelDepotPlatform"],
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),
        // Trust and reproducibility, below the manager: model signatures (keys; certificate chains are plugged in by
        // ModelDepotCertificates), pickle checks (with the ZIP reader under PyTorch's files), locks and bundles (the
        // tar reader), and the headers of model formats. Reads files; never downloads.
        .target(
            name: "ModelDepotTrust",
            dependencies: [
                "ModelDepotCore", "ModelDepotPlatform", "ModelDepotCache",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The vocabulary of using a model, below the clients that do it: transcripts, audio input, transcription
        // options, the text-embedder protocol and vector search. Not part of `import ModelDepot` (an app that
        // downloads models need not see it): ModelDepotInference and ModelDepotEmbeddings re-export it.
        .target(name: "ModelDepotInferenceCore", dependencies: ["ModelDepotCore"]),
        // What the mirror's dashboard reads (MirrorDashboardSource): the contract between the server, which
        // implements it, and the screens, which word it. Values only, so neither links the other.
        .target(name: "ModelDepotMirrorContract", dependencies: ["ModelDepotCore"]),
        // Xet's primitives, in Swift (no C library to install): BLAKE3, LZ4 block decompression, byte grouping,
        // content-defined chunking and the chunk, xorb and file hashes. Depends on nothing.
        .target(name: "ModelDepotXet"),
        // OCI registries: references, manifests, ModelPack's media types and config, and the registry client (token
        // flow, chunked uploads). No cache: the manager places what it pulls.
        .target(
            name: "ModelDepotOCI",
            dependencies: [
                "ModelDepotCore", "ModelDepotTransfer",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The product apps import: snapshot pulls, the manager, catalog, readiness, storage budget, observable
        // tasks. It re-exports the layers below (OCI registries aside: apps that use them import ModelDepotOCI).
        .target(
            name: "ModelDepot",
            dependencies: [
                "ModelDepotCore",
                "ModelDepotPlatform",
                "ModelDepotTransfer",
                "ModelDepotHub",
                "ModelDepotCache",
                "ModelDepotTrust",
                "ModelDepotXet",
                "ModelDepotOCI",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Catalog/catalog.json")]
        ),
        // Model signatures made with certificates: chains validated by swift-certificates. Separate because it links
        // BoringSSL (swift-crypto's extras) into whatever uses it; key signatures need only `ModelDepot`.
        .target(
            name: "ModelDepotCertificates",
            dependencies: [
                "ModelDepotCore",
                "ModelDepotTrust",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .target(
            name: "ModelDepotInference",
            dependencies: ["ModelDepot", "ModelDepotCore", "ModelDepotInferenceCore", "ModelDepotPlatform"]
        ),
        // Sentence embeddings in-process: BERT's WordPiece tokenizer and encoder (apps that only download do
        // not link it).
        .target(
            name: "ModelDepotEmbeddings",
            dependencies: ["ModelDepot", "ModelDepotCore", "ModelDepotInferenceCore", "ModelDepotPlatform"]),
        // The presentation layer: one type per screen (state and actions) over the manager and the catalog, for
        // the web app and SwiftUI alike. No HTML, no SwiftUI, no transport of its own.
        .target(
            name: "ModelDepotScreens", dependencies: ["ModelDepot", "ModelDepotInference", "ModelDepotMirrorContract"]),
        // Thin SwiftUI views over the screens, for Apple apps. SwiftPM cannot make a target platform-conditional,
        // so every file is wrapped in `#if canImport(SwiftUI)`: on Linux the target builds empty, and none of
        // its views has been compiled here.
        .target(name: "ModelDepotSwiftUI", dependencies: ["ModelDepotScreens", "ModelDepot"]),
        // The web app over the screens (`modeldepot ui`): Hummingbird routes, Mustache templates, assets, live
        // events. Templates, script and stylesheet are package resources: no CDN, no build chain.
        .target(
            name: "ModelDepotWeb",
            dependencies: [
                "ModelDepotScreens",
                "ModelDepot",
                "ModelDepotInference",
                "ModelDepotMirrorContract",
                "ModelDepotCore",
                "ModelDepotHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Mustache", package: "swift-mustache"),
                // Event streams write ByteBuffers into Hummingbird's response bodies.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Resources")]
        ),
        // What both HTTP front ends (the mirror, the web app) share on Hummingbird's router: endpoints that answer a
        // wrong method with 405 and read bodies up to a per-route limit, the HTTP status of a ModelDepotError, the
        // error middleware, and the draining run.
        .target(
            name: "ModelDepotHTTP",
            dependencies: [
                "ModelDepotCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // --tls-cert/--tls-key: TLS over swift-nio-ssl with HTTP/2 by ALPN, read again on SIGHUP.
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "ModelDepotTesting",
            dependencies: [
                "ModelDepotCore",
                "ModelDepotTransfer",
                "ModelDepotHub",
                "ModelDepotPlatform",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [serverStackDefine]
        ),
        .target(
            name: "ModelDepotServer",
            dependencies: [
                "ModelDepotXet",
                "ModelDepotOCI",
                "ModelDepot",
                // What its dashboard reads: implemented here, worded by the screens, which the mirror does not link.
                "ModelDepotMirrorContract",
                "ModelDepotCore",
                "ModelDepotHTTP",
                "ModelDepotTransfer",
                "ModelDepotHub",
                "ModelDepotCache",
                "ModelDepotPlatform",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                // Files at rest go out by sendfile from a handler under Hummingbird's codec (FileRegionHandler).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "modeldepot",
            dependencies: [
                "ModelDepot",
                "ModelDepotCore",
                "ModelDepotOCI",
                "ModelDepotCertificates",
                "ModelDepotEmbeddings",
                "ModelDepotHTTP",
                "ModelDepotServer",
                "ModelDepotInference",
                "ModelDepotPlatform",
                "ModelDepotScreens",
                "ModelDepotWeb",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: [serverStackDefine]
        ),
        // Benchmark drivers (bench/inference.sh); kept out of the shipping binary.
        .executableTarget(
            name: "modeldepot-bench",
            dependencies: [
                "ModelDepot", "ModelDepotEmbeddings", "ModelDepotInference", "ModelDepotXet",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // The bare server bench/load.sh measures the mirror against.
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .testTarget(name: "PlatformTests", dependencies: ["ModelDepotPlatform", "CModelDepotPlatform"]),
        .testTarget(name: "XetTests", dependencies: ["ModelDepotXet", "ModelDepotTesting"]),
        .testTarget(
            name: "ScreensTests",
            dependencies: [
                "ModelDepotScreens", "ModelDepotWeb", "ModelDepot", "ModelDepotServer", "ModelDepotTesting",
                "ModelDepotPlatform", "ModelDepotSwiftUI", "ModelDepotInference", "ModelDepotMirrorContract",
                .product(name: "Logging", package: "swift-log"),
                // EventStreamsTests writes a stream into a stalled ResponseBodyWriter of its own.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                // WebRoutingTests: the web app's router without a socket.
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // The samples of the README and the DocC articles. scripts/check-app-samples also type-checks them as an
        // app outside this package would, where `package` declarations are out of reach.
        .testTarget(
            name: "AppSampleTests",
            dependencies: ["ModelDepot", "ModelDepotOCI", "ModelDepotEmbeddings", "ModelDepotTesting"]
        ),
        .testTarget(
            name: "EmbeddingsTests",
            dependencies: [
                "ModelDepotEmbeddings", "ModelDepot", "ModelDepotCore", "ModelDepotPlatform", "ModelDepotTesting",
            ]),
        .testTarget(
            name: "ModelDepotTests",
            dependencies: [
                "ModelDepot", "ModelDepotCore", "ModelDepotTransfer", "ModelDepotHub", "ModelDepotCache",
                "ModelDepotTrust", "ModelDepotOCI", "ModelDepotPlatform",
                "ModelDepotTesting", .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "TransferTests",
            dependencies: [
                "ModelDepot", "ModelDepotCore", "ModelDepotPlatform", "ModelDepotTransfer", "ModelDepotTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: [serverStackDefine]
        ),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "ModelDepot", "ModelDepotTesting", "ModelDepotServer", "ModelDepotInference", "ModelDepotPlatform",
                "modeldepot",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "InferenceTests",
            dependencies: [
                "ModelDepot", "ModelDepotInference", "ModelDepotServer", "ModelDepotTesting", "ModelDepotPlatform",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "ModelDepotXet",
                "ModelDepotOCI", "ModelDepotTrust",
                "ModelDepot", "ModelDepotEmbeddings", "ModelDepotHTTP", "ModelDepotPlatform", "ModelDepotServer",
                "ModelDepotTesting", "ModelDepotTransfer",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                // HubRouterTests: the mirror's router without a socket.
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // HubFastPathTests: a request with a foreign Host, sent to the responders without a socket.
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
