import Foundation
import Testing

@testable import ModelDepotCore

/// A reservation the disk cannot hold says why plainly: the space shown may be space the system has to clear first.
@Suite struct ReservationErrorTests {
    @Test func aFullDiskAtReservationSaysWhatToDo() {
        let error = POSIXFailure.reservationError("/models/x.partial", size: 4 << 30, errno: ENOSPC)
        #expect(error.code == .insufficientDiskSpace)
        #expect(error.message.contains("does not have that much free right now"), "\(error.message)")
        #expect(error.message.contains("Settings › General › Storage"))
        #expect(error.message.contains("bytes already on disk are kept"))
        let other = POSIXFailure.reservationError("/models/x.partial", size: 1, errno: EACCES)
        #expect(other.code == .fileSystem)
    }
}
