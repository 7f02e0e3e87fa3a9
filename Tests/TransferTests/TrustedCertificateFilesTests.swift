import Foundation
import ModelDepotTesting
import Testing

@testable import ModelDepotTransfer

/// The certificate authorities the environment adds are read once each, however many variables name them, and only
/// when a TLS request needs them: a plain-HTTP request neither pays for them nor fails on a broken one.
@Suite struct TrustedCertificateFilesTests {
    /// A test authority and the server certificate it signed, in PEM, and an empty `certs` folder in `folder`.
    static func certificates(in folder: TemporaryDirectory) async throws -> (
        authority: String, server: String, certs: URL
    ) {
        let made = try await TestCertificates.make(in: folder.url)
        let certs = folder.path("certs")
        try FileManager.default.createDirectory(at: certs, withIntermediateDirectories: true)
        return (
            try String(contentsOfFile: made.authority, encoding: .utf8),
            try String(contentsOfFile: made.certificate, encoding: .utf8), certs
        )
    }

    @Test func aBundleNamedByEveryVariableAndItsFolderIsParsedOnce() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-ca-once")
        defer { folder.remove() }
        // A "system" folder as Debian lays it out: the bundle, each certificate in a file of its own, and a hashed
        // link to each.
        let (authority, server, certs) = try await Self.certificates(in: folder)
        try (authority + server).write(
            to: certs.appendingPathComponent("bundle.crt"), atomically: true, encoding: .utf8)
        try authority.write(to: certs.appendingPathComponent("ca.pem"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: certs.appendingPathComponent("1a2b3c4d.0").path, withDestinationPath: "ca.pem")
        try "not a certificate\n".write(to: certs.appendingPathComponent("README"), atomically: true, encoding: .utf8)
        let bundle = certs.appendingPathComponent("bundle.crt").path
        let environment = [
            "SSL_CERT_FILE": bundle, "REQUESTS_CA_BUNDLE": bundle, "CURL_CA_BUNDLE": bundle, "SSL_CERT_DIR": certs.path,
        ]
        let trust = try TrustSettings.fromEnvironment(environment)
        #expect(trust.additional.count == 4)
        let certificates = try TrustedCertificateFiles.certificates(trust)
        #expect(certificates.count == 2, "\(certificates.count) certificates for 2 distinct ones")
    }

    @Test func aFileWithoutACertificateIsNamedAndAFolderWithoutOneToo() throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-ca-none")
        defer { folder.remove() }
        let file = folder.path("company.pem")
        try "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n".write(
            to: file, atomically: true, encoding: .utf8)
        let broken = TrustSettings(additional: [.init(path: file.path, origin: "--ca-cert")])
        #expect {
            try TrustedCertificateFiles.certificates(broken)
        } throws: { error in
            "\(error)".contains("--ca-cert names \(file.path), which holds no PEM certificate")
        }
        let empty = folder.path("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let none = TrustSettings(additional: [.init(path: empty.path, origin: "SSL_CERT_DIR")])
        #expect {
            try TrustedCertificateFiles.certificates(none)
        } throws: { error in
            "\(error)".contains("SSL_CERT_DIR names the folder \(empty.path), which holds no PEM certificate")
        }
    }

    /// A broken file skipped inside a folder is still refused when a flag names it, and a file that fails half way
    /// leaves its good certificate unseen, so another file holding that certificate still adds it.
    @Test func aBrokenFileIsRefusedHoweverItIsReachedAndLeavesNothingSeen() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-ca-broken")
        defer { folder.remove() }
        let (authority, server, certs) = try await Self.certificates(in: folder)
        // Read first in the folder: the authority, then a block that does not parse.
        let half = certs.appendingPathComponent("a-half.pem")
        try (authority + "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n").write(
            to: half, atomically: true, encoding: .utf8)
        try server.write(to: certs.appendingPathComponent("b-server.pem"), atomically: true, encoding: .utf8)
        let good = folder.path("authority.pem")
        try authority.write(to: good, atomically: true, encoding: .utf8)
        let folderThenFile = TrustSettings(additional: [
            .init(path: certs.path, origin: "SSL_CERT_DIR"), .init(path: good.path, origin: "SSL_CERT_FILE"),
        ])
        let certificates = try TrustedCertificateFiles.certificates(folderThenFile)
        #expect(certificates.count == 2, "the authority of the broken file is still added from the good one")
        let namedAfterTheFolder = TrustSettings(additional: [
            .init(path: certs.path, origin: "SSL_CERT_DIR"), .init(path: half.path, origin: "--ca-cert"),
        ])
        #expect {
            try TrustedCertificateFiles.certificates(namedAfterTheFolder)
        } throws: { error in
            "\(error)".contains("--ca-cert names \(half.path), which holds no PEM certificate")
        }
    }

    @Test func aBrokenAuthorityFailsTLSRequestsOnlyAndSaysWhy() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-ca-lazy")
        defer { folder.remove() }
        let file = folder.path("company.pem")
        try "hello\n".write(to: file, atomically: true, encoding: .utf8)
        let transport = AsyncHTTPTransport(
            network: NetworkSettings(trust: TrustSettings(additional: [.init(path: file.path, origin: "--ca-cert")])))
        defer { Task { try? await transport.shutdown() } }
        let nginx = try await NginxServer(files: ["model.bin": Array("model bytes".utf8)])
        defer { nginx.stop() }
        let plain = try await transport.send(TransportRequest(url: nginx.url("/files/model.bin")))
        #expect(plain.status == 200)
        #expect(
            try await plain.body.collect(limit: 1 << 10, from: nginx.url("/files/model.bin"))
                == Array("model bytes".utf8))
        await #expect {
            _ = try await transport.send(TransportRequest(url: URL(string: "https://127.0.0.1:1/model.bin")!))
        } throws: { error in
            "\(error)".contains("--ca-cert names \(file.path), which holds no PEM certificate")
        }
    }
}
