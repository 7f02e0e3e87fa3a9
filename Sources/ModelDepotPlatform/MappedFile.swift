#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file mapped read-only into memory (`mmap(2)` with `PROT_READ`, `MAP_PRIVATE`; `munmap(2)` when released),
/// the same calls on Linux and Apple platforms. Its pages are the file's own, clean: they enter memory when read
/// and the system can drop them again under pressure without writing anything, which matters for model weights
/// on a phone. The address stays valid, and fixed, for the object's lifetime.
package final class MappedFile: @unchecked Sendable {
    // @unchecked: the mapping is read-only and never changes after init.
    package let bytes: UnsafeRawBufferPointer

    /// Maps the whole file at `path`; an empty file gives an empty buffer.
    package init(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemCallError("Cannot open \(path)", code: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw SystemCallError("Cannot read \(path)", code: errno) }
        let size = Int(status.st_size)
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0)
        guard let address, address != MAP_FAILED else { throw SystemCallError("Cannot map \(path)", code: errno) }
        bytes = UnsafeRawBufferPointer(start: address, count: size)
    }

    deinit {
        if let start = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: start), bytes.count) }
    }
}
