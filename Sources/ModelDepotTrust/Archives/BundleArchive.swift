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
    package static let block = TarArchive.block
    /// The largest size ustar's 11 octal digits hold.
    static let ustarMaximumSize: Int64 = 0o77777777777

    package typealias Member = TarArchive.Member

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

    /// Every regular file of the bundle at `url`: a tar holding nothing but regular files and folders, each named by
    /// the lock or a repository path (``TarArchive/members(of:what:inside:strippingPrefixes:maximumMembers:accepts:)``).
    package static func members(of url: URL) throws -> [Member] {
        try TarArchive.members(of: url, what: "a bundle ModelDepot imports", inside: "the bundle") {
            $0 == ModelBundle.lockName || (try? RepoFilePath($0)) != nil
        }
    }
}
