import Foundation

/// The element-wise arithmetic the encoder needs, on row-major `Float` buffers. The multiplies, the hot spot, go
/// through a ``MatrixMultiplier`` so a BLAS library can take them over.
enum MatrixMath {
    /// `x[rows × width]` normalised per row, then scaled by `gamma` and shifted by `beta`.
    @_optimize(speed)
    static func layerNorm(
        _ x: inout [Float], rows: Int, width: Int, gamma: FloatTensor, beta: FloatTensor, epsilon: Float
    ) {
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

    /// GELU as BERT defines it, with the error function (not the tanh approximation). The error function is
    /// Abramowitz & Stegun 7.1.26 (absolute error below 1.5·10⁻⁷, under float32's rounding of the products
    /// around it) over ``exponential(_:)``, so the whole loop is arithmetic the optimiser vectorises; libm's
    /// `erff`, one call per value, took a quarter of a batch's time.
    @_optimize(speed)
    static func gelu(_ x: inout [Float]) {
        let factor = Float(0.5.squareRoot())
        x.withUnsafeMutableBufferPointer { x in
            for i in 0..<x.count {
                let value = x[i]
                let z = abs(value * factor)
                let t = 1 / (1 + 0.327_591_1 * z)
                let polynomial =
                    ((((1.061_405_429 * t - 1.453_152_027) * t + 1.421_413_741) * t - 0.284_496_736) * t
                        + 0.254_829_592) * t
                let erfOfMagnitude = 1 - polynomial * exponential(-z * z)
                // 0.5·x·(1 + erf(x/√2)), with erf odd: for negative x, 1 + erf = 1 − erf(|x|/√2).
                let onePlusErf = value < 0 ? 1 - erfOfMagnitude : 1 + erfOfMagnitude
                x[i] = 0.5 * value * onePlusErf
            }
        }
    }

    /// `eˣ` to within a few units in the last place for `x` in `-87...88` (clamped outside it), in plain
    /// arithmetic and bit operations, so loops calling it vectorise: `x = k·ln 2 + r` with `|r| ≤ ln 2 / 2`,
    /// `eʳ` by its Taylor series to the 7th power (remainder below 2·10⁻⁸ relative), `2ᵏ` built in the
    /// exponent bits.
    @inline(__always)
    static func exponential(_ x: Float) -> Float {
        let x = min(max(x, -87), 88)
        // Adding 1.5·2²³ rounds x·log₂e to an integer held in the low mantissa bits; subtracting it back gives k.
        let shifter: Float = 12_582_912
        let shifted = x * 1.442_695_04 + shifter
        let k = shifted - shifter
        // ln 2 in two parts, so k·ln 2 loses nothing for the k that occur here.
        let r = (x - k * 0.693_145_75) - k * 1.428_606_8e-6
        var p: Float = 1.0 / 5040
        p = p * r + 1.0 / 720
        p = p * r + 1.0 / 120
        p = p * r + 1.0 / 24
        p = p * r + 1.0 / 6
        p = p * r + 0.5
        p = p * r + 1
        p = p * r + 1
        let exponentBits = (shifted.bitPattern &- shifter.bitPattern) &+ 127
        return p * Float(bitPattern: exponentBits << 23)
    }

    /// Each of `count` rows of `width` scores (consecutive) scaled by `scale`, then replaced by its softmax.
    @_optimize(speed)
    static func softmax(rows: UnsafeMutablePointer<Float>, count: Int, width: Int, scale: Float) {
        for row in 0..<count {
            let values = rows + row * width
            var highest = -Float.infinity
            for j in 0..<width { highest = max(highest, values[j]) }
            var total: Float = 0
            for j in 0..<width {
                let e = exponential((values[j] - highest) * scale)
                values[j] = e
                total += e
            }
            let reciprocal = 1 / total
            for j in 0..<width { values[j] *= reciprocal }
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
    static func addBias(_ x: inout [Float], rows: Int, bias: FloatTensor) {
        let width = bias.count
        x.withUnsafeMutableBufferPointer { values in
            for row in 0..<rows { for i in 0..<width { values[row * width + i] += bias[i] } }
        }
    }
}
