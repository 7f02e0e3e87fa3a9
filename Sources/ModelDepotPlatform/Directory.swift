#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One entry of a folder as `readdir(3)` reports it: no `stat` per entry, so listing large folders stays cheap.
package struct DirectoryEntry: Sendable, Hashable {
    package var name: String
    package var kind: FileStatus.Kind

    package init(name: String, kind: FileStatus.Kind) {
        self.name = name
        self.kind = kind
    }
}

/// Folder listings and walks over `opendir`/`readdir`, the same on Linux and Apple platforms (both fill
/// `d_type`; where a file system reports `DT_UNKNOWN`, one `lstat` settles the kind).
package enum Directory {
    /// The entries of `path` (`.` and `..` excluded) with their kinds; links are not followed. Empty when the
    /// folder cannot be read.
    package static func entries(_ path: String) -> [DirectoryEntry] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var entries: [DirectoryEntry] = []
        while let entry = readdir(directory) {
            // `d_name` is a fixed C array (256 bytes in glibc, 1024 in Darwin's `<sys/dirent.h>`).
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                    String(cString: $0)
                }
            }
            guard name != "." && name != ".." else { continue }
            let kind: FileStatus.Kind
            switch Int32(entry.pointee.d_type) {
            case Int32(DT_REG): kind = .file
            case Int32(DT_DIR): kind = .folder
            case Int32(DT_LNK): kind = .link
            case Int32(DT_UNKNOWN):
                guard let status = FileStatus(path: path + "/" + name, followingLinks: false) else { continue }
                kind = status.kind
            default: kind = .other
            }
            entries.append(DirectoryEntry(name: name, kind: kind))
        }
        return entries
    }

    /// The names in `path`, `.` and `..` excluded; empty when it cannot be read.
    package static func names(_ path: String) -> [String] {
        entries(path).map(\.name)
    }

    /// Paths (relative, `/`-separated) of everything below `root` that is not a folder, with whether each is a
    /// link. Costs no `stat` per file; links are not followed (a link to a folder shows up here as a link).
    package static func walk(_ root: String) -> [(path: String, isLink: Bool)] {
        var result: [(String, Bool)] = []
        var pending = [""]
        while let relative = pending.popLast() {
            let folder = relative.isEmpty ? root : root + "/" + relative
            for entry in entries(folder) {
                let child = relative.isEmpty ? entry.name : relative + "/" + entry.name
                if entry.kind == .folder {
                    pending.append(child)
                } else {
                    result.append((child, entry.kind == .link))
                }
            }
        }
        return result
    }
}
