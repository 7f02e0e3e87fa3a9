import Crypto
import Foundation
import ModelDepotCore
import ModelDepotTrust

extension BillOfMaterials {
    /// The bills as one SPDX 3.0.1 JSON-LD document (profiles Core, Software, AI, SimpleLicensing): per model an
    /// `ai_AIPackage` (purl, supplier, download location, the card's task as its domain, its declared licence) that
    /// `contains` one `software_File` per file with its SHA-256; base models as its ancestors. What ModelDepot
    /// verified (each file's hash check, the signature, pickle verdicts, the lock) is in the elements' `comment`,
    /// which SPDX has for what its properties do not say.
    ///
    /// Deterministic like ``cycloneDX()``: element ids are derived from the content, and the creation time is the
    /// newest download among the files.
    package static func spdx(of bills: [BillOfMaterials]) -> Data {
        let digest = SHA256.hash(data: cycloneDX(of: bills)).prefix(16)
        let base = "urn:uuid:\(uuid(Array(digest)))#"
        let creation = "_:creationinfo"
        let newest = bills.flatMap { $0.files.compactMap(\.downloaded) }.max() ?? Date(timeIntervalSince1970: 0)
        var graph: [[String: Any]] = [
            [
                "type": "CreationInfo", "@id": creation, "specVersion": "3.0.1", "created": timestamp(newest),
                "createdBy": [base + "agent"], "createdUsing": [base + "tool"],
            ],
            ["type": "SoftwareAgent", "spdxId": base + "agent", "creationInfo": creation, "name": "modeldepot"],
            [
                "type": "Tool", "spdxId": base + "tool", "creationInfo": creation,
                "name": "modeldepot \(ModelDepotRelease.version)",
            ],
        ]
        var elements: [String] = []
        var roots: [String] = []
        var licensing = false
        for (index, bill) in bills.enumerated() {
            let prefix = base + "model-\(index + 1)"
            let (model, parts) = bill.spdxElements(id: prefix, creation: creation)
            roots.append(prefix)
            for part in parts {
                if let id = part["spdxId"] as? String { elements.append(id) }
                if (part["type"] as? String) == "simplelicensing_LicenseExpression" { licensing = true }
            }
            graph.append(model)
            elements.append(prefix)
            graph += parts
        }
        graph.append([
            "type": "SpdxDocument", "spdxId": base + "document", "creationInfo": creation,
            "name": "Bill of materials: " + bills.map { "\($0.repo)@\($0.commit)" }.joined(separator: ", "),
            "rootElement": roots, "element": elements,
            "profileConformance": ["core", "software", "ai", "expandedLicensing"]
                + (licensing ? ["simpleLicensing"] : []),
        ])
        let document: [String: Any] = ["@context": "https://spdx.org/rdf/3.0.1/spdx-context.jsonld", "@graph": graph]
        return encode(document)
    }

