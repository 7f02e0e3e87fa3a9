import Foundation

/// curl against a test's TLS server, as a person checks one: trusting `authority` (`--cacert`), with the status,
/// the HTTP version it spoke, the response headers and the body it wrote.
public enum Curl {
    public struct Answer: Sendable {
        public var status: Int
        public var version: String
        public var headers: String
        public var body: Data
    }

    /// The answer, or nil when curl refused the connection (an untrusted certificate) or could not run. Files go
    /// into `folder`.
    public static func fetch(
        _ url: String, _ arguments: [String] = [], trusting authority: String, in folder: URL
    ) async throws -> Answer? {
        let name = "curl-" + UUID().uuidString
        let out = folder.appendingPathComponent("\(name).out")
        let headers = folder.appendingPathComponent("\(name).headers")
        let written = folder.appendingPathComponent("\(name).written")
        let curl = try PeerProcess(
            URL(fileURLWithPath: "/usr/bin/curl"),
            [
                "-sS", "--stderr", "/dev/null", "--cacert", authority, "-o", out.path, "-D", headers.path, "-w",
                "%{http_code} %{http_version}",
            ] + arguments + [url],
            in: folder, log: written)
        guard await curl.waitForExit() else { return nil }
        let fields = curl.output.split(separator: " ").map(String.init)
        guard fields.count == 2 else { return nil }
        return Answer(
            status: Int(fields[0]) ?? 0, version: fields[1],
            headers: (try? String(contentsOf: headers, encoding: .utf8)) ?? "",
            body: (try? Data(contentsOf: out)) ?? Data())
    }
}
