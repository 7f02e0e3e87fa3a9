/// One commit of a repository's history, as the Hub lists it (`/api/models/{repo}/commits/{rev}`).
public struct RepoCommit: Sendable, Hashable, Codable {
    /// Someone who wrote the commit.
    public struct Author: Sendable, Hashable, Codable {
        /// The Hub user name.
        public var user: String

        /// An author by user name.
        public init(user: String) { self.user = user }
    }

    /// The commit id (40 hex digits).
    public var id: String
    /// The first line of the commit message.
    public var title: String
    /// The rest of the commit message.
    public var message: String
    /// Who wrote it.
    public var authors: [Author]
    /// When, as the Hub writes it (ISO 8601).
    public var date: String

    /// A commit as the Hub lists it.
    public init(id: String, title: String, message: String = "", authors: [Author] = [], date: String) {
        self.id = id
        self.title = title
        self.message = message
        self.authors = authors
        self.date = date
    }
}
