import Foundation
import ModelDepotCore

/// What the Hub's own malware and pickle scanning says about a model repository (`model_info` with
/// `securityStatus=true`), when the Hub reports it. Mirrors and other endpoints usually do not.
package struct HubSecurityScan: Sendable, Equatable, Decodable {
    /// A file the Hub's scanners flagged.
    package struct Issue: Sendable, Equatable, Decodable {
        package var path: String
        /// The Hub's level (`unsafe`, `suspicious`, `caution`, …), as it names it.
        package var level: String?
    }

    /// Whether the scans have finished (nil when the Hub does not say).
    package var scansDone: Bool?
    /// The files with findings; empty when there are none.
    package var filesWithIssues: [Issue]

    enum CodingKeys: String, CodingKey { case scansDone, filesWithIssues }

    package init(scansDone: Bool?, filesWithIssues: [Issue]) {
        self.scansDone = scansDone
        self.filesWithIssues = filesWithIssues
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        scansDone = try container.decodeIfPresent(Bool.self, forKey: .scansDone)
        filesWithIssues = (try? container.decodeIfPresent([Issue].self, forKey: .filesWithIssues)) ?? []
    }

    /// One line for people: `no issues`, `scans not finished`, or the flagged files with their levels.
    package var summary: String {
        if !filesWithIssues.isEmpty {
            let files = filesWithIssues.map { "\($0.path)\($0.level.map { " (\($0))" } ?? "")" }
            return
                "\(filesWithIssues.count) file\(filesWithIssues.count == 1 ? "" : "s") flagged: \(files.joined(separator: ", "))"
        }
        return scansDone == false ? "scans not finished" : "no issues"
    }
}

extension HubClient {
    /// The Hub's security scan of a model repository at `revision`; nil when the endpoint does not report one.
    package func securityScan(_ repo: RepoID, revision: String? = nil) async throws -> HubSecurityScan? {
        struct Answer: Decodable { var securityRepoStatus: HubSecurityScan? }
        let revisionPart = revision.map { "/revision/\(HubEncoding.encodeSegment($0))" } ?? ""
        let (body, _) = try await getWithRetries(apiURL(repo, type: .model, revisionPart + "?securityStatus=true"))
        return try decode(Answer.self, from: body, what: "the security status of \(repo)").securityRepoStatus
    }
}
