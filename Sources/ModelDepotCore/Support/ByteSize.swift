import Foundation

/// Parses human sizes: `20GB`, `500 MB`, `1.5GiB`, `1024` (bytes). Decimal units are powers of 1000, binary
/// units (`KiB`, `MiB`, `GiB`, `TiB`) powers of 1024.
package enum ByteSize {
    /// Bytes from a size such as `20GB` (10^9), `512MiB` (2^20) or `1.5G`; throws `invalidArgument` otherwise.
    package static func parse(_ text: String) throws -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let number = trimmed.prefix { $0.isNumber || $0 == "." }
        let unit = trimmed.dropFirst(number.count).trimmingCharacters(in: .whitespaces).lowercased()
        let multipliers: [String: Double] = [
            "": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
            "kib": 1024, "mib": 1_048_576, "gib": 1_073_741_824, "tib": 1_099_511_627_776,
        ]
        guard let value = Double(number), value >= 0, let multiplier = multipliers[unit] else {
            throw ModelDepotError(
                .invalidArgument, "'\(text)' is not a size; write it like 20GB, 500MB or 1.5GiB.")
        }
        return Int64(value * multiplier)
    }
}
