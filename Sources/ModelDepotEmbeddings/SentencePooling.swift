import Foundation
import ModelDepotCore

/// How token vectors become one sentence vector, as the model's sentence-transformers files say:
/// `modules.json` lists a Pooling module (its `config.json` names the mode) and, for most models, Normalize.
struct SentencePooling: Equatable, Sendable {
    enum Mode: String, Equatable, Sendable {
        /// The average of the real tokens' vectors (padding excluded).
        case mean
        /// The `[CLS]` token's vector.
        case cls
        /// The largest value of each dimension over the real tokens.
        case max
    }

    var mode: Mode
    /// Whether the sentence vector is scaled to length 1.
    var normalizes: Bool

    /// Reads `modules.json` and the pooling module's `config.json` in `folder`; mean pooling without
    /// normalisation when the folder has no `modules.json` (a plain BERT checkpoint).
    init(folder: URL) throws {
        let modulesURL = folder.appendingPathComponent("modules.json")
        guard let data = FileManager.default.contents(atPath: modulesURL.path) else {
            self.init(mode: .mean, normalizes: false)
            return
        }
        guard let modules = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            throw ModelDepotError(.invalidModelFile, "modules.json in \(folder.path) is not a list of modules.")
        }
        let types = modules.compactMap { $0["type"] as? String }
        var mode = Mode.mean
        if let pooling = modules.first(where: { ($0["type"] as? String)?.hasSuffix("Pooling") == true }),
            let path = pooling["path"] as? String
        {
            let config = try WordPieceTokenizer.jsonObject(at: folder.appendingPathComponent(path + "/config.json"))
            if config["pooling_mode_cls_token"] as? Bool == true {
                mode = .cls
            } else if config["pooling_mode_max_tokens"] as? Bool == true {
                mode = .max
            } else if config["pooling_mode_mean_tokens"] as? Bool == true {
                mode = .mean
            } else {
                throw ModelDepotError(
                    .invalidModelFile,
                    "\(path)/config.json asks for a pooling mode other than mean, CLS or max, which is not supported.")
            }
        }
        self.init(mode: mode, normalizes: types.contains { $0.hasSuffix("Normalize") })
    }

    init(mode: Mode, normalizes: Bool) {
        self.mode = mode
        self.normalizes = normalizes
    }

    /// One vector from `tokens` (`mask.count × width`, row-major).
    func pool(_ tokens: [Float], mask: [Int], width: Int) -> [Float] {
        var vector = [Float](repeating: 0, count: width)
        switch mode {
        case .cls:
            vector = Array(tokens[0..<width])
        case .mean:
            var count: Float = 0
            for (row, on) in mask.enumerated() where on != 0 {
                count += 1
                for d in 0..<width { vector[d] += tokens[row * width + d] }
            }
            if count > 0 { for d in 0..<width { vector[d] /= count } }
        case .max:
            vector = Array(repeating: -.infinity, count: width)
            for (row, on) in mask.enumerated() where on != 0 {
                for d in 0..<width { vector[d] = Swift.max(vector[d], tokens[row * width + d]) }
            }
        }
        if normalizes {
            let length = vector.reduce(0) { $0 + $1 * $1 }.squareRoot()
            if length > 0 { for d in 0..<width { vector[d] /= length } }
        }
        return vector
    }
}
