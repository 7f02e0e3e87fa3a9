import Foundation

extension Process {
    /// Starts the program and waits for it to end without holding a thread (its termination handler resumes the
    /// wait): for a test's short peer runs (a Python script, `curl`). False when it could not be started, and then
    /// `terminationStatus` must not be read.
    @discardableResult
    public func runToEnd() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            terminationHandler = { _ in continuation.resume(returning: true) }
            do {
                try run()
            } catch {
                terminationHandler = nil
                continuation.resume(returning: false)
            }
        }
    }
}
