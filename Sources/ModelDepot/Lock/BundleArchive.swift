import Foundation
import ModelDepotCore

/// A bundle as one POSIX tar file (ustar), written and read here so that nothing in it is trusted: only regular
/// files and folders, names that stay inside the bundle, each named by the lock; a link, a device, an extended
/// header or a name the lock does not know is refused.
enum BundleArchive {
    static let block = 512

    /// One regular file in an archive: where its bytes start and how many there are.
    struct Member {
        var name: String
        var offset: Int64
        var size: Int64
    }

    /// The 512-byte ustar header of a regular file `name` of `size` bytes.
    static func header(name: String, size: Int64) throws -> [UInt8] {
        var prefix = ""
        var short = name
        if name.utf8.count > 100 {
            // ustar splits a long name at a `/` into a prefix of at most 155 bytes and a name of at most 100.
            guard
                let cut = name.indices.filter({ name[$0] == "/" }).last(where: {
                    name[..<$0].utf8.count <= 155 && name[name.index(after: $0)...].utf8.count <= 100
                })
            else {
                throw ModelDepotError(
                    .invalidArgument, "\(name) is too long for a tar archive; export to a folder instead.")
            }
            prefix = String(name[..<cut])
            short = String(name[name.index(after: cut)...])
        }
        var bytes = [UInt8](repeating: 0, count: block)
        func put(_ text: String, at offset: Int, width: Int) {
            for (index, byte) in text.utf8.prefix(width).enumerated() { bytes[offset + index] = byte }
        }
        func octal(_ value: Int64, width: Int) -> String {
            let digits = String(value, radix: 8)
            return String(repeating: "0", count: max(0, width - 1 - digits.count)) + digits
        }
        put(short, at: 0, width: 100)
        put(octal(0o644, width: 8), at: 100, width: 7)
        put(octal(0, width: 8), at: 108, width: 7)
        put(octal(0, width: 8), at: 116, width: 7)
        put(octal(size, width: 12), at: 124, width: 11)
        put(octal(0, width: 12), at: 136, width: 11)
        put("        ", at: 148, width: 8)
        bytes[156] = UInt8(ascii: "0")
        put("ustar", at: 257, width: 6)
        put("00", at: 263, width: 2)
        put(prefix, at: 345, width: 155)
        let sum = bytes.reduce(0) { $0 + Int($1) }
        put(octal(Int64(sum), width: 7), at: 148, width: 6)
        bytes[155] = 0x20
        return bytes
    }

    /// Every regular file of the archive at `url`, refusing anything that is not a regular file or a folder and
    /// any name that could leave the bundle.
    static func members(of url: URL) throws -> [Member] {
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw ModelDepotError(.fileSystem, "Cannot open the archive \(url.path).")
        }
        defer { try? handle.close() }
        let length = Int64(try handle.seekToEnd())
        var offset: Int64 = 0
        var members: [Member] = []
        func refuse(_ why: String) -> ModelDepotError {
            ModelDepotError(.invalidArgument, "\(url.lastPathComponent) is not a bundle ModelDepot imports: \(why).")
        }
        while offset + Int64(block) <= length {
            try handle.seek(toOffset: UInt64(offset))
            guard let data = try handle.read(upToCount: block), data.count == block else {
                throw refuse("it is cut short")
            }
            let bytes = [UInt8](data)
            if bytes.allSatisfy({ $0 == 0 }) { break }
            func field(_ start: Int, _ width: Int) -> String {
                String(decoding: bytes[start..<start + width].prefix { $0 != 0 }, as: UTF8.self)
            }
            let stored = Int(field(148, 8).trimmingCharacters(in: CharacterSet(charactersIn: " \0")), radix: 8)
            let sum = bytes.enumerated().reduce(0) { $0 + (148..<156 ~= $1.offset ? 32 : Int($1.element)) }
            guard stored == sum else { throw refuse("a header's checksum is wrong at byte \(offset)") }
            let prefix = field(345, 155)
            let name = (prefix.isEmpty ? "" : prefix + "/") + field(0, 100)
            guard let size = Int64(field(124, 12).trimmingCharacters(in: .whitespaces), radix: 8), size >= 0 else {
                throw refuse("\(name) has no readable size")
            }
            let kind = bytes[156]
            let start = offset + Int64(block)
            switch kind {
            case UInt8(ascii: "0"), 0:
                var clean = name
                while clean.hasPrefix("./") { clean.removeFirst(2) }
                guard !clean.hasPrefix("/"), !clean.split(separator: "/").contains(".."),
                    clean == ModelBundle.lockName || (try? RepoFilePath(clean)) != nil
                else { throw refuse("it holds \(name), a path that leaves the bundle") }
                guard start + size <= length else { throw refuse("\(name) is cut short") }
                members.append(Member(name: clean, offset: start, size: size))
            case UInt8(ascii: "5"):
                break
            case UInt8(ascii: "1"), UInt8(ascii: "2"):
                throw refuse("it holds a link, \(name); bundles hold plain files only")
            default:
                throw refuse(
                    "it holds \(name) of type '\(Character(UnicodeScalar(kind)))'; bundles hold plain files only")
            }
            offset = start + (size + Int64(block) - 1) / Int64(block) * Int64(block)
        }
        return members
    }
}

extension ModelManager {
    /// ``export(lock:to:layout:)`` as one tar file: the lock first, then every file, checked against the lock first.
    @discardableResult
    public nonisolated func export(lock: ModelLock, toArchive archive: URL) throws -> Int64 {
        let files = try cachedFiles(of: lock)
        let temporary = archive.deletingLastPathComponent().appendingPathComponent(
            ".\(archive.lastPathComponent).partial")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil),
            let output = FileHandle(forWritingAtPath: temporary.path)
        else { throw ModelDepotError(.fileSystem, "Cannot write \(archive.path).") }
        var placed = false
        defer {
            try? output.close()
            if !placed { try? FileManager.default.removeItem(at: temporary) }
        }
        func pad(_ size: Int64) throws {
            let rest = Int(size % Int64(BundleArchive.block))
            if rest > 0 { try output.write(contentsOf: Data(count: BundleArchive.block - rest)) }
        }
        let lockData = lock.encoded()
        try output.write(contentsOf: try BundleArchive.header(name: ModelBundle.lockName, size: Int64(lockData.count)))
        try output.write(contentsOf: lockData)
        try pad(Int64(lockData.count))
        var written: Int64 = 0
        for (repository, file, source) in files {
            try output.write(
                contentsOf: try BundleArchive.header(
                    name: ModelBundle.relativePath(repository, file), size: file.size))
            guard let input = FileHandle(forReadingAtPath: source.path) else {
                throw ModelDepotError(.fileSystem, "Cannot read \(source.path).")
            }
            defer { try? input.close() }
            var copied: Int64 = 0
            while let chunk = try input.read(upToCount: 8 << 20), !chunk.isEmpty {
                try output.write(contentsOf: chunk)
                copied += Int64(chunk.count)
            }
            guard copied == file.size else {
                throw ModelDepotError(.sizeMismatch, "\(source.path) changed while it was exported.")
            }
            try pad(file.size)
            written += file.size
        }
        try output.write(contentsOf: Data(count: 2 * BundleArchive.block))
        try output.close()
        try? FileManager.default.removeItem(at: archive)
        try FileManager.default.moveItem(at: temporary, to: archive)
        placed = true
        return written
    }
}