    /// This model's package and what hangs off it (its supplier, files, licence, base models and the
    /// relationships between them).
    func spdxElements(id: String, creation: String) -> (model: [String: Any], parts: [[String: Any]]) {
        var parts: [[String: Any]] = []
        var model: [String: Any] = [
            "type": type == .model ? "ai_AIPackage" : "software_Package", "spdxId": id, "creationInfo": creation,
            "name": repo.description, "software_packageVersion": commit,
            "software_downloadLocation": endpoint.absoluteString + "/" + type.urlPrefix + repo.description + "/tree/"
                + HubEncoding.encodeSegment(commit),
            "software_primaryPurpose": type == .model ? "model" : "data",
            "comment": spdxComment(),
        ]
        if type == .model { model["software_packageUrl"] = purl(hubHost: endpoint.host?.lowercased() ?? "") }
        if let namespace = repo.namespace {
            let supplier = id + "-supplier"
            model["suppliedBy"] = supplier
            parts.append(["type": "Organization", "spdxId": supplier, "creationInfo": creation, "name": namespace])
        }
        if type == .model, let task = card.pipelineTag { model["ai_domain"] = [task] }
        var fileIDs: [String] = []
        for (index, file) in files.enumerated() {
            let fileID = id + "-file-\(index + 1)"
            fileIDs.append(fileID)
            var element: [String: Any] = [
                "type": "software_File", "spdxId": fileID, "creationInfo": creation, "name": file.path,
                "comment": fileComponent(file)["properties"].map { properties in
                    ((properties as? [[String: String]]) ?? []).map { "\($0["name"] ?? ""): \($0["value"] ?? "")" }
                        .joined(separator: "\n")
                } ?? "",
            ]
            if !file.sha256.isEmpty {
                element["verifiedUsing"] = [["type": "Hash", "algorithm": "sha256", "hashValue": file.sha256]]
            }
            parts.append(element)
        }
        if !fileIDs.isEmpty {
            parts.append([
                "type": "Relationship", "spdxId": id + "-contains", "creationInfo": creation, "from": id,
                "relationshipType": "contains", "to": fileIDs,
                "completeness": !listIsRecorded ? "noAssertion" : selection == nil ? "complete" : "incomplete",
            ])
        }
        // The AI profile asks every package for one declared and one concluded licence: the card's (SPDX ids as
        // they are, the Hub's own as LicenseRef-…), else no assertion; ModelDepot concludes nothing.
        if let expression = spdxLicenseExpression() {
            parts.append([
                "type": "simplelicensing_LicenseExpression", "spdxId": id + "-license", "creationInfo": creation,
                "simplelicensing_licenseExpression": expression,
            ])
        }
        parts += Self.licenseRelationships(
            of: id, declared: spdxLicenseExpression() == nil ? Self.noAssertion : id + "-license", creation: creation)
        for (index, base) in card.baseModels.enumerated() {
            let baseID = id + "-base-\(index + 1)"
            var element: [String: Any] = [
                "type": "ai_AIPackage", "spdxId": baseID, "creationInfo": creation, "name": base,
                "software_primaryPurpose": "model",
            ]
            if let baseRepo = try? RepoID(base) {
                element["software_packageUrl"] = Self.purl(
                    baseRepo, version: nil, hubHost: endpoint.host?.lowercased() ?? "")
            }
            parts.append(element)
            parts += Self.licenseRelationships(of: baseID, declared: Self.noAssertion, creation: creation)
            parts.append([
                "type": "Relationship", "spdxId": baseID + "-ancestor", "creationInfo": creation, "from": baseID,
                "relationshipType": "ancestorOf", "to": [id],
            ])
        }
        return (model, parts)
    }

    static let noAssertion = "expandedlicensing_NoAssertionLicense"

    /// `hasDeclaredLicense` to `declared` and `hasConcludedLicense` to no assertion, for the package `id`.
    static func licenseRelationships(of id: String, declared: String, creation: String) -> [[String: Any]] {
        [
            [
                "type": "Relationship", "spdxId": id + "-declared-license", "creationInfo": creation, "from": id,
                "relationshipType": "hasDeclaredLicense", "to": [declared],
            ],
            [
                "type": "Relationship", "spdxId": id + "-concluded-license", "creationInfo": creation, "from": id,
                "relationshipType": "hasConcludedLicense", "to": [noAssertion],
            ],
        ]
    }

    /// The card's licences as one SPDX expression: SPDX ids as SPDX spells them, the Hub's own ids (`llama3`,
    /// `other` with its `license_name`) as `LicenseRef-…`; nil when the card names none.
    func spdxLicenseExpression() -> String? {
        guard !card.license.isEmpty else { return nil }
        return card.license.map { id in
            if let spdx = ModelCardMetadata.spdxIdentifier(id) { return spdx }
            let name = id == "other" ? (card.licenseName ?? id) : id
            let reference = String(
                name.unicodeScalars.filter {
                    $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "." || $0 == "-")
                })
            return "LicenseRef-" + (reference.isEmpty ? "unnamed" : reference)
        }.joined(separator: " AND ")
    }

    /// The model's verdicts as lines of text: the signature, the lock, whether everything verified.
    func spdxComment() -> String {
        ((modelComponent()["properties"] as? [[String: String]]) ?? []).map {
            "\($0["name"] ?? ""): \($0["value"] ?? "")"
        }.joined(separator: "\n")
    }
}
