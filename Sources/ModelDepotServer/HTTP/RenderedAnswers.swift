import NIOCore
import Synchronization

/// Response bodies rendered from one ``RepoSnapshot``, kept with it: a snapshot never changes, so neither does
/// what is rendered from it, and a repository asked about again and again (`/api/models/{repo}` once per client of
/// a fleet) is rendered once, not once per request. Bounded, since the keys come from requests (tree paths).
final class RenderedAnswers: Sendable {
    /// A rendered JSON body, and the `X-Total-Count` of a listing.
    struct Answer: Sendable {
        let body: ByteBuffer
        var totalCount: Int? = nil
    }

    /// The most answers kept per snapshot; past it, answers are rendered each time.
    static let capacity = 32
    private let answers = Mutex<[String: Answer]>([:])

    /// The answer kept under `key`, or else `render`'s, kept when there is room; nil when `render` gives none
    /// (an answer that is not to be kept, made by the caller instead).
    func answer(_ key: String, render: () throws -> Answer?) rethrows -> Answer? {
        if let known = answers.withLock({ $0[key] }) { return known }
        guard let answer = try render() else { return nil }
        answers.withLock { if $0.count < Self.capacity { $0[key] = answer } }
        return answer
    }
}
