import Foundation
import ModelDepotCore

/// One global a pickle imports when it is loaded (`module.name`), with what loading it can do.
public struct PickleImport: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// How far an import can be trusted.
    public enum Verdict: String, Sendable, Hashable, Codable {
        /// Rebuilds tensors, arrays or containers; what checkpoints hold.
        case safe
        /// Neither known to be safe nor known to be dangerous: loading it runs that module's code.
        case unknown
        /// Runs commands, code, files or network access when loaded (`os.system`, `builtins.eval`, …).
        case dangerous
    }

    public var module: String
    public var name: String
    public var verdict: Verdict

    public var description: String { "\(module).\(name)" }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.description < rhs.description }

    /// What stands for a module or name the scan cannot trace to a string constant.
    package static let untraced = "?"

    /// An import the scan cannot name: `STACK_GLOBAL` of values made at load time, or an `EXT` code looked up in
    /// copyreg's registry. Anything may be behind it, so it is dangerous.
    static func untraceable(_ module: String?, _ name: String?) -> PickleImport {
        PickleImport(module: module ?? untraced, name: name ?? untraced, verdict: .dangerous)
    }
}
