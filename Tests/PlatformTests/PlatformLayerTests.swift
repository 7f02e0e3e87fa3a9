import Foundation
import ModelDepotPlatform
import Testing

/// The platform layer on this machine: what each call reports, checked against what was done to the disk.
@Suite struct PlatformLayerTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("modeldepot-platform-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    @Test func writebackStartsOnLinuxAndIsANoOpElsewhere() throws {
        defer { remove() }
        let file = folder.appendingPathComponent("w.bin").path
        let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(descriptor >= 0)
        defer { _ = FileStorage.close(descriptor: descriptor) }
        let bytes = [UInt8](repeating: 9, count: 1 << 20)
        #expect(write(descriptor, bytes, bytes.count) == bytes.count)
        #if os(Linux)
            // Found through dlsym: were it not, verified imports would silently leave the disk's work to the end.
            #expect(KernelCopy.startWriteback(descriptor: descriptor, offset: 0, count: Int64(bytes.count)))
            #expect(!KernelCopy.startWriteback(descriptor: -1, offset: 0, count: 1))
        #else
            #expect(!KernelCopy.startWriteback(descriptor: descriptor, offset: 0, count: Int64(bytes.count)))
        #endif
    }

    @Test func fileStatusReportsKindsSizesAndTimes() throws {
        defer { remove() }
        let file = folder.appendingPathComponent("f.bin").path
        try Data(repeating: 7, count: 12345).write(to: URL(fileURLWithPath: file))
        let modified = Date(timeIntervalSince1970: 1_700_000_000.25)
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: file)
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("l").path, withDestinationPath: "f.bin")

        let status = try #require(FileStatus(path: file))
        #expect(status.kind == .file && status.size == 12345 && status.inode > 0)
        #expect(abs(status.modified - 1_700_000_000.25) < 0.001)
        #expect(status.accessedNanoseconds > 0)
        #expect(FileStatus(path: folder.appendingPathComponent("l").path)?.kind == .file)
        #expect(FileStatus(path: folder.appendingPathComponent("l").path, followingLinks: false)?.kind == .link)
        #expect(FileStatus(path: folder.path)?.kind == .folder)
        #expect(FileStatus(path: folder.appendingPathComponent("missing").path) == nil)
    }

    @Test func directoryListsEntriesWithKindsAndWalksWithoutFollowingLinks() throws {
        defer { remove() }
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("a/b"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: folder.appendingPathComponent("a/b/c.txt"))
        try Data("y".utf8).write(to: folder.appendingPathComponent("top.txt"))
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("loop").path, withDestinationPath: ".")

        let entries = Directory.entries(folder.path).sorted { $0.name < $1.name }
        #expect(
            entries == [
                DirectoryEntry(name: "a", kind: .folder), DirectoryEntry(name: "loop", kind: .link),
                DirectoryEntry(name: "top.txt", kind: .file),
            ])
        let walked = Directory.walk(folder.path).sorted { $0.path < $1.path }
        #expect(walked.map(\.path) == ["a/b/c.txt", "loop", "top.txt"])
        #expect(walked.map(\.isLink) == [false, true, false])
        #expect(Directory.names(folder.appendingPathComponent("missing").path).isEmpty)
    }

    @Test func volumeSpaceAndFileStorageWorkOnARealFile() throws {
        defer { remove() }
        let free = try VolumeSpace.availableBytes(atPath: folder.path)
        #expect(free > 0)
        #expect(throws: SystemCallError.self) { try VolumeSpace.availableBytes(atPath: "/nonexistent/x") }
        let path = folder.appendingPathComponent("reserved").path
        let descriptor = open(path, O_RDWR | O_CREAT, 0o600)
        #expect(descriptor >= 0)
        #expect(ftruncate(descriptor, 1 << 20) == 0)
        #expect(FileStorage.reserve(descriptor: descriptor, size: 1 << 20) == 0)
        #expect(FileStorage.syncData(descriptor: descriptor) == 0)
        #expect(FileStatus(descriptor: descriptor)?.size == 1 << 20)
        #expect(FileStorage.close(descriptor: descriptor) == 0)
        // The shortage path (ENOSPC) is not provoked here: asking ext4 for more than the free space fills the
        // disk until the call fails, and the other tests running meanwhile would see a full disk.
    }

    @Test func childProcessesExitWithTheirStatusAndAnEmptySignalMask() async throws {
        defer { remove() }
        let output = folder.appendingPathComponent("out.txt").path
        let ok = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "echo hi"], output: output)
        await ok.waitForExit()
        #expect(ok.succeeded)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "hi\n")
        let failing = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "exit 3"], output: "/dev/null")
        failing.waitForExitBlocking()
        #expect(!failing.succeeded && failing.exitStatus.map { ($0 >> 8) & 0xff } == 3)
        // Started from a task, whose thread blocks signals: the child still obeys SIGTERM.
        let sleeper = try ChildProcess(executable: "/bin/sleep", arguments: ["30"], output: "/dev/null")
        sleeper.signal(SIGTERM)
        await sleeper.waitForExit()
        #expect(sleeper.exitStatus.map { $0 & 0x7f } == SIGTERM)
        #expect(throws: SystemCallError.self) {
            try ChildProcess(executable: "/nonexistent/program", arguments: [], output: "/dev/null")
        }
    }

    @Test func anUnusedLoopbackPortAndTheDescriptorLimitAreKnown() throws {
        let port = try LoopbackPort.unused()
        #expect((1024...65535).contains(port))
        #expect((OpenFileLimit.current() ?? 1024) >= 64)
    }

    @Test func aSharedLibraryLoadsAtRunTimeAndItsFunctionsCanBeCalled() throws {
        #if os(Linux)
            let names = ["libnot-there.so.9", "libm.so.6"]
        #else
            let names = ["libnot-there.dylib", "/usr/lib/libSystem.B.dylib"]
        #endif
        let library = try #require(SharedLibrary(firstOf: names))
        #expect(library.name == names[1], "the first name that loads wins")
        let address = try #require(library.address(of: "cos"))
        typealias Cosine = @convention(c) (Double) -> Double
        #expect(unsafeBitCast(address, to: Cosine.self)(0) == 1)
        #expect(library.address(of: "no_such_symbol_here") == nil)
        #expect(SharedLibrary(firstOf: ["libnot-there.so.9"]) == nil)
    }

    @Test func touchingAFileMovesItsAccessTimeOnly() throws {
        defer { remove() }
        let file = folder.appendingPathComponent("blob").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let modified = Date(timeIntervalSince1970: 1_600_000_000)
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: file)
        // Back-date the access time too, so the touch has something to move (the test may call what Sources may not).
        var old = [timespec(tv_sec: 1_600_000_000, tv_nsec: 0), timespec(tv_sec: 1_600_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, file, &old, 0) == 0)
        #expect(FileAccessTime.touch(file))
        let status = try #require(FileStatus(path: file))
        #expect(status.accessedNanoseconds / 1_000_000_000 > 1_700_000_000)
        #expect(abs(status.modified - 1_600_000_000) < 0.001)
        #expect(!FileAccessTime.touch(folder.appendingPathComponent("missing").path))
    }
}
