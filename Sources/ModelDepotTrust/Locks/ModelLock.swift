import Foundation
import ModelDepotCore

/// A set of models pinned to exact bytes: per repository, the endpoint it was resolved from, the commit, and every
/// selected file's path, size and digest. Pulling a lock on another machine, from any endpoint or mirror, gives the
/// same bytes or fails naming the difference.
///
/// Written as JSON with sorted keys, repositories and files in a stable order and one value per line, so a lock
/// reads well and diffs cleanly in version control:
///
/// ```json
/// {
///   "repositories" : [
///     {
///       "commit" : "93bc4a97479d64a2f78ed7a5abcb4029110e4046",
///       "endpoint" : "https://huggingface.co",
///       "files" : [
///         { "gitBlob" : "0f3b…", "path" : "config.json", "size" : 2317 },
///         { "path" : "model.bin", "sha256" : "4c2e…", "size" : 75537502 }
///       ],
///       "repo" : "Systran/faster-whisper-tiny.en",
///       "revision" : "main",
///       "source" : { "catalog" : "whisper-tiny-en-ct2", "include" : ["config.json", "model.bin"] },
///       "type" : "model"
///     }
///   ],
///   "version" : 1
/// }
/// ```
public struct ModelLock: Sendable, Hashable, Codable {
    /// The format this code writes and reads.
    public static let currentVersion = 1

    /// Where a repository's selection came from, so `lock --update` can make it again.
    public struct Source: Sendable, Hashable, Codable {
        /// The catalog entry's name, when the repository was named by one.
        public var catalog: String?
        /// The patterns that selected the files (every file when empty).
        public var include: [String]
        public var exclude: [String]

        public init(catalog: String? = nil, include: [String] = [], exclude: [String] = []) {
            self.catalog = catalog
            self.include = include
            self.exclude = exclude
        }

