import Foundation
import ModelDepotCore

extension PullThroughSource {
    /// Search passed on to the upstream, as `olah` does not: a mirror's clients find what the upstream has, not
    /// only what has been pulled already. The answer is kept for the branch TTL (a search box asks on every
    /// keystroke); an upstream that cannot answer within `staleAfter` leaves the search to what the mirror holds.
    func upstreamSearch(type: RepoType, text: String?, author: String?, limit: Int) async -> [[String: Any]]? {
        let key = "\(type.rawValue)\u{0}\(text ?? "")\u{0}\(author ?? "")\u{0}\(limit)"
        let now = time.elapsed()
        var answer = searches.withLock { kept in
            kept[key].flatMap { now - $0.at < upstream.branchTTL ? $0.answer : nil }
        }
        if answer == nil {
            let asked = try? await searching.value(for: key) {
                try await Self.answer(within: self.upstream.staleAfter, clock: self.upstream.clock) {
                    try await self.puller.hub.searchAnswer(text, author: author, type: type, limit: limit)
                }
            }
            guard let fresh = asked ?? nil else { return nil }
            answer = fresh
            searches.withLock { kept in
                // A bounded memory: searches are many and each is cheap to ask again; a large answer is not kept.
                guard fresh.count <= 1 << 20 else { return }
                if kept.count >= 256 { kept.removeAll() }
                kept[key] = (fresh, now)
            }
        }
        guard let answer,
            let entries = try? JSONSerialization.jsonObject(with: Data(answer)) as? [[String: Any]]
        else { return nil }
        return Array(entries.prefix(limit))
    }
}
