#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One entry of a folder as `readdir` reports it: no `stat` per entry, so listing large folders stays cheap.
public struct FolderEntry: Sendable, Hashable {
    public enum Kind: Sendable, Hashable { case file, folder, link, other }

    public var name: String
    public var kind: Kind

    /// The entries of `path` (`.` and `..` excluded), with their kinds; `lstat` is used only where the file
    /// system does not report the kind. Empty when the folder cannot be read.
    public static func list(_ path: String) -> [FolderEntry] {
        CacheScanner.entries(path).map { name, type in
            let kind: Kind
            switch Int32(type) {
            case Int32(DT_REG): kind = .file
            case Int32(DT_DIR): kind = .folder
            case Int32(DT_LNK): kind = .link
            case Int32(DT_UNKNOWN):
                switch CacheScanner.kind(of: path + "/" + name, following: false) {
                case .file: kind = .file
                case .folder: kind = .folder
                case .link: kind = .link
                default: kind = .other
                }
            default: kind = .other
            }
            return FolderEntry(name: name, kind: kind)
        }
    }
}
