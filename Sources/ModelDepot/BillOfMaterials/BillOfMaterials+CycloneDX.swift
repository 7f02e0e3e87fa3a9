import Crypto
import Foundation
import ModelDepotCore
import ModelDepotTrust

extension BillOfMaterials {
    /// The bill as a CycloneDX 1.6 JSON document: a `machine-learning-model` component (purl `pkg:huggingface/…`,
    /// supplier, licence and model card from the card's front matter, base models as its pedigree) holding one `file`
    /// component per file with its SHA-256, resolve URL and what hashing found. ModelDepot's findings are properties
    /// named `modeldepot:…`.
    ///
    /// Deterministic: the same cache gives the same bytes (keys sorted, no creation time; the serial number is
    /// derived from the content).
    package func cycloneDX() -> Data { Self.cycloneDX(of: [self]) }

    /// One document for several models (a lock's repositories), each as ``cycloneDX()`` writes it.
    package static func cycloneDX(of bills: [BillOfMaterials]) -> Data {
        var document: [String: Any] = [
            "bomFormat": "CycloneDX", "specVersion": "1.6", "version": 1,
            "metadata": [
                "tools": [
                    "components": [
                        ["type": "application", "name": "modeldepot", "version": ModelDepotRelease.version]
                    ]
                ],
                "properties": [
                    [
                        "name": "modeldepot:describes",
                        "value": "the files of each commit in the cache, each hashed when this bill was made",
                    ]
                ],
            ] as [String: Any],
            "components": bills.map { $0.modelComponent() },
            "compositions": bills.map { bill -> [String: Any] in
                [
                    "aggregate": !bill.listIsRecorded ? "unknown" : bill.selection == nil ? "complete" : "incomplete",
                    "assemblies": [bill.modelReference],
                ]
            },
        ]
        let content = encode(document)
        let digest = Array(SHA256.hash(data: content).prefix(16))
        document["serialNumber"] = "urn:uuid:" + uuid(digest)
        return encode(document)
    }

    /// The model's `bom-ref`: unique in a document of several models, one commit each.
    var modelReference: String { "model:\(type.rawValue):\(repo)@\(commit)" }

    func modelComponent() -> [String: Any] {
        let hubHost = endpoint.host?.lowercased() ?? ""
        var component: [String: Any] = [
            "type": type == .model ? "machine-learning-model" : "data",
            "bom-ref": modelReference,
            "name": repo.name,
            "version": commit,
            "externalReferences": [
                ["type": "website", "url": endpoint.absoluteString + "/" + type.urlPrefix + repo.description],
                [
                    "type": "vcs",
                    "url": endpoint.absoluteString + "/" + type.urlPrefix + repo.description + "/tree/"
                        + HubEncoding.encodeSegment(commit),
                ],
            ],
            "components": files.map(fileComponent),
        ]
        if let namespace = repo.namespace {
            component["group"] = namespace
            component["supplier"] =
                [
                    "name": namespace, "url": [endpoint.absoluteString + "/" + namespace],
                ] as [String: Any]
        }
        if type == .model {
            component["purl"] = purl(hubHost: hubHost)
        }
        if let licenses = licenseChoice() { component["licenses"] = licenses }
        if type == .model, let card = modelCard() { component["modelCard"] = card }
        if type == .dataset {
            component["data"] = [["type": "dataset", "name": repo.description]]
        }
        if !card.baseModels.isEmpty {
            component["pedigree"] = [
                "ancestors": card.baseModels.map { base -> [String: Any] in
                    var ancestor: [String: Any] = ["type": "machine-learning-model", "name": base]
                    if let id = try? RepoID(base) { ancestor["purl"] = Self.purl(id, version: nil, hubHost: hubHost) }
                    return ancestor
                }
            ]
        }
        if !card.tags.isEmpty { component["tags"] = Array(Set(card.tags)).sorted() }
        var properties: [[String: String]] = []
        if let revision { properties.append(property("modeldepot:revision", revision)) }
        properties.append(
            property(
                "modeldepot:files",
                listIsRecorded ? "the commit's recorded file list" : "not recorded at download; completeness unknown"))
        if let selection {
            let patterns =
                selection.include.map { "include \($0)" } + selection.exclude.map { "exclude \($0)" }
                + (selection.paths?.sorted().map { "path \($0)" } ?? [])
            properties.append(property("modeldepot:selection", patterns.joined(separator: ", ")))
        }
        switch signature {
        case .absent:
            properties.append(property("modeldepot:signature", "absent"))
        case .unchecked(let path):
            properties.append(
                property("modeldepot:signature", "present at \(path), not checked (no trusted key given)"))
        case .verified(let path, let signer):
            properties.append(
                property("modeldepot:signature", "verified: \(path) (OpenSSF Model Signing) covers exactly these files")
            )
            properties.append(property("modeldepot:signature.signer", signer))
        case .invalid(let path, let reason):
            properties.append(property("modeldepot:signature", "invalid: \(path): \(reason)"))
        }
        if let lockMatch {
            properties.append(
                property(
                    "modeldepot:lock",
                    lockMatch.problems.isEmpty
                        ? "matches \(lockMatch.source)"
                        : "differs from \(lockMatch.source): \(lockMatch.problems.joined(separator: "; "))"))
        }
        properties.append(property("modeldepot:verified", isVerified ? "true" : "false"))
        component["properties"] = properties
        return component
    }

