import Foundation
import ModelDepotPlatform
import Testing

@testable import ModelDepotEmbeddings

/// The encoder's own arithmetic against Foundation's double-precision functions and a plain triple loop.
struct MatrixMathTests {
    @Test func theExponentialIsWithinAFewUnitsInTheLastPlace() {
        var worst = 0.0
        for step in -8700...8800 {
            let x = Float(step) / 100
            let exact = Foundation.exp(Double(x))
            worst = max(worst, abs(Double(MatrixMath.exponential(x)) - exact) / exact)
        }
        #expect(worst < 4e-7, "worst relative error \(worst)")
        // Beyond float32's range it saturates rather than overflowing to garbage.
        #expect(MatrixMath.exponential(-200) < 1e-37)
        #expect(MatrixMath.exponential(200).isFinite)
    }

    @Test func geluMatchesTheErrorFunctionDefinition() {
        let inputs = (-1200...1200).map { Float($0) / 100 }
        var values = inputs
        MatrixMath.gelu(&values)
        for (x, y) in zip(inputs, values) {
            let exact = 0.5 * Double(x) * (1 + Foundation.erf(Double(x) / 2.0.squareRoot()))
            #expect(abs(Double(y) - exact) <= 2e-6 * max(1, abs(exact)), "gelu(\(x)) = \(y), not \(exact)")
        }
    }

    @Test func softmaxRowsSumToOneAndKeepTheirOrder() {
        var scores: [Float] = [1, 2, 3, -50, 0, 50]
        scores.withUnsafeMutableBufferPointer {
            MatrixMath.softmax(rows: $0.baseAddress!, count: 2, width: 3, scale: 0.5)
        }
        let expected = [1.0, 2, 3].map { Foundation.exp(0.5 * $0) }
        for (value, exact) in zip(scores.prefix(3), expected) {
            #expect(abs(Double(value) - exact / expected.reduce(0, +)) < 1e-6)
        }
        #expect(abs(scores[3...].reduce(0, +) - 1) < 1e-6 && scores[5] > 0.999)
    }

    /// Strided views, both orientations of `b`, sizes on both sides of the threading threshold.
    @Test(arguments: [(3, 5, 7, false), (3, 5, 7, true), (130, 97, 129, true), (130, 97, 129, false)])
    func thePortableMultiplyMatchesATripleLoop(m: Int, n: Int, k: Int, transposedB: Bool) {
        let aStride = k + 3
        let bRows = transposedB ? n : k
        let bStride = (transposedB ? k : n) + 2
        let a = (0..<(m * aStride)).map { Float(($0 * 7919) % 23) / 11 - 1 }
        let b = (0..<(bRows * bStride)).map { Float(($0 * 104_729) % 19) / 9 - 1 }
        let cStride = n + 1
        var c = [Float](repeating: .nan, count: m * cStride)
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                c.withUnsafeMutableBufferPointer { c in
                    PortableMultiplier().multiply(
                        rows: m, columns: n, inner: k, MatrixView(base: a.baseAddress!, rowStride: aStride),
                        MatrixView(base: b.baseAddress!, rowStride: bStride), transposedB: transposedB,
                        into: c.baseAddress!, rowStride: cStride)
                }
            }
        }
        for i in 0..<m {
            for j in 0..<n {
                let exact = (0..<k).reduce(0.0) { sum, l in
                    let bValue = transposedB ? b[j * bStride + l] : b[l * bStride + j]
                    return sum + Double(a[i * aStride + l]) * Double(bValue)
                }
                #expect(abs(Double(c[i * cStride + j]) - exact) < 1e-4, "c[\(i), \(j)]")
            }
        }
    }

    @Test func openBLASKernelsFollowTheProcessorsExtensions() {
        let avx512: Set<String> = ["sse2", "avx2", "fma", "avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"]
        #expect(BLASMultiplier.openBLASCoreType(for: avx512) == "SkylakeX")
        #expect(BLASMultiplier.openBLASCoreType(for: avx512.subtracting(["avx512vl"])) == "Haswell")
        #expect(BLASMultiplier.openBLASCoreType(for: ["sse2", "avx"]) == nil)
        #expect(BLASMultiplier.openBLASCoreType(for: []) == nil)
        #if os(Linux) && arch(x86_64)
            // Every x86-64 processor has SSE2, so an empty or garbled read of /proc/cpuinfo fails here.
            #expect(ProcessorFeatures.current.contains("sse2"))
        #endif
    }
}
