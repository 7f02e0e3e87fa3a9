import Foundation

/// Sizes as people read them, the one way every front end (the CLI, the screens) writes them.
package enum ByteFormat {
    /// Binary units with one decimal: `1.5 GiB`; bytes below 1 KiB as they are: `1023 B`.
    package static func string(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while abs(value) >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f", value) + " " + units[unit]
    }

    /// A speed: `12.5 MiB/s`.
    package static func rate(_ bytesPerSecond: Double) -> String {
        string(Int64(bytesPerSecond.isFinite ? bytesPerSecond : 0)) + "/s"
    }
}
