#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A system call that failed: which one, on what, and its `errno`. The platform layer knows no product error
/// type; callers turn this into theirs (``ModelDepot`` maps it to `ModelDepotError` with advice).
package struct SystemCallError: Error, Sendable, CustomStringConvertible {
    /// What was attempted, for people: "Cannot open /path".
    package let operation: String
    package let code: Int32

    package init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    /// `strerror(code)`.
    package var reason: String { String(cString: strerror(code)) }

    package var description: String { "\(operation): \(reason)" }
}
