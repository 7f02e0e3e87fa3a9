import Foundation

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The duration in seconds, for Foundation.
    var timeInterval: Double { Double(nanoseconds) / 1e9 }
}
