#if os(Linux) || os(macOS)
    /// "1 file", "3 files": a count with its noun in the right number, for the lines people read.
    func counted(_ count: Int, _ singular: String, plural: String? = nil) -> String {
        "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
    }
#endif
