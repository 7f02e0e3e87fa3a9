import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// Attacker-built pickles judged against Python itself: `Tests/PythonPeers/pickle_attacks.py` loads each with a
/// logging unpickler (every import stubbed) and reports what Python imported; our verdict must name all of it, and
/// never call safe what picklescan 1.0.5 or fickling 0.1.12 calls dangerous.
@Suite(.enabled(if: SigningVenv.isInstalled, "picklescan and fickling are missing (scripts/test installs them)"))
struct PickleAttackTests {
    static func samples(in folder: URL) async throws -> [String: [String: [String: Any]]] {
        let made = try await SigningVenv.run(script: "pickle_attacks.py", ["make", folder.path])
        try #require(made.status == 0, "\(made.stderr)")
        return try #require(
            try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: [String: [String: Any]]])
    }

    /// Our verdict for a file: its imports, or the error that refuses a pickle that cannot be judged.
    static func verdict(_ url: URL) -> (imports: [PickleImport], recognised: Bool, refusal: String?) {
        do {
            guard let file = try PickleFile.inspect(url) else { return ([], false, nil) }
            return (file.imports, true, nil)
        } catch {
            return ([], true, "\(error)")
        }
    }

    @Test func everyImportPythonMakesIsNamed() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-pickle-attacks")
        defer { folder.remove() }
        let report = try await Self.samples(in: folder.url)
        #expect(report.count >= 27)
        for (name, sample) in report.sorted(by: { $0.key < $1.key }) {
            let url = folder.path(name)
            let (ours, recognised, refusal) = Self.verdict(url)
            let python = Set(sample["python"]?["imports"] as? [String] ?? [])
            let loads = sample["python"]?["error"] is NSNull
            let names = Set(ours.map(\.description))
            let untraced =
                refusal != nil || ours.contains { $0.module == PickleImport.untraced && $0.verdict == .dangerous }
            if name == "benign.npy" {
                #expect(!recognised, "\(name): \(ours)")
                continue
            }
            #expect(recognised, "\(name) was not recognised as a pickle")
            // Our verdict includes Python's: every import it made, by name or behind an untraceable dangerous one.
            #expect(python.isSubset(of: names) || untraced, "\(name): Python imports \(python), we name \(names)")
            for module in python
            where PicklePolicy.verdict(
                String(module.split(separator: ".").dropLast().joined(separator: ".")),
                String(module.split(separator: ".").last ?? ""))
                == .dangerous
            {
                #expect(untraced || ours.contains { $0.verdict == .dangerous }, "\(name): \(module) is dangerous")
            }
            // Python failing after imports (garbage, truncation) is a pickle that cannot be judged.
            if !loads && !python.isEmpty { #expect(untraced, "\(name): \(ours)") }
            // Never safe where a reference scanner sees danger. We are stricter where they see none: EXT codes,
            // imports followed by garbage, duplicate ZIP entries (each called dangerous here).
            let isDangerous = refusal != nil || ours.contains { $0.verdict == .dangerous }
            if sample["picklescan"]?["dangerous"] as? Bool == true { #expect(isDangerous, "\(name): \(ours)") }
            if sample["fickling"]?["likely_safe"] as? Bool == false {
                #expect(isDangerous || ours.contains { $0.verdict != .safe }, "\(name): \(ours)")
            }
            // The first bytes alone flag it too (a prefix that is a valid opcode stream so far counts).
            let prefix = [UInt8](try Data(contentsOf: url).prefix(PickleFile.sniffLength))
            #expect(PickleFile.sniff(prefix) != nil, "\(name): its first bytes were not recognised")
        }
        let duplicate = Self.verdict(folder.path("torch-duplicate.pt")).refusal
        #expect(duplicate?.contains("twice") == true, "\(duplicate ?? "accepted")")
    }
}
