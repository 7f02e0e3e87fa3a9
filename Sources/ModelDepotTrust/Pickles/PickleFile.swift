import Foundation
import ModelDepotCore

/// Whether a file is a Python pickle — judged by its bytes, never by its name — and what it imports.
///
/// A file is a pickle when walking it as one from its first byte reaches a `STOP`, or makes an import before it
/// fails or runs out (Python runs opcodes in order: those imports have run by the time it fails); a walk that fails
/// first is no pickle. Pickles hide in three more shapes: a ZIP as `torch.save` writes it since PyTorch 1.6 (every
/// `.pkl` entry, found through the central directory), a NumPy object array (`.npy` after its header, and `.npz`
/// entries, stored or deflated), and old `torch.save` streams of several pickles. Other binary formats are known by
/// their magic bytes (`KnownFormat`), and only an importing walk makes one of them a pickle.
public struct PickleFile: Sendable, Equatable {
    /// How the pickle is held.
    public enum Container: Sendable, Equatable {
        /// The file is a pickle of this protocol (0 for protocols 0 and 1, which do not say).
        case raw(protocol: Int)
        /// A ZIP (as PyTorch writes it); these entries are pickles.
        case torchZip(pickles: [String])
        /// A NumPy object array, pickled after its `.npy` header; in an `.npz`, these entries.
        case numpy(arrays: [String])
    }

    public var container: Container
    /// Every global the pickles import (from `sniff(_:)` only the dangerous ones its bytes show).
    public var imports: [PickleImport]

    package init(container: Container, imports: [PickleImport]) {
        self.container = container
        self.imports = imports
    }

    /// Whether loading it can run something known to be dangerous.
    public var isDangerous: Bool { imports.contains { $0.verdict == .dangerous } }