    func fileComponent(_ file: File) -> [String: Any] {
        var properties = [property("modeldepot:size", String(file.size))]
        switch file.verification {
        case .verified:
            properties.append(
                property(
                    "modeldepot:verification",
                    file.gitBlobID == nil
                        ? "verified: SHA-256 of the bytes is the published digest"
                        : "verified: git blob id of the bytes is the published one"))
        case .failed(let expected, let actual):
            properties.append(
                property("modeldepot:verification", "FAILED: the bytes hash to \(actual), published \(expected)"))
        case .unlisted:
            properties.append(property("modeldepot:verification", "FAILED: not a file of this commit"))
        case .outsideCache:
            properties.append(
                property("modeldepot:verification", "FAILED: its link leads outside the repository; not read"))
        case .uncheckable:
            properties.append(property("modeldepot:verification", "unchecked: the server named it by no digest"))
        }
        if let gitBlobID = file.gitBlobID { properties.append(property("modeldepot:gitBlobId", gitBlobID)) }
        if let downloaded = file.downloaded {
            properties.append(property("modeldepot:downloaded", Self.timestamp(downloaded)))
        }
        if let problem = file.pickleProblem {
            properties.append(property("modeldepot:pickle", "cannot be judged (treat as unsafe): \(problem)"))
        } else if let pickle = file.pickle {
            let verdict =
                pickle.isDangerous
                ? "dangerous"
                : pickle.imports.allSatisfy { $0.verdict == .safe }
                    ? "imports only known-safe globals" : "imports globals not known to be safe (treat as unsafe)"
            properties.append(property("modeldepot:pickle", verdict))
            for item in Set(pickle.imports).sorted() {
                properties.append(property("modeldepot:pickle.import", "\(item) (\(item.verdict.rawValue))"))
            }
        }
        var component: [String: Any] = [
            "type": "file",
            "bom-ref": "file:\(repo)@\(commit):\(file.path)",
            "name": file.path,
            "externalReferences": [["type": "distribution", "url": resolveURL(revision: commit, path: file.path)]],
            "properties": properties,
        ]
        if !file.sha256.isEmpty { component["hashes"] = [["alg": "SHA-256", "content": file.sha256]] }
        return component
    }

    /// The card's licence: one SPDX expression when every id is SPDX's, else each licence by id or by name.
    func licenseChoice() -> [[String: Any]]? {
        let ids = card.license
        guard !ids.isEmpty else { return nil }
        let spdx = ids.compactMap(ModelCardMetadata.spdxIdentifier)
        if spdx.count == ids.count {
            return [["expression": spdx.joined(separator: " AND "), "acknowledgement": "declared"]]
        }
        return ids.map { id in
            var license: [String: Any] = ["acknowledgement": "declared"]
            if let spdx = ModelCardMetadata.spdxIdentifier(id) {
                license["id"] = spdx
            } else {
                license["name"] = id == "other" ? (card.licenseName ?? id) : id
            }
            return ["license": license]
        }
    }

    /// The card's task, datasets and languages as CycloneDX's model card; nil when the card says none of them.
    func modelCard() -> [String: Any]? {
        var parameters: [String: Any] = [:]
        if let task = card.pipelineTag { parameters["task"] = task }
        if !card.datasets.isEmpty {
            parameters["datasets"] = card.datasets.map { ["type": "dataset", "name": $0] }
        }
        var properties: [[String: String]] = card.languages.map { property("language", $0) }
        if let library = card.libraryName { properties.append(property("library", library)) }
        guard !parameters.isEmpty || !properties.isEmpty else { return nil }
        var modelCard: [String: Any] = [:]
        if !parameters.isEmpty { modelCard["modelParameters"] = parameters }
        if !properties.isEmpty { modelCard["properties"] = properties }
        return modelCard
    }

    /// `pkg:huggingface/{namespace}/{name}@{commit}`, as the purl spec's huggingface type writes a Hub model, with
    /// `repository_url` when the Hub is not huggingface.co.
    func purl(hubHost: String) -> String {
        Self.purl(repo, version: commit, hubHost: hubHost, endpoint: endpoint)
    }

    static func purl(_ id: RepoID, version: String?, hubHost: String, endpoint: URL? = nil) -> String {
        var text = "pkg:huggingface/"
        if let namespace = id.namespace { text += percentEncoded(namespace) + "/" }
        text += percentEncoded(id.name)
        if let version { text += "@" + version.lowercased() }
        if let endpoint, hubHost != "huggingface.co" {
            text += "?repository_url=" + percentEncoded(endpoint.absoluteString)
        }
        return text
    }

    /// Percent-encodes all but the purl spec's unreserved characters.
    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    func resolveURL(revision: String, path: String) -> String {
        endpoint.absoluteString + "/" + type.urlPrefix + repo.description + "/resolve/"
            + HubEncoding.encodeSegment(revision) + "/" + HubEncoding.encodePath(path)
    }

    func property(_ name: String, _ value: String) -> [String: String] { ["name": name, "value": value] }

    static func timestamp(_ date: Date) -> String {
        var formatter = Date.ISO8601FormatStyle()
        formatter.timeZone = TimeZone(identifier: "UTC")!
        return formatter.format(date)
    }

    /// 16 bytes as an RFC 9562 version 8 UUID (custom: here, taken from a SHA-256), lowercase.
    static func uuid(_ bytes: [UInt8]) -> String {
        var bytes = bytes
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.hexString
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(
                hex[
                    hex.index(
                        hex.startIndex, offsetBy: range.lowerBound)..<hex.index(
                            hex.startIndex, offsetBy: range.upperBound)])
        }
        return parts.joined(separator: "-")
    }

    static func encode(_ object: [String: Any]) -> Data {
        // Only strings, numbers, arrays and dictionaries built above: serialization cannot fail.
        (try? JSONSerialization.data(
            withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])) ?? Data()
    }
}
