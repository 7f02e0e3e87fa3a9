import Foundation

/// What a model card's YAML front matter (the block between `---` lines at the top of a repository's README.md)
/// says about the model: the fields a bill of materials carries. Claims by the publisher, not verified facts.
///
/// Reads the subset of YAML model cards use for these fields — `key: value`, `key: [a, b]` and `key:` followed by
/// `- item` lines — and ignores everything else (nested maps such as `model-index`, anchors, block scalars).
/// The text is hostile: only its first 64 KiB are read, and a value is kept only when it is a plain string.
package struct ModelCardMetadata: Sendable, Hashable {
    package var license: [String] = []
    package var licenseName: String?
    package var pipelineTag: String?
    package var libraryName: String?
    package var baseModels: [String] = []
    package var datasets: [String] = []
    package var languages: [String] = []
    package var tags: [String] = []

    package init() {}

    /// The front matter of `readme`, or an empty value when it has none.
    package init(readme: Data) {
        self.init()
        var text = String(decoding: readme.prefix(64 << 10), as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).makeIterator()
        guard lines.next().map({ $0.trimmingCharacters(in: .whitespaces) }) == "---" else { return }
        var fields: [String: [String]] = [:]
        var listKey: String?
        while let raw = lines.next() {
            let line = String(raw)
            if line.trimmingCharacters(in: .whitespaces) == "---" { break }
            if line.hasPrefix(" ") || line.hasPrefix("\t") || line.hasPrefix("-") {
                let item = line.trimmingCharacters(in: .whitespaces)
                // Only `- scalar` items of a top-level key; an item that is a map (`- name: x`) is not a scalar.
                if let key = listKey, item.hasPrefix("- "), let value = Self.scalar(String(item.dropFirst(2))) {
                    fields[key, default: []].append(value)
                } else if !item.hasPrefix("- ") {
                    listKey = nil
                }
                continue
            }
            guard let colon = line.firstIndex(of: ":") else {
                listKey = nil
                continue
            }
            let key = String(line[..<colon]).trimmingCharacters(in: .whitespaces)
            let rest = Self.withoutComment(String(line[line.index(after: colon)...]))
            listKey = nil
            if rest.isEmpty {
                listKey = key
            } else if rest.hasPrefix("[") && rest.hasSuffix("]") {
                fields[key] = rest.dropFirst().dropLast().split(separator: ",").compactMap {
                    Self.scalar($0.trimmingCharacters(in: .whitespaces))
                }
            } else if let value = Self.scalar(rest) {
                fields[key] = [value]
            }
        }
        license = fields["license"] ?? []
        licenseName = fields["license_name"]?.first
        pipelineTag = fields["pipeline_tag"]?.first
        libraryName = fields["library_name"]?.first
        baseModels = fields["base_model"] ?? []
        datasets = fields["datasets"] ?? []
        languages = fields["language"] ?? []
        tags = fields["tags"] ?? []
    }

    /// A plain or quoted YAML scalar without its quotes and trailing comment; nil for a map, a list, an anchor or
    /// anything that is not a short line of text.
    static func scalar(_ text: String) -> String? {
        var value = withoutComment(text)
        if ["null", "~", "Null", "NULL"].contains(value) { return nil }
        if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
            value = String(value.dropFirst().dropLast())
        } else if let first = value.first, "{[&*|>!%@`".contains(first) {
            return nil
        } else if value.contains(": ") {
            return nil
        }
        guard !value.isEmpty, value.count <= 256, !value.contains(where: { $0.isNewline || $0 == "\u{0}" }) else {
            return nil
        }
        return value
    }

    /// `text` trimmed, without a trailing ` # comment` that is outside quotes (YAML's comments need the space).
    static func withoutComment(_ text: String) -> String {
        var quote: Character?
        var previous: Character = " "
        var end = text.endIndex
        for index in text.indices {
            let character = text[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'",
                text[..<index].trimmingCharacters(in: .whitespaces).last.map({ $0 == "[" || $0 == "," }) ?? true
            {
                // Quotes open a string only where a value starts (the line's, or a flow list item's).
                quote = character
            } else if character == "#", previous == " " || previous == "\t" {
                end = index
                break
            }
            previous = character
        }
        return text[..<end].trimmingCharacters(in: .whitespaces)
    }

    /// The licence as an SPDX expression when the card's identifier is one (the Hub's lowercase ids mapped to
    /// SPDX's spelling); nil for the Hub's own ids (`other`, `llama3`, `openrail`, …), which are only names.
    package static func spdxIdentifier(_ hubLicense: String) -> String? {
        spdxIdentifiers[hubLicense.lowercased()]
    }

    /// The Hub's licence ids that are SPDX licence ids, in SPDX's spelling. Ids the Hub uses loosely (`gpl-3.0`,
    /// `agpl-3.0`, `gfdl`: they do not say "only" or "or later") are left out and travel as names.
    package static let spdxIdentifiers: [String: String] = [
        "apache-2.0": "Apache-2.0", "mit": "MIT", "bsd-2-clause": "BSD-2-Clause", "bsd-3-clause": "BSD-3-Clause",
        "bsd-3-clause-clear": "BSD-3-Clause-Clear", "cc0-1.0": "CC0-1.0", "cc-by-2.0": "CC-BY-2.0",
        "cc-by-2.5": "CC-BY-2.5", "cc-by-3.0": "CC-BY-3.0", "cc-by-4.0": "CC-BY-4.0", "cc-by-sa-3.0": "CC-BY-SA-3.0",
        "cc-by-sa-4.0": "CC-BY-SA-4.0", "cc-by-nc-2.0": "CC-BY-NC-2.0", "cc-by-nc-3.0": "CC-BY-NC-3.0",
        "cc-by-nc-4.0": "CC-BY-NC-4.0", "cc-by-nd-4.0": "CC-BY-ND-4.0", "cc-by-nc-nd-3.0": "CC-BY-NC-ND-3.0",
        "cc-by-nc-nd-4.0": "CC-BY-NC-ND-4.0", "cc-by-nc-sa-2.0": "CC-BY-NC-SA-2.0",
        "cc-by-nc-sa-3.0": "CC-BY-NC-SA-3.0", "cc-by-nc-sa-4.0": "CC-BY-NC-SA-4.0", "mpl-2.0": "MPL-2.0",
        "unlicense": "Unlicense", "isc": "ISC", "zlib": "Zlib", "wtfpl": "WTFPL", "afl-3.0": "AFL-3.0",
        "artistic-2.0": "Artistic-2.0", "bsl-1.0": "BSL-1.0", "ecl-2.0": "ECL-2.0", "epl-1.0": "EPL-1.0",
        "epl-2.0": "EPL-2.0", "eupl-1.1": "EUPL-1.1", "eupl-1.2": "EUPL-1.2",
        "lgpl-lr": "LGPLLR", "odbl": "ODbL-1.0", "odc-by": "ODC-By-1.0", "pddl": "PDDL-1.0", "ofl-1.1": "OFL-1.1",
        "osl-3.0": "OSL-3.0", "postgresql": "PostgreSQL", "ncsa": "NCSA", "lppl-1.3c": "LPPL-1.3c",
        "cdla-permissive-1.0": "CDLA-Permissive-1.0",
        "cdla-permissive-2.0": "CDLA-Permissive-2.0", "cdla-sharing-1.0": "CDLA-Sharing-1.0",
        "c-uda": "C-UDA-1.0",
    ]
}
