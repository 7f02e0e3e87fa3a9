import ModelDepotPlatform

/// One tensor's floats, read-only: a view into the memory-mapped weights file when the file stores it as aligned
/// F32 (nothing copied; the pages are the file's, loaded as they are used and droppable under memory pressure),
/// otherwise widened once into memory this value owns.
struct FloatTensor: @unchecked Sendable {
    // @unchecked: `owner` keeps `base` alive and nobody writes through it after init.
    private let owner: AnyObject
    let base: UnsafePointer<Float>
    let count: Int

    /// `count` floats at `base`, inside `mapping`.
    init(viewing base: UnsafePointer<Float>, count: Int, in mapping: MappedFile) {
        owner = mapping
        self.base = base
        self.count = count
    }

    /// `count` floats written by `fill` into fresh memory.
    init(count: Int, fill: (UnsafeMutablePointer<Float>) throws -> Void) rethrows {
        let allocation = FloatAllocation(count: count)
        try fill(allocation.pointer)
        owner = allocation
        base = UnsafePointer(allocation.pointer)
        self.count = count
    }

    /// Several tensors one after another, copied into one (query, key and value weights stacked, say).
    init(concatenating parts: [FloatTensor]) {
        self.init(count: parts.reduce(0) { $0 + $1.count }) { target in
            var offset = 0
            for part in parts {
                (target + offset).update(from: part.base, count: part.count)
                offset += part.count
            }
        }
    }

    subscript(index: Int) -> Float { base[index] }

    /// The tensor as a row-major matrix `width` floats wide.
    func matrix(width: Int) -> MatrixView { MatrixView(base: base, rowStride: width) }
}

/// Memory a ``FloatTensor`` owns, freed with it.
private final class FloatAllocation {
    let pointer: UnsafeMutablePointer<Float>

    init(count: Int) {
        pointer = .allocate(capacity: max(count, 1))
    }

    deinit { pointer.deallocate() }
}
