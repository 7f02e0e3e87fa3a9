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
    /// OpenBLAS's name for the kernels it runs (`SkylakeX`, `Haswell`, …); nil for another BLAS.
    let kernels: String?

    var name: String {
        let file = (library.name as NSString).lastPathComponent
        return kernels.map { "BLAS (\(file), \($0) kernels)" } ?? "BLAS (\(file))"
    }

    /// The system's BLAS, when one loads and exports `cblas_sgemm`.
    init?(candidates: [String] = SharedLibrary.systemBLAS, processor: Set<String> = ProcessorFeatures.current) {
        let defaults = Self.openBLASCoreType(for: processor).map { ["OPENBLAS_CORETYPE": $0] } ?? [:]
        guard let library = SharedLibrary(firstOf: candidates, defaults: defaults),
            let address = library.address(of: "cblas_sgemm")
        else { return nil }
        self.library = library
        self.sgemm = unsafeBitCast(address, to: SGEMM.self)
        typealias CoreName = @convention(c) () -> UnsafePointer<CChar>?
        kernels = library.address(of: "openblas_get_corename")
            .flatMap { unsafeBitCast($0, to: CoreName.self)() }
            .map { String(cString: $0) }
    }

    /// The kernels OpenBLAS should run, from the extensions the processor reports, for `OPENBLAS_CORETYPE`.
    ///
    /// OpenBLAS built for many processors (Debian's `libopenblas0` is) picks its kernels by the processor's model
    /// number, and a processor newer than the library is not in its table: Debian 12's OpenBLAS 0.3.21 runs a
    /// Sapphire Rapids Xeon with its `Prescott` kernels (SSE3), measured at 65 GFLOP/s where its `SkylakeX`
    /// kernels (AVX-512) reach 290 on the same two cores. Choosing by the extensions themselves cannot be
    /// misled that way; every OpenBLAS since 0.3.0 knows both names. Nil leaves the choice to OpenBLAS.
    static func openBLASCoreType(for processor: Set<String>) -> String? {
        if processor.isSuperset(of: ["avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"]) { return "SkylakeX" }
        if processor.isSuperset(of: ["avx2", "fma"]) { return "Haswell" }
        return nil
    }

    func multiply(
        rows m: Int, columns n: Int, inner k: Int, _ a: MatrixView, _ b: MatrixView, transposedB: Bool,
        into c: UnsafeMutablePointer<Float>, rowStride ldc: Int
    ) {
        sgemm(
            Self.rowMajor, Self.noTranspose, transposedB ? Self.transpose : Self.noTranspose, Int32(m), Int32(n),
            Int32(k), 1, a.base, Int32(a.rowStride), b.base, Int32(b.rowStride), 0, c, Int32(ldc))
    }
}

/// Which multiply the encoder uses.
public enum EmbeddingArithmetic: String, Sendable, CaseIterable {
    /// The system BLAS when there is one, else portable Swift. On Linux, OpenBLAS is given the kernels the
    /// processor's extensions call for (`OPENBLAS_CORETYPE`) unless the environment already names some.
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
