import Foundation
import ModelDepotCore

/// Whether a file is a Python pickle — judged by its bytes, never by its name — and what it imports.
///
/// Two shapes hold pickles in model repositories: a raw pickle (`*.pkl`, and `*.bin`/`*.pt` from `torch.save` before
/// PyTorch 1.6), which starts with the `PROTO` opcode; and a ZIP as `torch.save` writes it since, whose first entry is
/// `<name>/data.pkl`. Other files named `.bin` (CTranslate2's `model.bin`, raw tensors) are neither.
public struct PickleFile: Sendable, Equatable {
    /// How the pickle is held.
    public enum Container: Sendable, Equatable {
        /// The file is a pickle of this protocol.
        case raw(protocol: Int)
        /// A PyTorch ZIP checkpoint; these entries are pickles.
        case torchZip(pickles: [String])
    }

    public var container: Container
    /// Every global the pickles import (empty until the whole file is read: ``sniff(_:)`` only looks at the start).
    public var imports: [PickleImport]

    /// Whether loading it can run something known to be dangerous.
    public var isDangerous: Bool { imports.contains { $0.verdict == .dangerous } }

    /// One line for listings: `pickle (torch ZIP): imports torch._utils._rebuild_tensor_v2, collections.OrderedDict`,
    /// the dangerous imports first and marked.
    public var summary: String {
        let shape: String
        switch container {
        case .raw(let version): shape = "Python pickle (protocol \(version))"
        case .torchZip: shape = "Python pickle (PyTorch ZIP)"
        }
        let dangerous = imports.filter { $0.verdict == .dangerous }.map(\.description)
        if !dangerous.isEmpty {
            return "DANGEROUS \(shape): loading it runs \(dangerous.joined(separator: ", "))"
        }
        let unknown = imports.filter { $0.verdict == .unknown }.map(\.description)
        if !unknown.isEmpty { return "\(shape): loading it runs code from \(unknown.joined(separator: ", "))" }
        return imports.isEmpty
            ? "\(shape); can run code when loaded" : "\(shape) of tensors only; can run code when loaded"
    }

    /// Extensions of formats that are never pickles (text, or formats read elsewhere): such files are not probed.
    static let neverPickleExtensions: Set<String> = [
        "json", "txt", "md", "safetensors", "gguf", "yaml", "yml", "jinja", "png", "jpg", "jpeg", "gif", "py",
        "model", "tiktoken", "csv", "onnx", "mlmodel", "wav", "mp3", "flac", "gitattributes", "sig",
    ]

    /// Whether the file at `path` (in a repository or on disk) is worth reading to see if it is a pickle.
    public static func mayBePickle(_ path: String) -> Bool {
        !neverPickleExtensions.contains((path as NSString).pathExtension.lowercased())
    }

    /// How many leading bytes ``sniff(_:)`` needs (a ZIP's first local header and its entry name).
    public static let sniffLength = 512

    /// Judges a file by its first bytes: a pickle's `PROTO` opcode (protocol 2–5, then a valid opcode), or a ZIP
    /// whose first entry is `…/data.pkl`. Nil for anything else.
    public static func sniff(_ prefix: [UInt8]) -> PickleFile? {
        if prefix.count >= 3, prefix[0] == 0x80, (2...5).contains(prefix[1]),
            opensPickle(prefix[2])
        {
            return PickleFile(container: .raw(protocol: Int(prefix[1])), imports: [])
        }
        if let first = ZipEntries.firstLocalName(prefix), first.hasSuffix("/data.pkl") || first == "data.pkl" {
            return PickleFile(container: .torchZip(pickles: [first]), imports: [])
        }
        return nil
    }

    /// Opcodes a pickle's body starts with after `PROTO`: a frame, a container, a mark, a global or a value (old
    /// `torch.save` files open with a `LONG1` magic number).
    static func opensPickle(_ byte: UInt8) -> Bool {
        let openers: Set<UInt8> = [
            0x7D, 0x5D, 0x28, 0x29, 0x63, 0x4B, 0x4A, 0x4D, 0x47, 0x58, 0x4E, 0x55, 0x42, 0x43, 0x54, 0x88, 0x89,
            0x8A, 0x8C, 0x93, 0x95,
        ]
        return openers.contains(byte)
    }

    /// Reads the file at `url`: nil when it is not a pickle; its imports when it is (every `.pkl` entry of a
    /// PyTorch ZIP).
    ///
    /// - Throws: `invalidModelFile` for a pickle that cannot be judged (truncated, an unknown opcode, nested too
    ///   deep, a compressed or oversized entry) — treat it as unsafe; file system errors.
    public static func inspect(_ url: URL) throws -> PickleFile? {
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw ModelDepotError(.fileSystem, "Cannot open \(url.path).")
        }
        defer { try? handle.close() }
        let prefix = [UInt8](try handle.read(upToCount: sniffLength) ?? Data())
        guard var file = sniff(prefix) else { return nil }
        switch file.container {
        case .raw:
            // The pickles end at their last STOP and old checkpoints keep gigabytes of raw storage after them: read
            // a little, and more only while the walk runs out of bytes.
            let size = Int(try handle.seekToEnd())
            var length = min(size, 1 << 20)
            while true {
                try handle.seek(toOffset: 0)
                let bytes = [UInt8](try handle.read(upToCount: length) ?? Data())
                do {
                    file.imports = try PickleScanner.scan(bytes)
                    break
                } catch .truncated where length < min(size, ZipEntries.largestPickle) {
                    length = min(size, ZipEntries.largestPickle, length * 8)
                } catch {
                    throw error.error
                }
            }
        case .torchZip:
            let entries = try ZipEntries(handle: handle, name: url.lastPathComponent)
            let pickles = entries.names.filter { $0.hasSuffix(".pkl") }
            var imports: [PickleImport] = []
            for name in pickles {
                for found in try PickleScanner.imports(in: try entries.storedBytes(of: name))
                where !imports.contains(found) {
                    imports.append(found)
                }
            }
            file.container = .torchZip(pickles: pickles)
            file.imports = imports
        }
        return file
    }
}
