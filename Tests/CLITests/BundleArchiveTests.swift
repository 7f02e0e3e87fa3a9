import Foundation
import ModelDepotTesting
import Testing

@testable import ModelDepot

/// Tar members beyond ustar's limits — names over 100 + 155 bytes, files of 8 GiB and more — written by us and
/// read by Python's `tarfile`, and written by `tarfile` (PAX and GNU formats) and read by us. Big members are
/// holes in a sparse file: only headers are ever written.
@Suite struct BundleArchiveTests {
    static let longName =
        "models/acme/tiny/" + (0..<12).map { "folder-\($0)-with-a-long-name" }.joined(separator: "/")
        + "/model.safetensors"
    static let bigSize: Int64 = 9 << 30 + 123

    /// Writes each member's headers and then skips over its data (a hole), or writes `data` when given.
    static func archive(at url: URL, _ members: [(name: String, size: Int64, data: [UInt8]?)]) throws {
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var offset: UInt64 = 0
        for member in members {
            let bytes = BundleArchive.headers(name: member.name, size: member.size) + (member.data ?? [])
            try handle.seek(toOffset: offset)
            try handle.write(contentsOf: bytes)
            offset += UInt64(bytes.count - (member.data?.count ?? 0)) + UInt64(member.size)
            offset += UInt64(BundleArchive.padding(after: member.size).count)
        }
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: [UInt8](repeating: 0, count: 2 * BundleArchive.block))
    }

    /// Runs Python with `script` and the arguments, returning what it printed as JSON.
    static func python(_ script: String, _ arguments: [String]) async throws -> Any {
        let (process, out, err) = try CLIRunner.startProgram(PythonVenv.python, ["-c", script] + arguments)
        let result = await CLIRunner.wait(process, out, err)
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    static let listing = """
        import json, sys, tarfile
        with tarfile.open(sys.argv[1]) as archive:
            print(json.dumps([[m.name, m.size, m.isfile()] for m in archive]))
        """

    /// Writes sys.argv[1] in tarfile's format sys.argv[2]: a member named sys.argv[3] of sys.argv[4] bytes (a
    /// hole), extended headers from sys.argv[5] (JSON), then a.txt holding "abc".
    static let writer = """
        import json, sys, tarfile
        path, form, name, size, extra = sys.argv[1], getattr(tarfile, sys.argv[2]), sys.argv[3], int(sys.argv[4]), json.loads(sys.argv[5])
        with open(path, "wb") as out:
            info = tarfile.TarInfo(name)
            info.size = size
            info.pax_headers = extra
            out.write(info.tobuf(form, "utf-8", "surrogateescape"))
            out.seek(size + (-size % 512), 1)
            small = tarfile.TarInfo("models/acme/tiny/a.txt")
            small.size = 3
            out.write(small.tobuf(form, "utf-8", "surrogateescape") + b"abc" + bytes(509) + bytes(1024))
        print("[]")
        """

    @Test func longNamesAndBigFilesWeWriteArePythonsToo() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-tar")
        defer { folder.remove() }
        let archive = folder.path("big.tar")
        try Self.archive(
            at: archive,
            [
                ("modeldepot.lock", 2, Array("{}".utf8)), (Self.longName, Self.bigSize, nil),
                ("models/acme/tiny/a.txt", 3, Array("abc".utf8)),
            ])
        let expected: [(String, Int64)] = [
            ("modeldepot.lock", 2), (Self.longName, Self.bigSize), ("models/acme/tiny/a.txt", 3),
        ]
        let listed = try #require(try await Self.python(Self.listing, [archive.path]) as? [[Any]])
        #expect(listed.map { $0[0] as? String } == expected.map(\.0))
        #expect(listed.map { ($0[1] as? NSNumber)?.int64Value } == expected.map(\.1))
        #expect(listed.allSatisfy { $0[2] as? Bool == true })
        let ours = try BundleArchive.members(of: archive)
        #expect(ours.map(\.name) == expected.map(\.0) && ours.map(\.size) == expected.map(\.1))
    }

    @Test func longNamesAndBigFilesPythonWritesAreRead() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-tar")
        defer { folder.remove() }
        for format in ["PAX_FORMAT", "GNU_FORMAT"] {
            let archive = folder.path("\(format).tar")
            _ = try await Self.python(Self.writer, [archive.path, format, Self.longName, "\(Self.bigSize)", "{}"])
            let members = try BundleArchive.members(of: archive)
            #expect(members.map(\.name) == [Self.longName, "models/acme/tiny/a.txt"], "\(format)")
            #expect(members.map(\.size) == [Self.bigSize, 3], "\(format)")
            let small = try #require(members.last)
            let handle = try FileHandle(forReadingFrom: archive)
            try handle.seek(toOffset: UInt64(small.offset))
            #expect(try handle.read(upToCount: 3) == Data("abc".utf8), "\(format)")
            try handle.close()
        }
    }

    @Test func hostileExtendedHeadersAreRefused() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-tar")
        defer { folder.remove() }
        let cases: [(String, String, String)] = [
            ("climbing", #"{"path": "models/acme/../../../escape.txt"}"#, "a path that leaves the bundle"),
            ("absolute", #"{"path": "/etc/passwd"}"#, "a path that leaves the bundle"),
            ("sparse", #"{"GNU.sparse.major": "1", "GNU.sparse.minor": "0"}"#, "sparse file"),
            ("negative", #"{"size": "-5"}"#, "a size of -5 bytes"),
        ]
        for (label, headers, message) in cases {
            let archive = folder.path("\(label).tar")
            _ = try await Self.python(
                Self.writer, [archive.path, "PAX_FORMAT", "models/acme/tiny/x.bin", "4", headers])
            let error = #expect(throws: ModelDepotError.self, "\(label)") { try BundleArchive.members(of: archive) }
            #expect(error?.message.contains(message) == true, "\(label): \(String(describing: error))")
        }
        // A record whose length does not match its text.
        var broken = BundleArchive.headers(name: Self.longName, size: 1)
        let record = Array("5 path=models/a.txt\n".utf8)
        broken.replaceSubrange(BundleArchive.block..<BundleArchive.block + record.count, with: record)
        let malformed = folder.path("malformed.tar")
        try Data(broken + [UInt8](repeating: 0, count: 3 * BundleArchive.block)).write(to: malformed)
        let error = #expect(throws: ModelDepotError.self) { try BundleArchive.members(of: malformed) }
        #expect(error?.message.contains("an extended header is malformed") == true)
    }
}
