/// One commit of a repository's history, as the Hub lists it (`/api/models/{repo}/commits/{rev}`).
package struct RepoCommit: Sendable, Hashable, Codable {
    /// Someone who wrote the commit.
    package struct Author: Sendable, Hashable, Codable {
        /// The Hub user name.
        package var user: String

        /// An author by user name.
        package init(user: String) { self.user = user }
    }

    /// The commit id (40 hex digits).
    package var id: String
    /// The first line of the commit message.
    package var title: String
    /// The rest of the commit message.
    package var message: String
    /// Who wrote it.
    package var authors: [Author]
    /// When, as the Hub writes it (ISO 8601).
    package var date: String

    /// A commit as the Hub lists it.
    package init(id: String, title: String, message: String = "", authors: [Author] = [], date: String) {
        self.id = id
        self.title = title
        self.message = message
        self.authors = authors
        self.date = date
    }
}
