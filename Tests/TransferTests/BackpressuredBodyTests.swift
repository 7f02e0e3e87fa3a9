import Foundation
import NIOCore
import Synchronization
import Testing

@testable import ModelDepotTransfer

/// The URLSession transport's backpressure, with a scripted task standing in for `URLSessionDataTask`: the delegate's
/// thread delivers bytes only while the task is not suspended (as a suspended task stops reading its socket), and a
/// reader drains them. Whatever the interleaving, every byte arrives in order and the task is never left suspended.
@Suite struct BackpressuredBodyTests {
    /// Suspended or running, as the system's task would be after the calls it got.
    final class ScriptedTask: PausableTask {
        let suspended = Mutex(false)
        let suspensions = Mutex(0)
        func suspend() {
            suspended.withLock { $0 = true }
            suspensions.withLock { $0 += 1 }
        }
        func resume() { suspended.withLock { $0 = false } }
        func cancel() {}
    }

    @Test func aReaderThatCatchesUpNeverLeavesTheTaskSuspended() async throws {
        var pausedRounds = 0
        for round in 0..<200 {
            let task = ScriptedTask()
            let body = BackpressuredBody(task: task, limit: 64, pauses: true)
            let chunks = 200
            // The delegate's thread: a 16-byte chunk whenever the task runs; after 10 s of being suspended with
            // nothing left unread, the task is stuck for good. (It was 1 s, which a fresh-clone run of the whole
            // suite on 2 cores exceeded once without anything being stuck: the reader was not scheduled in time.)
            let stuck = Mutex(false)
            let delivered = Thread {
                var sent = 0
                var waitingSince: Date?
                while sent < chunks {
                    if task.suspended.withLock({ $0 }) {
                        if waitingSince == nil { waitingSince = Date() }
                        if !body.isPaused, Date().timeIntervalSince(waitingSince!) > 10 {
                            stuck.withLock { $0 = true }
                            body.completed(nil)
                            return
                        }
                        // Waiting for the reader, without taking a core from it.
                        Thread.sleep(forTimeInterval: 0.0001)
                        continue
                    }
                    waitingSince = nil
                    body.received(BodyChunk(Data(repeating: UInt8(sent % 251), count: 16)))
                    sent += 1
                }
                body.completed(nil)
            }
            delivered.start()
            var received: [UInt8] = []
            while let chunk = try await body.next() { received += chunk.bytes }
            #expect(!stuck.withLock { $0 }, "round \(round): the task was left suspended with nothing to read")
            let expected = (0..<chunks).flatMap { [UInt8](repeating: UInt8($0 % 251), count: 16) }
            #expect(received == expected, "round \(round): bytes lost, doubled or out of order")
            #expect(!task.suspended.withLock { $0 })
            if task.suspensions.withLock({ $0 }) > 0 { pausedRounds += 1 }
        }
        #expect(pausedRounds > 0, "the reader was never outrun: nothing was tested")
        print("backpressure: the task was suspended in \(pausedRounds) of 200 rounds")
    }

    @Test func aBufferTakenIsLetGoAtOnce() async throws {
        let body = BackpressuredBody(task: ScriptedTask(), limit: 1 << 20, pauses: true)
        let freed = Mutex<[Int]>([])
        for index in 0..<3 {
            let memory = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16)
            memory.initializeMemory(as: UInt8.self, repeating: UInt8(index), count: 4096)
            body.received(
                BodyChunk(
                    Data(
                        bytesNoCopy: memory, count: 4096,
                        deallocator: .custom { pointer, _ in
                            pointer.deallocate()
                            freed.withLock { $0.append(index) }
                        })))
        }
        // The reader takes the first buffer, writes it and lets it go, while two more wait: its memory goes back
        // then, not once the body has been read to its end (a reader that never catches up kept 64 of them).
        var first = try await body.next()
        #expect(first?.bytes.first == 0)
        first = nil
        #expect(freed.withLock { $0 } == [0])
        #expect(try await body.next()?.bytes.first == 1)
        #expect(freed.withLock { $0 } == [0, 1])
    }

    @Test func slicesOfOneReadCountOnce() async throws {
        // A chunked body's parts are slices of the read they came in: sixteen 4 KiB slices of one 64 KiB buffer
        // keep 64 KiB alive, not sixteen times that, and do not pause a body whose limit is 128 KiB.
        let task = ScriptedTask()
        let body = BackpressuredBody(task: task, limit: 128 << 10, pauses: true)
        var read = ByteBufferAllocator().buffer(capacity: 64 << 10)
        read.writeRepeatingByte(7, count: 64 << 10)
        var held = 0
        for _ in 0..<16 {
            let slice = read.readSlice(length: 4 << 10)
            held = body.received(BodyChunk(try #require(slice)))
        }
        #expect(held == 64 << 10)
        #expect(!body.isPaused && task.suspensions.withLock { $0 } == 0)
        // Taking all but one slice leaves the buffer counted; taking the last lets it go.
        for _ in 0..<15 { _ = try await body.next() }
        #expect(body.received(BodyChunk(Data(count: 10))) == (64 << 10) + 10)
        _ = try await body.next()
        #expect(body.received(BodyChunk(Data(count: 10))) == 20)
    }
}
