import Foundation
import ModelDepotPlatform

/// The matrix multiply done by the system's BLAS (`cblas_sgemm`), loaded at run time: nothing is needed to
/// build, and without a BLAS the portable Swift multiply does the work.
struct BLASMultiplier: MatrixMultiplier {
    /// `cblas_sgemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)`.
    private typealias SGEMM =
        @convention(c) (
            Int32, Int32, Int32, Int32, Int32, Int32, Float, UnsafePointer<Float>?, Int32, UnsafePointer<Float>?, Int32,
            Float, UnsafeMutablePointer<Float>?, Int32
        ) -> Void

    private static let rowMajor: Int32 = 101
    private static let noTranspose: Int32 = 111
    private static let transpose: Int32 = 112

    private let library: SharedLibrary
    private let sgemm: SGEMM

    var name: String { "BLAS (\((library.name as NSString).lastPathComponent))" }

    /// The system's BLAS, when one loads and exports `cblas_sgemm`.
    init?(candidates: [String] = SharedLibrary.systemBLAS) {
        guard let library = SharedLibrary(firstOf: candidates), let address = library.address(of: "cblas_sgemm")
        else { return nil }
        self.library = library
        self.sgemm = unsafeBitCast(address, to: SGEMM.self)
    }

    func multiply(_ a: [Float], rows m: Int, inner k: Int, transposed b: [Float], columns n: Int) -> [Float] {
        var c = [Float](repeating: 0, count: m * n)
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                c.withUnsafeMutableBufferPointer { c in
                    sgemm(
                        Self.rowMajor, Self.noTranspose, Self.transpose, Int32(m), Int32(n), Int32(k), 1, a.baseAddress,
                        Int32(k), b.baseAddress, Int32(k), 0, c.baseAddress, Int32(n))
                }
            }
        }
        return c
    }
}

/// Which multiply the encoder uses.
public enum EmbeddingArithmetic: String, Sendable, CaseIterable {
    /// The system BLAS when there is one, else portable Swift.
    case automatic
    /// Portable Swift only (to compare, or when a BLAS misbehaves).
    case portable

    /// The multiplier this choice gives here. `MODELDEPOT_BLAS=off` in the environment forces portable Swift.
    func multiplier(environment: [String: String] = ProcessInfo.processInfo.environment) -> any MatrixMultiplier {
        if self == .automatic, environment["MODELDEPOT_BLAS"]?.lowercased() != "off", let blas = BLASMultiplier() {
            return blas
        }
        return PortableMultiplier()
    }
}
