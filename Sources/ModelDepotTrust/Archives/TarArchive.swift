import Foundation
import ModelDepotCore

/// POSIX tar, read so that nothing in it is trusted: only regular files and folders, names that stay inside the
/// folder the archive is unpacked into; a link, a device, a sparse file, a global header that renames every file or
/// a size past the archive's end is refused by name. Used for bundles (``BundleArchive``) and for the tar layers of
/// OCI artifacts.
///
/// ustar headers, PAX extended headers (`x`: `path` and `size`), GNU long names (`L`) and base-256 sizes are
/// understood, so archives written by GNU tar, Python's `tarfile` and Go's `archive/tar` read.
package enum TarArchive {
    package static let block = 512
    /// The most bytes of extended-header data read for one member (names are at most a few KiB).
    static let extendedHeaderLimit = 1 << 20

    /// One regular file in an archive: where its bytes start and how many there are.
    package struct Member: Sendable, Equatable {
        package var name: String
        package var offset: Int64
        package var size: Int64
    }

    /// Every regular file of the tar at `url`, refusing anything that is not a regular file or a folder (links,
    /// devices, sparse files) and any name that could leave the folder it is unpacked into or that `accepts`
    /// refuses; `what` says what the archive should have been, in the refusals (`a bundle ModelDepot imports`), and
    /// `inside` what it is unpacked into (`the bundle`). A name starting with one of `droppedPrefixes` is taken without it (olot
    /// writes a model's files as `models/<path>`, the modelcar layout), before it is checked. Past `maximumMembers`
    /// files, the archive is refused before the rest is read.
    package static func members(
        of url: URL, what: String, inside: String, strippingPrefixes droppedPrefixes: [String] = [],
        maximumMembers: Int = .max, accepts: (String) -> Bool
    ) throws -> [Member] {
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw ModelDepotError(.fileSystem, "Cannot open the archive \(url.path).")
        }
        defer { try? handle.close() }
        let length = Int64(try handle.seekToEnd())
        var offset: Int64 = 0
        var members: [Member] = []
        // What an extended header (PAX `x`, GNU `L`) says about the member that follows it.
        var pendingName: String?
        var pendingSize: Int64?
        func refuse(_ why: String) -> ModelDepotError {
            ModelDepotError(.invalidArgument, "\(url.lastPathComponent) is not \(what): \(why).")
        }
        func read(_ count: Int, at start: Int64) throws -> [UInt8] {
            try handle.seek(toOffset: UInt64(start))
            guard let data = try handle.read(upToCount: count), data.count == count else {
                throw refuse("it is cut short")
            }
            return [UInt8](data)
        }
        while offset + Int64(block) <= length {
            let bytes = try read(block, at: offset)
            if bytes.allSatisfy({ $0 == 0 }) { break }
            func field(_ start: Int, _ width: Int) -> String {
                String(decoding: bytes[start..<start + width].prefix { $0 != 0 }, as: UTF8.self)
            }
            let stored = Int(field(148, 8).trimmingCharacters(in: CharacterSet(charactersIn: " \0")), radix: 8)
            let sum = bytes.enumerated().reduce(0) { $0 + (148..<156 ~= $1.offset ? 32 : Int($1.element)) }
            guard stored == sum else { throw refuse("a header's checksum is wrong at byte \(offset)") }
            let prefix = field(345, 155)
            let name = pendingName ?? ((prefix.isEmpty ? "" : prefix + "/") + field(0, 100))
            guard let size = pendingSize ?? number(bytes[124..<136]) else {
                throw refuse("\(name) has no readable size")
            }
            let kind = bytes[156]
            let start = offset + Int64(block)
            // A PAX or base-256 size may be anything up to Int64.max: every sum is checked, so a size no file
            // holds is refused by name rather than overflowing.
            let (end, overflow) = start.addingReportingOverflow(size)
            guard !overflow, end <= length else {
                throw refuse("\(name) is cut short (it claims \(size) bytes; the archive has \(length - start) left)")
            }
            offset = start + (size + Int64(block) - 1) / Int64(block) * Int64(block)
            if kind != UInt8(ascii: "x"), kind != UInt8(ascii: "L") {
                pendingName = nil
                pendingSize = nil
            }
            switch kind {
            case UInt8(ascii: "0"), 0:
                var clean = name
                while clean.hasPrefix("./") { clean.removeFirst(2) }
                if let dropped = droppedPrefixes.first(where: { clean.hasPrefix($0) && clean.count > $0.count }) {
                    clean.removeFirst(dropped.count)
                }
                guard !clean.hasPrefix("/"), !clean.split(separator: "/").contains(".."), accepts(clean) else {
                    throw refuse("it holds \(name), a path that leaves \(inside)")
                }
                members.append(Member(name: clean, offset: start, size: size))
                guard members.count <= maximumMembers else {
                    throw refuse("it holds more than \(maximumMembers) files")
                }
            case UInt8(ascii: "5"):
                break
            case UInt8(ascii: "x"), UInt8(ascii: "g"):
                guard size <= extendedHeaderLimit else {
                    throw refuse("an extended header at byte \(start) is too big")
                }
                let records = try paxRecords(read(Int(size), at: start), refuse: refuse)
                if let sparse = records.first(where: { $0.key.hasPrefix("GNU.sparse") }) {
                    throw refuse("it holds a sparse file (\(sparse.key)); only plain files are taken")
                }
                for (key, value) in records where key == "path" || key == "size" {
                    guard kind == UInt8(ascii: "x") else { throw refuse("a global header sets every file's \(key)") }
                    if key == "path" {
                        pendingName = value
                    } else {
                        guard let parsed = Int64(value), parsed >= 0 else { throw refuse("a size of \(value) bytes") }
                        pendingSize = parsed
                    }
                }
            case UInt8(ascii: "L"):
                guard size <= extendedHeaderLimit else { throw refuse("a long name at byte \(start) is too big") }
                pendingName = String(decoding: try read(Int(size), at: start).prefix { $0 != 0 }, as: UTF8.self)
            case UInt8(ascii: "1"), UInt8(ascii: "2"):
                throw refuse("it holds a link, \(name); only plain files are taken")
            default:
                throw refuse(
                    "it holds \(name) of type '\(Character(UnicodeScalar(kind)))'; only plain files are taken")
            }
        }
        return members
    }

    /// A numeric header field: octal digits (ustar), or base-256 when its first byte's high bit is set (GNU tar,
    /// for sizes of 8 GiB and more). Nil when it is neither, or negative.
    static func number(_ field: ArraySlice<UInt8>) -> Int64? {
        guard let first = field.first else { return nil }
        if first & 0x80 != 0 {
            guard first == 0x80, field.dropFirst().prefix(while: { $0 == 0 }).count >= field.count - 1 - 8 else {
                return nil
            }
            let value = field.dropFirst().suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return value <= UInt64(Int64.max) ? Int64(value) : nil
        }
        let text = String(decoding: field.prefix { $0 != 0 }, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        return Int64(text, radix: 8).flatMap { $0 >= 0 ? $0 : nil }
    }

    /// The `key=value` records of a PAX extended header, each `"<length> <key>=<value>\n"`.
    private static func paxRecords(_ data: [UInt8], refuse: (String) -> ModelDepotError) throws -> [(
        key: String, value: String
    )] {
        var records: [(key: String, value: String)] = []
        var rest = data[...]
        while !rest.isEmpty, rest.first != 0 {
            guard let space = rest.firstIndex(of: UInt8(ascii: " ")),
                let length = Int(String(decoding: rest[rest.startIndex..<space], as: UTF8.self)),
                length > space - rest.startIndex + 1, length <= rest.count,
                rest[rest.startIndex + length - 1] == UInt8(ascii: "\n"),
                let equals = rest[space..<rest.startIndex + length].firstIndex(of: UInt8(ascii: "="))
            else { throw refuse("an extended header is malformed") }
            records.append(
                (
                    String(decoding: rest[(space + 1)..<equals], as: UTF8.self),
                    String(decoding: rest[(equals + 1)..<(rest.startIndex + length - 1)], as: UTF8.self)
                ))
            rest = rest[(rest.startIndex + length)...]
        }
        return records
    }
}