    /// One line for listings: `pickle (torch ZIP): imports torch._utils._rebuild_tensor_v2, collections.OrderedDict`,
    /// the dangerous imports first and marked.
    public var summary: String {
        let shape: String
        switch container {
        case .raw(let version): shape = "Python pickle (protocol \(version == 0 ? "0/1" : String(version)))"
        case .torchZip: shape = "Python pickle (PyTorch ZIP)"
        case .numpy: shape = "Python pickle (NumPy object array)"
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

    /// Extensions of text formats no loader unpickles: such files are not probed. Binary formats are probed and
    /// known by their magic bytes instead, whatever their names say.
    static let neverPickleExtensions: Set<String> = [
        "json", "jsonl", "txt", "md", "rst", "yaml", "yml", "toml", "ini", "cfg", "jinja", "py", "csv", "tsv",
        "tiktoken", "gitattributes", "gitignore", "sig", "html", "xml",
    ]

    /// Whether the file at `path` (in a repository or on disk) is worth reading to see if it is a pickle.
    public static func mayBePickle(_ path: String) -> Bool {
        !neverPickleExtensions.contains((path as NSString).pathExtension.lowercased())
    }

    /// How many leading bytes `sniff(_:)` looks at: enough for a ZIP's first entry, a `.npy` header and the start
    /// of a pickle's object graph.
    package static let sniffLength = 64 << 10

    /// Judges a file by its first bytes (all of it when shorter than `sniffLength`): nil when they cannot start
    /// a pickle. A pickle that is still a valid opcode stream where the bytes end counts; so does a ZIP, whose
    /// central directory at the end of the file is not in the prefix, unless it is all there (probe unpulled
    /// files with `ModelManager.pickles` instead, which reads that end too). Its imports are the dangerous ones seen.
    package static func sniff(_ prefix: [UInt8]) -> PickleFile? {
        var source = ProbedBytes(size: prefix.count < sniffLength ? Int64(prefix.count) : Int64(Int.max / 2))
        source.add(prefix, at: 0)
        do {
            return try examine(source, probing: true)
        } catch {
            if ZipEntries.isZip(prefix) || error is ProbedBytes.Missing {
                let first = ZipEntries.firstLocalName(prefix)
                return PickleFile(container: .torchZip(pickles: first.map { [$0] } ?? []), imports: [])
            }
            return PickleFile(container: .raw(protocol: 0), imports: [unjudged(error)])
        }
    }

    /// A stand-in import for a file that cannot be judged: it is as dangerous as anything.
    package static func unjudged(_ error: any Error) -> PickleImport {
        let reason = (error as? ModelDepotError)?.message ?? "\(error)"
        return PickleImport(module: PickleImport.untraced, name: "? (\(reason))", verdict: .dangerous)
    }

    /// Reads the file at `url`: nil when it is not a pickle; its imports when it is (every pickle of a stream, ZIP
    /// or NumPy object array).
    ///
    /// - Throws: `invalidModelFile` for a pickle that cannot be judged (truncated, an unknown opcode, an underflow,
    ///   nested too deep, imports before bytes Python cannot load, a damaged ZIP or one naming an entry twice) —
    ///   treat it as unsafe; file system errors.
    public static func inspect(_ url: URL) throws -> PickleFile? {
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw ModelDepotError(.fileSystem, "Cannot open \(url.path).")
        }
        defer { try? handle.close() }
        return try examine(try FileBytes(handle: handle), name: url.lastPathComponent, probing: false)
    }

    /// Judges the file in `source`. `probing` judges by what can be read cheaply (the start of a raw pickle, a ZIP's
    /// directory, `.npy` headers), returning only the dangerous imports seen; otherwise every pickle is read whole.
    ///
    /// - Throws: ``ProbedBytes/Missing`` when a probe needs bytes not fetched yet; `invalidModelFile`.
    package static func examine(_ source: any ByteSource, name: String = "The file", probing: Bool) throws
        -> PickleFile?
    {
        let head = try source.read(at: 0, count: Int(min(source.size, Int64(sniffLength))))
        if ZipEntries.isZip(head) { return try zip(source, name: name, probing: probing) }
        if head.starts(with: NumpyHeader.magic) {
            guard let header = try numpyHeader(head, source), header.holdsObjects,
                let file = try raw(source, from: header.dataOffset, format: nil, probing: probing)
            else { return nil }
            return PickleFile(container: .numpy(arrays: []), imports: file.imports)
        }
        return try raw(source, from: 0, format: KnownFormat.identify(head), probing: probing)
    }

    /// The `.npy` header at the start of `head`, read further from `source` when it is longer (up to 1 MiB).
    ///
    /// - Throws: `invalidModelFile` for a header longer than 1 MiB, which NumPy reads when it may unpickle.
    static func numpyHeader(_ head: [UInt8], _ source: any ByteSource) throws -> NumpyHeader? {
        var (header, needed) = NumpyHeader.parse(head)
        if header == nil, needed > head.count, Int64(needed) <= source.size {
            try refuseLongHeader(needed)
            (header, needed) = NumpyHeader.parse(try source.read(at: 0, count: needed))
        }
        return header
    }

    /// NumPy lifts its header limit when `allow_pickle` is on, so an object array may hide behind a header too long
    /// to read here: such a file cannot be judged.
    static func refuseLongHeader(_ needed: Int) throws {
        guard needed > 1 << 20 else { return }
        throw ModelDepotError(
            .invalidModelFile,
            "The NumPy header is \(needed) bytes long; an object array may follow it, so it cannot be judged and is refused."
        )
    }

    /// A pickle (or stream of pickles) starting at `start`; `format` is another format the magic bytes claim.
    static func raw(_ source: any ByteSource, from start: Int, format: KnownFormat?, probing: Bool) throws
        -> PickleFile?
    {
        let size = Int(min(source.size - Int64(start), Int64(Int.max / 2)))
        guard size > 0 else { return nil }
        // The pickles end at their last STOP and old checkpoints keep gigabytes of raw storage after them: read a
        // little, and more only while the walk runs out of bytes.
        var length = min(size, probing ? sniffLength : 1 << 20)
        while true {
            let bytes = try source.read(at: Int64(start), count: length)
            let walk = PickleScanner.walk(bytes, fileSize: size)
            if case .needsMore = walk.failure ?? walk.trailing ?? .truncated(at: 0), !probing,
                length < min(size, ZipEntries.largestPickle)
            {
                length = min(size, ZipEntries.largestPickle, length * 8)
                continue
            }
            let stillValid: Bool
            if case .needsMore = walk.failure { stillValid = true } else { stillValid = false }
            let isPickle =
                format == nil
                ? walk.stops > 0 || walk.madeImportableImport || (probing && stillValid)
                : walk.madeImportableImport
            guard isPickle else { return nil }
            var imports = walk.imports
            if let failure = walk.failure, !(probing && stillValid) {
                guard probing else { throw failure.error }
                imports.append(unjudged(failure.error))
            }
            let version = bytes.count >= 2 && bytes[0] == 0x80 ? Int(bytes[1]) : 0
            return PickleFile(
                container: .raw(protocol: version),
                imports: probing ? imports.filter { $0.verdict == .dangerous } : imports)
        }
    }

    /// A ZIP: every `.pkl` entry is a pickle (PyTorch finds `data.pkl` by name wherever it is), and every `.npy`
    /// entry holding objects (`np.savez`, `np.savez_compressed`).
    ///
    /// PyTorch finds `data.pkl` case-insensitively (miniz compares names without case), and NumPy reads an `.npz`
    /// member by any name (`npz["evil"]` is an array when its bytes start like one): so `.pkl` and `.npy` count in
    /// any case, and in a ZIP without pickles every member whose bytes start like a `.npy` is looked at.
    static func zip(_ source: any ByteSource, name: String, probing: Bool) throws -> PickleFile? {
        let entries = try ZipEntries(source: source, name: name)
        let pickles = entries.names.filter { $0.lowercased().hasSuffix(".pkl") }
        var arrays: [(String, NumpyHeader)] = []
        for entry in entries.names where entry.lowercased().hasSuffix(".npy") || pickles.isEmpty {
            var head = try entries.bytes(of: entry, limit: 4096)
            var (header, needed) = NumpyHeader.parse(head)
            if header == nil, needed > head.count, head.starts(with: NumpyHeader.magic) {
                try refuseLongHeader(needed)
                head = try entries.bytes(of: entry, limit: needed)
                (header, needed) = NumpyHeader.parse(head)
            }
            if let header, header.holdsObjects { arrays.append((entry, header)) }
        }
        guard !pickles.isEmpty || !arrays.isEmpty else { return nil }
        let container: Container =
            pickles.isEmpty ? .numpy(arrays: arrays.map(\.0)) : .torchZip(pickles: pickles + arrays.map(\.0))
        guard !probing else { return PickleFile(container: container, imports: []) }
        var imports: [PickleImport] = []
        var bodies = pickles.map { ($0, 0) }
        bodies += arrays.map { ($0.0, $0.1.dataOffset) }
        for (entry, offset) in bodies {
            let bytes = try entries.bytes(of: entry)
            for found in try PickleScanner.imports(in: Array(bytes[min(offset, bytes.count)...]))
            where !imports.contains(found) {
                imports.append(found)
            }
        }
        return PickleFile(container: container, imports: imports)
    }
}
