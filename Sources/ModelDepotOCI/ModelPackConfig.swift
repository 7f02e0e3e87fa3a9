import Foundation

/// The CNCF ModelPack config blob (`application/vnd.cncf.model.config.v1+json`): what the model is (descriptor),
/// how it is stored (config: architecture, format, parameter size, precision, quantization) and the digests of its
/// layers' contents (modelfs).
public struct ModelPackConfig: Sendable, Codable, Equatable {
    public struct Descriptor: Sendable, Codable, Equatable {
        public var createdAt: String?
        public var name: String?
        public var family: String?
        public var revision: String?
        public var sourceURL: String?
        public init(
            createdAt: String? = nil, name: String? = nil, family: String? = nil, revision: String? = nil,
            sourceURL: String? = nil
        ) {
            self.createdAt = createdAt
            self.name = name
            self.family = family
            self.revision = revision
            self.sourceURL = sourceURL
        }
    }

    public struct Config: Sendable, Codable, Equatable {
        public var architecture: String?
        public var format: String?
        /// `<count><scale>`, `1.1B`, `137M` (the specification's form).
        public var paramSize: String?
        public var precision: String?
        public var quantization: String?
        public init(
            architecture: String? = nil, format: String? = nil, paramSize: String? = nil, precision: String? = nil,
            quantization: String? = nil
        ) {
            self.architecture = architecture
            self.format = format
            self.paramSize = paramSize
            self.precision = precision
            self.quantization = quantization
        }
    }

    public struct ModelFS: Sendable, Codable, Equatable {
        public var type: String
        public var diffIDs: [OCIDigest]

        enum CodingKeys: String, CodingKey {
            case type
            case diffIDs = "diff_ids"
        }

        public init(diffIDs: [OCIDigest]) {
            type = "layers"
            self.diffIDs = diffIDs
        }
    }

    public var descriptor: Descriptor
    public var config: Config
    public var modelfs: ModelFS

    public init(descriptor: Descriptor, config: Config, modelfs: ModelFS) {
        self.descriptor = descriptor
        self.config = config
        self.modelfs = modelfs
    }

    /// `count` parameters in the specification's `<count><scale>` form, one decimal at most: `1.1B`, `137M`.
    public static func paramSize(_ count: UInt64) -> String {
        let scales: [(UInt64, String)] = [
            (1_000_000_000_000, "T"), (1_000_000_000, "B"), (1_000_000, "M"), (1_000, "K"),
        ]
        for (scale, letter) in scales where count >= scale {
            let tenths = (count * 10 + scale / 2) / scale
            return tenths % 10 == 0 ? "\(tenths / 10)\(letter)" : "\(tenths / 10).\(tenths % 10)\(letter)"
        }
        return "\(count)"
    }

    /// The config as bytes to push: keys sorted, so the same model always gives the same digest.
    public func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self))
    }
}
