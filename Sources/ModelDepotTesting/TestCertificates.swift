import Foundation
import ModelDepotCore

/// A certificate authority and a server certificate for 127.0.0.1 and localhost, made by `openssl` for one test.
public struct TestCertificates: Sendable {
    public let folder: URL
    public var authority: String { folder.appendingPathComponent("ca.pem").path }
    public var certificate: String { folder.appendingPathComponent("server.pem").path }
    public var key: String { folder.appendingPathComponent("server.key").path }

    /// - Throws: when `openssl` (/usr/bin/openssl) cannot make them.
    public static func make(in folder: URL) async throws -> TestCertificates {
        let openssl = URL(fileURLWithPath: "/usr/bin/openssl")
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n".write(
            to: folder.appendingPathComponent("server.ext"), atomically: true, encoding: .utf8)
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=ModelDepot Test CA",
            ],
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key",
                "-out", "server.csr", "-subj", "/CN=127.0.0.1",
            ],
            [
                "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
                "server.pem", "-days", "2", "-extfile", "server.ext",
            ],
        ]
        for arguments in steps {
            let log = folder.appendingPathComponent("openssl.log")
            let openssl = try PeerProcess(openssl, arguments, in: folder, log: log)
            guard await openssl.waitForExit() else {
                throw ModelDepotError(
                    .invalidArgument, "openssl \(arguments[0]) failed in \(folder.path): \(openssl.output)")
            }
        }
        return TestCertificates(folder: folder)
    }
}
