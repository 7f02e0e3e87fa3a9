/// The kinds of Hub repositories, with the URL and cache-folder spellings each one uses.
public enum RepoType: String, Sendable, Hashable, CaseIterable, Codable {
    case model, dataset, space, kernel

    /// The API path segment: `/api/models/…`, `/api/datasets/…`.
    package var apiSegment: String { rawValue + "s" }

    /// What precedes the repo id in file URLs: nothing for models, `datasets/` and so on otherwise.
    package var urlPrefix: String { self == .model ? "" : rawValue + "s/" }

    /// The first part of a cache folder name: `models--org--name`.
    package var cacheFolderPrefix: String { rawValue + "s" }
}
