#if os(Linux) || os(macOS)
    import Foundation
    import ModelDepot

    /// One `ls --filter` condition, as `hf cache ls` writes them: `size>1GB`, `accessed>7d` (last used more than
    /// seven days ago), `modified<12h`, `files>=10`. Sizes take ByteSize's units (MB = 10⁶ bytes, MiB = 2²⁰);
    /// ages take `s`, `m`, `h`, `d`, `w` and `y` (365 days).
    struct CacheFilter: Equatable {
        enum Key: String, CaseIterable { case size, accessed, modified, files }
        enum Comparison: String, CaseIterable {
            // Two-character operators first, so `>=` is not read as `>` followed by `=…`.
            case greaterOrEqual = ">=", lessOrEqual = "<=", greater = ">", less = "<", equal = "="
        }

        let key: Key
        let comparison: Comparison
        /// Bytes for `size`, seconds of age for `accessed` and `modified`, a count for `files`.
        let value: Double

        init(parsing text: String) throws {
            let invalid = { (reason: String) in
                ModelDepotError(
                    .invalidArgument,
                    "--filter '\(text)' \(reason). Write KEY OPERATOR VALUE with KEY one of size, accessed, modified, files and OPERATOR one of > < >= <= =: 'size>1GB', 'accessed>7d', 'files<=3'."
                )
            }
            let compact = text.filter { !$0.isWhitespace }.lowercased()
            guard let key = Key.allCases.first(where: { compact.hasPrefix($0.rawValue) }) else {
                throw invalid("names no known key")
            }
            let rest = compact.dropFirst(key.rawValue.count)
            guard let comparison = Comparison.allCases.first(where: { rest.hasPrefix($0.rawValue) }) else {
                throw invalid("has no operator after '\(key.rawValue)'")
            }
            let operand = String(rest.dropFirst(comparison.rawValue.count))
            self.key = key
            self.comparison = comparison
            switch key {
            case .size:
                do {
                    value = Double(try ByteSize.parse(operand))
                } catch {
                    throw invalid("has a size it cannot read ('\(operand)'; like 500MB, 1.5GiB)")
                }
            case .files:
                guard let count = Int(operand), count >= 0 else { throw invalid("needs a whole number of files") }
                value = Double(count)
            case .accessed, .modified:
                guard let seconds = Self.seconds(operand) else {
                    throw invalid("has an age it cannot read ('\(operand)'; like 30m, 12h, 7d, 2w)")
                }
                value = seconds
            }
        }

        /// `7d` → 604800.
        static func seconds(_ text: String) -> Double? {
            let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800, "y": 31_536_000]
            guard let unit = text.last, let scale = units[unit], let number = Double(text.dropLast()), number >= 0
            else { return nil }
            return number * scale
        }

        func matches(_ repository: CachedRepositoryReport, now: Date) -> Bool {
            let actual: Double
            switch key {
            case .size: actual = Double(repository.sizeOnDisk)
            case .files: actual = Double(repository.files)
            case .accessed: actual = now.timeIntervalSince(repository.lastAccessed)
            case .modified: actual = now.timeIntervalSince(repository.lastModified)
            }
            switch comparison {
            case .greater: return actual > value
            case .less: return actual < value
            case .greaterOrEqual: return actual >= value
            case .lessOrEqual: return actual <= value
            case .equal: return actual == value
            }
        }
    }

    /// `ls --sort`: a key, and optionally `:asc` or `:desc` (by default largest and most recent first, names A to Z).
    struct CacheSort: Equatable {
        enum Key: String, CaseIterable { case name, size, accessed, modified, files }
        let key: Key
        let descending: Bool

        init(parsing text: String) throws {
            let parts = text.lowercased().split(separator: ":", maxSplits: 1).map(String.init)
            guard let first = parts.first, let key = Key(rawValue: first),
                parts.count == 1 || ["asc", "desc"].contains(parts[1])
            else {
                throw ModelDepotError(
                    .invalidArgument,
                    "--sort '\(text)' is not a sort order: use one of \(Key.allCases.map(\.rawValue).joined(separator: ", ")), optionally with :asc or :desc."
                )
            }
            self.key = key
            descending = parts.count == 2 ? parts[1] == "desc" : key != .name
        }

        func sorted(_ repositories: [CachedRepositoryReport]) -> [CachedRepositoryReport] {
            repositories.sorted { a, b in
                let ascending: Bool
                switch key {
                case .name: ascending = (a.id, a.type) < (b.id, b.type)
                case .size: ascending = a.sizeOnDisk < b.sizeOnDisk
                case .files: ascending = a.files < b.files
                case .accessed: ascending = a.lastAccessed < b.lastAccessed
                case .modified: ascending = a.lastModified < b.lastModified
                }
                return descending ? !ascending && !Self.equal(a, b, key) : ascending
            }
        }

        private static func equal(_ a: CachedRepositoryReport, _ b: CachedRepositoryReport, _ key: Key) -> Bool {
            switch key {
            case .name: (a.id, a.type) == (b.id, b.type)
            case .size: a.sizeOnDisk == b.sizeOnDisk
            case .files: a.files == b.files
            case .accessed: a.lastAccessed == b.lastAccessed
            case .modified: a.lastModified == b.lastModified
            }
        }
    }
#endif
