import Foundation

#if MODELDEPOT_SERVER_STACK
    import NIOCore
#endif

/// Bytes of a response body as they arrived: SwiftNIO's `ByteBuffer` where async-http-client delivers them, `Data`
/// where URLSession does — kept as they came, never copied to be handed on. Apps on iOS and Apple's other
/// platforms link no SwiftNIO for it.
package struct BodyChunk: Sendable {
    private enum Storage: Sendable {
        case data(Data)
        #if MODELDEPOT_SERVER_STACK
            case buffer(ByteBuffer)
        #endif
    }

    private let storage: Storage

    /// A chunk holding `data`.
    package init(_ data: Data) { storage = .data(data) }

    /// A chunk holding a copy of `bytes`.
    package init(_ bytes: [UInt8]) { storage = .data(Data(bytes)) }

    #if MODELDEPOT_SERVER_STACK
        /// A chunk holding `buffer`'s readable bytes.
        package init(_ buffer: ByteBuffer) { storage = .buffer(buffer) }
    #endif

    /// How many bytes it holds.
    package var count: Int {
        switch storage {
        case .data(let data): data.count
        #if MODELDEPOT_SERVER_STACK
            case .buffer(let buffer): buffer.readableBytes
        #endif
        }
    }

    /// The memory holding on to this chunk keeps alive: the whole of the transport's buffer, which is often
    /// larger than the bytes read into it and shared by several chunks (slices of one read). `storage` names that
    /// buffer (its storage object's address, stable while any chunk of it is held) so that it counts once however
    /// many chunks share it; nil for a chunk that owns its bytes.
    var retained: (storage: UInt?, bytes: Int) {
        switch storage {
        case .data(let data): (nil, data.count)
        #if MODELDEPOT_SERVER_STACK
            case .buffer(let buffer):
                (
                    buffer.withVeryUnsafeBytesWithStorageManagement { _, storage in
                        UInt(bitPattern: storage.toOpaque())
                    },
                    max(buffer.readableBytes, buffer.storageCapacity)
                )
        #endif
        }
    }

    /// Calls `body` with the bytes, in place.
    package func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        switch storage {
        case .data(let data): try data.withUnsafeBytes(body)
        #if MODELDEPOT_SERVER_STACK
            case .buffer(let buffer): try buffer.withUnsafeReadableBytes(body)
        #endif
        }
    }

    /// A copy of the bytes.
    package var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}
