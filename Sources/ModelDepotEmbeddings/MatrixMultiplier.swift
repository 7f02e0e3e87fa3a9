import Foundation

/// A row-major matrix in memory someone else owns: where it starts and how many floats lie between the starts
/// of two rows (more than its width when it is a slice of a wider matrix, such as one attention head's columns).
struct MatrixView {
    var base: UnsafePointer<Float>
    var rowStride: Int
}

/// `c[m × n] = a[m × k] · b`, where `b` is `[k × n]`, or `[n × k]` when `transposedB` (a weight matrix stored
/// output by input, as PyTorch stores `Linear` weights). The one seam between the encoder and whatever does its
/// multiplies: a system BLAS, or portable Swift.
protocol MatrixMultiplier: Sendable {
    /// What does the work, for `modeldepot embed` to say.
    var name: String { get }
    func multiply(
        rows m: Int, columns n: Int, inner k: Int, _ a: MatrixView, _ b: MatrixView, transposedB: Bool,
        into c: UnsafeMutablePointer<Float>, rowStride ldc: Int)
}

extension MatrixMultiplier {
    /// `a[m × k] · bᵀ` for whole arrays, `b` being `[n × k]`.
    func multiply(_ a: [Float], rows m: Int, inner k: Int, transposed b: [Float], columns n: Int) -> [Float] {
        precondition(a.count == m * k && b.count == n * k)
        var c = [Float](repeating: 0, count: m * n)
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                c.withUnsafeMutableBufferPointer { c in
                    multiply(
                        rows: m, columns: n, inner: k, MatrixView(base: a.baseAddress!, rowStride: k),
                        MatrixView(base: b.baseAddress!, rowStride: k), transposedB: true, into: c.baseAddress!,
                        rowStride: n)
                }
            }
        }
        return c
    }
}

/// Portable Swift: dot products of contiguous rows with eight running sums when `b` is transposed, scaled row
/// sums otherwise; rows split across the cores when the work pays for the threads.
struct PortableMultiplier: MatrixMultiplier {
    var name: String { "portable Swift" }

    func multiply(
        rows m: Int, columns n: Int, inner k: Int, _ a: MatrixView, _ b: MatrixView, transposedB: Bool,
        into c: UnsafeMutablePointer<Float>, rowStride ldc: Int
    ) {
        let work = SendableMultiply(a: a, b: b, c: c, ldc: ldc, n: n, k: k)
        let parts = m * n * k >= 1 << 20 ? min(m, ProcessInfo.processInfo.activeProcessorCount) : 1
        if parts == 1 {
            transposedB ? work.dotRows(0..<m) : work.scaledRows(0..<m)
            return
        }
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let rows = (part * m / parts)..<((part + 1) * m / parts)
            transposedB ? work.dotRows(rows) : work.scaledRows(rows)
        }
    }
}

/// One portable multiply's operands, handed to the threads that each write their own rows of `c`.
private struct SendableMultiply: @unchecked Sendable {
    let a: MatrixView
    let b: MatrixView
    let c: UnsafeMutablePointer<Float>
    let ldc: Int
    let n: Int
    let k: Int

    /// Rows of `a · bᵀ`: each entry a dot product of two contiguous rows.
    @_optimize(speed)
    func dotRows(_ rows: Range<Int>) {
        for i in rows {
            let row = a.base + i * a.rowStride
            for j in 0..<n {
                let column = b.base + j * b.rowStride
                // Eight independent sums: none waits for the previous one, and the optimiser packs them into
                // vector lanes (a debug build stays usable, unlike with SIMD types).
                var s0: Float = 0
                var s1: Float = 0
                var s2: Float = 0
                var s3: Float = 0
                var s4: Float = 0
                var s5: Float = 0
                var s6: Float = 0
                var s7: Float = 0
                var index = 0
                while index + 8 <= k {
                    s0 += row[index] * column[index]
                    s1 += row[index + 1] * column[index + 1]
                    s2 += row[index + 2] * column[index + 2]
                    s3 += row[index + 3] * column[index + 3]
                    s4 += row[index + 4] * column[index + 4]
                    s5 += row[index + 5] * column[index + 5]
                    s6 += row[index + 6] * column[index + 6]
                    s7 += row[index + 7] * column[index + 7]
                    index += 8
                }
                var total = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
                while index < k {
                    total += row[index] * column[index]
                    index += 1
                }
                c[i * ldc + j] = total
            }
        }
    }

    /// Rows of `a · b`: each output row a sum of `b`'s rows scaled by one row of `a` (no reduction, so the
    /// optimiser vectorises the inner loop).
    @_optimize(speed)
    func scaledRows(_ rows: Range<Int>) {
        for i in rows {
            let output = c + i * ldc
            for j in 0..<n { output[j] = 0 }
            let row = a.base + i * a.rowStride
            for l in 0..<k {
                let weight = row[l]
                let source = b.base + l * b.rowStride
                for j in 0..<n { output[j] += weight * source[j] }
            }
        }
    }
}
