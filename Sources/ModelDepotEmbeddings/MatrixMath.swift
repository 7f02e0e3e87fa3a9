import Foundation

/// The arithmetic the encoder needs, on row-major `Float` buffers. `multiply` is the hot spot; it goes
/// through a ``MatrixMultiplier`` so a BLAS library can take it over.
enum MatrixMath {
    /// `x[rows × width]` normalised per row, then scaled by `gamma` and shifted by `beta`.
    @_optimize(speed)
    static func layerNorm(_ x: inout [Float], rows: Int, width: Int, gamma: [Float], beta: [Float], epsilon: Float) {
        x.withUnsafeMutableBufferPointer { values in
            for row in 0..<rows {
                let start = row * width
                var mean: Float = 0
                for i in 0..<width { mean += values[start + i] }
                mean /= Float(width)
                var variance: Float = 0
                for i in 0..<width {
                    let d = values[start + i] - mean
                    variance += d * d
                }
                variance /= Float(width)
                let scale = 1 / (variance + epsilon).squareRoot()
                for i in 0..<width { values[start + i] = (values[start + i] - mean) * scale * gamma[i] + beta[i] }
            }
        }
    }

    /// GELU as BERT defines it, with the error function (not the tanh approximation).
    @_optimize(speed)
    static func gelu(_ x: inout [Float]) {
        let factor = Float(0.5.squareRoot())
        x.withUnsafeMutableBufferPointer { x in
            for i in 0..<x.count { x[i] = 0.5 * x[i] * (1 + erf(x[i] * factor)) }
        }
    }

    /// `y += x`, element by element (a residual connection).
    @_optimize(speed)
    static func add(_ x: [Float], to y: inout [Float]) {
        x.withUnsafeBufferPointer { x in
            y.withUnsafeMutableBufferPointer { y in for index in 0..<y.count { y[index] += x[index] } }
        }
    }

    /// Adds `bias` to every row of `x`.
    @_optimize(speed)
    static func addBias(_ x: inout [Float], rows: Int, bias: [Float]) {
        let width = bias.count
        x.withUnsafeMutableBufferPointer { values in
            for row in 0..<rows { for i in 0..<width { values[row * width + i] += bias[i] } }
        }
    }
}

/// `c[m × n] = a[m × k] · bᵀ`, where `b` is `[n × k]` (a weight matrix stored output by input, as PyTorch
/// stores `Linear` weights).
protocol MatrixMultiplier: Sendable {
    /// What does the work, for `modeldepot embed` to say.
    var name: String { get }
    func multiply(_ a: [Float], rows m: Int, inner k: Int, transposed b: [Float], columns n: Int) -> [Float]
}

/// Portable Swift: dot products of contiguous rows, eight running sums at a time.
struct PortableMultiplier: MatrixMultiplier {
    var name: String { "portable Swift" }

    @_optimize(speed)
    func multiply(_ a: [Float], rows m: Int, inner k: Int, transposed b: [Float], columns n: Int) -> [Float] {
        var c = [Float](repeating: 0, count: m * n)
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                c.withUnsafeMutableBufferPointer { c in
                    // Rows split across the cores when there is enough work to pay for the threads.
                    let parts = m * n * k >= 1 << 20 ? min(m, ProcessInfo.processInfo.activeProcessorCount) : 1
                    let a = UnsafeBuffer(a.baseAddress!)
                    let b = UnsafeBuffer(b.baseAddress!)
                    let c = UnsafeMutableBuffer(c.baseAddress!)
                    DispatchQueue.concurrentPerform(iterations: parts) { part in
                        for i in (part * m / parts)..<((part + 1) * m / parts) {
                            let row = a.base + i * k
                            for j in 0..<n {
                                let column = b.base + j * k
                                // Eight independent sums: none waits for the previous one, and the optimiser
                                // packs them into vector lanes (a debug build stays usable, unlike with SIMD
                                // types).
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
                                c.base[i * n + j] = total
                            }
                        }
                    }
                }
            }
        }
        return c
    }
}

/// Pointers handed to the threads of one multiply; each writes its own rows of the result.
private struct UnsafeBuffer: @unchecked Sendable {
    let base: UnsafePointer<Float>
    init(_ base: UnsafePointer<Float>) { self.base = base }
}

private struct UnsafeMutableBuffer: @unchecked Sendable {
    let base: UnsafeMutablePointer<Float>
    init(_ base: UnsafeMutablePointer<Float>) { self.base = base }
}
