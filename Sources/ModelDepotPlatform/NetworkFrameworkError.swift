import Foundation

#if canImport(Network)
    import Network
#endif

/// Errors of Apple's Network.framework, which AsyncHTTPClient's transport on Apple platforms throws (a refused
/// connection arrives as `NWError.posix(.ECONNREFUSED)`, not as SwiftNIO's `IOError`).
package enum NetworkFrameworkError {
    /// The POSIX code an `NWError.posix` carries (`<Network/NWError.h>`); nil for any other error, and always
    /// on Linux. Never compiled here.
    package static func posixCode(of error: any Error) -> Int32? {
        #if canImport(Network)
            if let error = error as? NWError, case .posix(let code) = error { return code.rawValue }
        #endif
        return nil
    }
}