        enum CodingKeys: String, CodingKey { case catalog, include, exclude }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            catalog = try container.decodeIfPresent(String.self, forKey: .catalog)
            include = try container.decodeIfPresent([String].self, forKey: .include) ?? []
            exclude = try container.decodeIfPresent([String].self, forKey: .exclude) ?? []
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(catalog, forKey: .catalog)
            if !include.isEmpty { try container.encode(include, forKey: .include) }
            if !exclude.isEmpty { try container.encode(exclude, forKey: .exclude) }
        }
    }

    /// One locked file: its size and exactly one digest, the SHA-256 of an LFS file or the git blob id of a file
    /// git stores itself (what the Hub lists for each).
    public struct File: Sendable, Hashable, Codable {
        public var path: String
        public var size: Int64
        public var sha256: String?
        public var gitBlob: String?

        public init(path: String, size: Int64, sha256: String? = nil, gitBlob: String? = nil) {
            self.path = path
            self.size = size
            self.sha256 = sha256
            self.gitBlob = gitBlob
        }

        /// What the Hub's listing says of the file, as a lock records it.
        package init(_ entry: RepoTreeEntry) {
            if let lfs = entry.lfs {
                self.init(path: entry.path, size: lfs.size, sha256: lfs.oid.lowercased())
            } else {
                self.init(path: entry.path, size: entry.size, gitBlob: entry.oid.lowercased())
            }
        }

        /// The digest as `sha256:…` or `git:…`, for messages.
        public var digestText: String { sha256.map { "sha256:\($0)" } ?? "git:\(gitBlob ?? "?")" }
    }

    /// One repository at one commit.
    public struct Repository: Sendable, Hashable, Codable {
        /// The endpoint it was resolved from (pulls may use any other that has the commit).
        public var endpoint: String
        public var type: RepoType
        public var repo: RepoID
        /// The branch or tag that was asked for; `lock --check` asks what it names now.
        public var revision: String
        /// The 40-hex commit every file is pinned to.
        public var commit: String
        public var source: Source
        /// The files, sorted by path.
        public var files: [File]
        /// An OCI artifact that holds exactly this commit's files, pinned by digest (`oci://registry/name@sha256:…`):
        /// `pull --locked` takes the files from there, checked against the lock.
        public var oci: String?

        public init(
            endpoint: String, type: RepoType = .model, repo: RepoID, revision: String, commit: String,
            source: Source, files: [File], oci: String? = nil
        ) {
            self.endpoint = endpoint
            self.type = type
            self.repo = repo
            self.revision = revision
            self.commit = commit
            self.source = source
            self.files = files.sorted { $0.path < $1.path }
            self.oci = oci
        }

        /// Bytes of every locked file.
        public var totalBytes: Int64 { files.reduce(0) { $0 + $1.size } }
    }

    public var version: Int
    /// The repositories, sorted by type and id.
    public var repositories: [Repository]

    public init(repositories: [Repository]) {
        self.version = Self.currentVersion
        self.repositories = repositories.sorted {
            ($0.type.rawValue, $0.repo.description) < ($1.type.rawValue, $1.repo.description)
        }
    }

    /// The lock as its file holds it: pretty JSON, sorted keys, a final newline.
    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding strings and integers cannot fail.
        return ((try? encoder.encode(self)) ?? Data()) + Data("\n".utf8)
    }

    /// Reads and checks a lock file's contents; every problem is an `invalidArgument` error naming it.
    public static func parse(_ data: Data, name: String = "the lock file") throws -> ModelLock {
        let lock: ModelLock
        do {
            lock = try JSONDecoder().decode(ModelLock.self, from: data)
        } catch let error as DecodingError {
            throw ModelDepotError(.invalidArgument, "\(name) is not a ModelDepot lock: \(Self.describe(error)).")
        } catch {
            throw ModelDepotError(.invalidArgument, "\(name) cannot be read: \(error).")
        }
        if let problem = lock.problem {
            throw ModelDepotError(.invalidArgument, "\(name) is not a valid lock: \(problem).")
        }
        return lock
    }

    /// Reads and checks the lock file at `url`.
    public static func load(_ url: URL) throws -> ModelLock {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ModelDepotError(.fileSystem, "Cannot read the lock file \(url.path): \(error.localizedDescription)")
        }
        return try parse(data, name: url.lastPathComponent)
    }

    /// What makes this lock unusable, in words, or nil.
    public var problem: String? {
        guard version == Self.currentVersion else {
            return "its version is \(version); this ModelDepot reads version \(Self.currentVersion)"
        }
        var repositories = Set<String>()
        for repository in self.repositories {
            let id = "\(repository.type.rawValue) \(repository.repo)"
            guard repositories.insert(id).inserted else { return "\(repository.repo) is locked twice" }
            guard HubEncoding.isGitID(repository.commit) else {
                return "the commit of \(repository.repo) is '\(repository.commit)', not 40 hexadecimal digits"
            }
            guard let url = URL(string: repository.endpoint), ["http", "https"].contains(url.scheme ?? "") else {
                return "the endpoint of \(repository.repo) is '\(repository.endpoint)', not an http(s) URL"
            }
            var paths = Set<String>()
            for file in repository.files {
                guard (try? RepoFilePath(file.path)) != nil else {
                    return
                        "\(repository.repo) names the path '\(file.path)', which leaves the repository or is not a file path"
                }
                guard paths.insert(file.path).inserted else { return "\(repository.repo) names \(file.path) twice" }
                guard file.size >= 0 else { return "\(file.path) of \(repository.repo) has a negative size" }
                switch (file.sha256, file.gitBlob) {
                case (let sha256?, nil):
                    guard Self.isHex(sha256, length: 64) else {
                        return "the sha256 of \(file.path) in \(repository.repo) is not 64 hexadecimal digits"
                    }
                case (nil, let blob?):
                    guard Self.isHex(blob, length: 40) else {
                        return "the gitBlob of \(file.path) in \(repository.repo) is not 40 hexadecimal digits"
                    }
                default:
                    return "\(file.path) of \(repository.repo) needs exactly one digest: sha256 or gitBlob"
                }
            }
        }
        return nil
    }

    static func isHex(_ text: String, length: Int) -> Bool {
        text.utf8.count == length && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    private static func describe(_ error: DecodingError) -> String {
        func at(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? "" : " at \(path)"
        }
        switch error {
        case .keyNotFound(let key, let context): return "'\(key.stringValue)' is missing\(at(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return
                "\(context.debugDescription.lowercased().trimmingCharacters(in: .punctuationCharacters))\(at(context))"
        case .dataCorrupted(let context):
            return
                "\(context.debugDescription.lowercased().trimmingCharacters(in: .punctuationCharacters))\(at(context))"
        @unknown default: return "\(error)"
        }
    }
}
