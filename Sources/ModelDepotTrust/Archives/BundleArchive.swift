import Foundation
import ModelDepotCore

/// A bundle as one POSIX tar file, written and read here so that nothing in it is trusted: only regular files and
/// folders, names that stay inside the bundle, each named by the lock; a link, a device, a sparse file or a name
/// the lock does not know is refused.
///
/// Names longer than ustar's 100 + 155 bytes and files of 8 GiB or more (ustar's size field holds 11 octal
/// digits) get a PAX extended header (`x`) before their own, as GNU tar and Python's `tarfile` write and read
/// them. When reading, GNU tar's long names (`L`) and base-256 sizes are understood too, so a bundle repacked with
/// either tool imports.
package enum BundleArchive {
    package static let block = 512
    /// The largest size ustar's 11 octal digits hold.
    static let ustarMaximumSize: Int64 = 0o77777777777
    /// The most bytes of extended-header data read for one member (names are at most a few KiB).
    static let extendedHeaderLimit = 1 << 20

    /// One regular file in an archive: where its bytes start and how many there are.
    package struct Member {
        package var name: String
        package var offset: Int64
        package var size: Int64
    }

    /// The header blocks of a regular file `name` of `size` bytes: its ustar header, preceded by a PAX extended
    /// header when the name or the size does not fit ustar.
    package static func headers(name: String, size: Int64) -> [UInt8] {
        let split = ustarSplit(name)
        var records: [(String, String)] = []
        if split == nil { records.append(("path", name)) }
        if size > ustarMaximumSize { records.append(("size", String(size))) }
        let own = ustarHeader(
            name: split?.name ?? String(decoding: name.utf8.suffix(100), as: UTF8.self), prefix: split?.prefix ?? "",
            size: size > ustarMaximumSize ? 0 : size, type: UInt8(ascii: "0"))
        guard !records.isEmpty else { return own }
        let data = Array(records.map(paxRecord).joined().utf8)
        let extended = ustarHeader(
            name: "PaxHeaders/" + String(decoding: name.utf8.suffix(80), as: UTF8.self), prefix: "",
            size: Int64(data.count), type: UInt8(ascii: "x"))
        return extended + data + padding(after: Int64(data.count)) + own
    }

    /// Zero bytes that fill the block a member of `size` bytes ends in.
    package static func padding(after size: Int64) -> [UInt8] {
        let rest = Int(size % Int64(block))
        return rest == 0 ? [] : [UInt8](repeating: 0, count: block - rest)
    }

    /// Where ustar cuts `name` into a prefix of at most 155 bytes and a name of at most 100, at a `/`; nil when no
    /// cut fits.
    private static func ustarSplit(_ name: String) -> (prefix: String, name: String)? {
        if name.utf8.count <= 100 { return ("", name) }
        let cut = name.indices.filter { name[$0] == "/" }.last {
            name[..<$0].utf8.count <= 155 && name[name.index(after: $0)...].utf8.count <= 100
        }
        return cut.map { (String(name[..<$0]), String(name[name.index(after: $0)...])) }
    }

    /// One PAX record, `"<length> <key>=<value>\n"`, whose length counts its own digits.
    private static func paxRecord(_ key: String, _ value: String) -> String {
        let body = " \(key)=\(value)\n".utf8.count
        var length = body + 1
        while String(length).count + body != length { length = String(length).count + body }
        return "\(length) \(key)=\(value)\n"
    }

    private static func ustarHeader(name: String, prefix: String, size: Int64, type: UInt8) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: block)
        func put(_ text: String, at offset: Int, width: Int) {
            for (index, byte) in text.utf8.prefix(width).enumerated() { bytes[offset + index] = byte }
        }
        func octal(_ value: Int64, width: Int) -> String {
            let digits = String(value, radix: 8)
            return String(repeating: "0", count: max(0, width - 1 - digits.count)) + digits
        }
        put(name, at: 0, width: 100)
        put(octal(0o644, width: 8), at: 100, width: 7)
        put(octal(0, width: 8), at: 108, width: 7)
        put(octal(0, width: 8), at: 116, width: 7)
        put(octal(size, width: 12), at: 124, width: 11)
        put(octal(0, width: 12), at: 136, width: 11)
        put("        ", at: 148, width: 8)
        bytes[156] = type
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
    package static func members(of url: URL) throws -> [Member] {
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
            ModelDepotError(.invalidArgument, "\(url.lastPathComponent) is not a bundle ModelDepot imports: \(why).")
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
                guard !clean.hasPrefix("/"), !clean.split(separator: "/").contains(".."),
                    clean == ModelBundle.lockName || (try? RepoFilePath(clean)) != nil
                else { throw refuse("it holds \(name), a path that leaves the bundle") }
                members.append(Member(name: clean, offset: start, size: size))
            case UInt8(ascii: "5"):
                break
            case UInt8(ascii: "x"), UInt8(ascii: "g"):
                guard size <= extendedHeaderLimit else {
                    throw refuse("an extended header at byte \(start) is too big")
                }
                let records = try paxRecords(read(Int(size), at: start), refuse: refuse)
                if let sparse = records.first(where: { $0.key.hasPrefix("GNU.sparse") }) {
                    throw refuse("it holds a sparse file (\(sparse.key)); bundles hold plain files only")
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
                throw refuse("it holds a link, \(name); bundles hold plain files only")
            default:
                throw refuse(
                    "it holds \(name) of type '\(Character(UnicodeScalar(kind)))'; bundles hold plain files only")
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
