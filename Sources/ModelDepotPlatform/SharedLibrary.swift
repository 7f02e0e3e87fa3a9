#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A shared library loaded at run time, so a feature can use a system library when it is there without the
/// package needing it to build (`libopenblas.so.0` on Linux, say). Linux and Apple platforms both have
/// `dlopen(3)`/`dlsym(3)`/`dlclose(3)` (glibc's `<dlfcn.h>`, Darwin's `<dlfcn.h>`); on Apple platforms only
/// libraries the system or the app bundle ships can be opened.
package final class SharedLibrary: @unchecked Sendable {
    // @unchecked: the handle is only read after init; dlsym is thread-safe.
    private let handle: UnsafeMutableRawPointer
    /// The name or path it was opened by.
    package let name: String

    /// Opens the first of `names` that loads (`RTLD_NOW | RTLD_LOCAL`); nil when none does.
    ///
    /// `defaults` are environment variables a library reads while it loads (OpenBLAS's `OPENBLAS_CORETYPE`):
    /// each is set (`setenv(3)` without overwriting) only where the environment does not already hold it, so the
    /// user's own setting wins. Set before the first library opens; `setenv` is not safe against threads reading
    /// the environment at the same moment, which is why it happens here, once, rather than anywhere.
    package init?(firstOf names: [String], defaults: [String: String] = [:]) {
        for (variable, value) in defaults { setenv(variable, value, 0) }
        for name in names {
            if let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) {
                self.handle = handle
                self.name = name
                return
            }
        }
        return nil
    }

    /// The address of `symbol`, or nil when the library does not export it. Cast it with `unsafeBitCast` to
    /// the C function type it has.
    package func address(of symbol: String) -> UnsafeMutableRawPointer? {
        dlsym(handle, symbol)
    }

    deinit { dlclose(handle) }

    /// Where this platform keeps a CBLAS (`cblas_sgemm` with the reference C interface: `int` sizes, enums
    /// 101/111/112), in the order to try: Debian's OpenBLAS packages on Linux (`libopenblas0`, which
    /// `scripts/test` installs); Accelerate's vecLib on Apple platforms, whose classic CBLAS interface
    /// (`<vecLib/cblas.h>`) has the same C ABI.
    package static var systemBLAS: [String] {
        #if canImport(Darwin)
            ["/System/Library/Frameworks/Accelerate.framework/Accelerate"]
        #else
            ["libopenblas.so.0", "libopenblas.so", "libblas.so.3"]
        #endif
    }
}
