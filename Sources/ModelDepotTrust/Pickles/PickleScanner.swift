import Foundation
import ModelDepotCore

/// Reads a pickle's opcode stream without executing anything and lists the globals it would import.
///
/// The walk keeps the unpickler's stack, MARK stack and memo as CPython's `pickle._Unpickler` does — every opcode of
/// protocols 0–5 pops and pushes what Python's does — so `STACK_GLOBAL` takes exactly the two values Python takes,
/// and what Python refuses (an underflow, a missing MARK, an unset memo index) is refused here too. Values are known
/// only as far as the pickle writes them (`PickleValue`); an import whose name is not a string constant is
/// dangerous.
package enum PickleScanner {
    /// How deep `MARK`s may nest before the pickle is refused (checkpoints use a handful).
    package static let maximumNesting = 10_000
    /// How many memo entries a pickle may make before it is refused (a large checkpoint makes some 100 000).
    static let maximumMemo = 1 << 22

    /// The globals `bytes` imports, in order of first appearance; a file of several pickles one after another (as
    /// old `torch.save` wrote) is read pickle by pickle up to the first bytes that are not one.
    ///
    /// - Throws: `invalidModelFile` naming the problem and its offset: an unknown opcode, a truncated pickle, an
    ///   argument that does not decode, a stack underflow, a missing MARK or memo entry, or nesting deeper than
    ///   ``maximumNesting``.
    package static func imports(in bytes: [UInt8]) throws -> [PickleImport] {
        do {
            return try scan(bytes)
        } catch {
            throw error.error
        }
    }

    /// Why a walk stopped: the bytes ran out (more of the file may hold the rest), or they are not a pickle.
    enum Failure: Error, Equatable {
        /// The file ends inside the pickle.
        case truncated(at: Int)
        /// The bytes read so far end inside the pickle, and the file goes on: read more to judge it.
        case needsMore(at: Int)
        case invalid(String, at: Int)

        var error: ModelDepotError {
            switch self {
            case .truncated(let offset), .needsMore(let offset):
                ModelDepotError(
                    .invalidModelFile,
                    "The pickle is truncated at byte \(offset); it cannot be judged, so it is refused.")
            case .invalid(let text, let offset):
                ModelDepotError(
                    .invalidModelFile, "The pickle \(text) at byte \(offset); it cannot be judged, so it is refused.")
            }
        }
    }

    /// What walking a stream of pickles found.
    struct Walk {
        /// Every import made, in order, including those made before a failure (Python has run them by then).
        var imports: [PickleImport] = []
        /// Whether an import names a module and attribute Python could find (see ``PickleText/isImportable``),
        /// rather than bytes of another format that merely decode as `GLOBAL`.
        var madeImportableImport = false
        /// How many pickles ended with `STOP`.
        var stops = 0
        /// Why the first pickle did not reach its `STOP`; nil when it did.
        var failure: Failure?
        /// Why the walk ended after the last complete pickle (bytes that are not a pickle, or that ran out).
        var trailing: Failure?

        var madeImports: Bool { !imports.isEmpty }
    }

    /// The imports of every pickle in `bytes`; throws when the first pickle does not reach its `STOP`.
    static func scan(_ bytes: [UInt8]) throws(Failure) -> [PickleImport] {
        let walk = walk(bytes)
        if let failure = walk.failure { throw failure }
        return walk.imports
    }

    /// Walks the pickles in `bytes` one after another. Old `torch.save` files hold five (magic number, protocol,
    /// system info, the data, storage keys) of any protocols, then raw storage bytes: the walk goes on while a
    /// pickle follows, and the first bytes that fail are where the pickles end (imports met in them are kept).
    ///
    /// `fileSize` is the size of the file `bytes` begin: a walk that reaches the end of `bytes` before it fails
    /// `needsMore`.
    static func walk(_ bytes: [UInt8], fileSize: Int? = nil) -> Walk {
        var walk = Walk()
        var seen = Set<PickleImport>()
        var reader = Reader(bytes: bytes, fileSize: fileSize ?? bytes.count)
        var first = true
        while first || reader.position < bytes.count {
            var found: [(PickleImport, importable: Bool)] = []
            let failure: Failure?
            do {
                try reader.walkOnePickle { found.append($0) }
                failure = nil
            } catch {
                failure = error
            }
            // Bytes after the last pickle: keep the imports Python could make (raw storage can look like opcodes),
            // each on its own — a later pickle that imports os.system and then fails has run it.
            for (item, importable) in found where failure == nil || first || importable {
                if seen.insert(item).inserted { walk.imports.append(item) }
                walk.madeImportableImport = walk.madeImportableImport || importable
            }
            guard let failure else {
                walk.stops += 1
                first = false
                continue
            }
            if first { walk.failure = failure } else { walk.trailing = failure }
            break
        }
        return walk
    }

    struct Reader {
        let bytes: [UInt8]
        /// How long the file is: the walk may need bytes past `bytes` up to here.
        let fileSize: Int
        var position = 0

        init(bytes: [UInt8], fileSize: Int) {
            self.bytes = bytes
            self.fileSize = max(fileSize, bytes.count)
        }

        /// The bytes ran out at `offset`: the file is truncated, or only its start was read.
        func ranOut(at offset: Int, needing count: Int = 1) -> Failure {
            count <= fileSize - offset && bytes.count < fileSize ? .needsMore(at: offset) : .truncated(at: offset)
        }

        func problem(_ text: String, at offset: Int) -> Failure { .invalid(text, at: offset) }

        mutating func take(_ count: Int) throws(Failure) -> ArraySlice<UInt8> {
            guard count >= 0 else { throw problem("gives a negative length", at: position) }
            guard count <= bytes.count - position else { throw ranOut(at: position, needing: count) }
            defer { position += count }
            return bytes[position..<position + count]
        }

        mutating func integer(_ width: Int) throws(Failure) -> Int {
            let slice = try take(width)
            var value: UInt64 = 0
            for (shift, byte) in slice.enumerated() { value |= UInt64(byte) << (8 * UInt64(shift)) }
            guard value <= UInt64(Int.max) else { throw problem("gives a length too large", at: position - width) }
            return Int(value)
        }

        /// A little-endian signed 32-bit integer (BINSTRING's and LONG4's lengths, EXT4's code).
        mutating func signed32() throws(Failure) -> Int {
            Int(Int32(truncatingIfNeeded: try integer(4)))
        }

        /// A line without its newline (text opcodes' arguments).
        mutating func line() throws(Failure) -> ArraySlice<UInt8> {
            guard let end = bytes[position...].firstIndex(of: 0x0A) else { throw ranOut(at: position) }
            defer { position = end + 1 }
            return bytes[position..<end]
        }

        /// A line as UTF-8, as GLOBAL and INST decode their module and name.
        mutating func utf8Line(at offset: Int) throws(Failure) -> String {
            guard let text = String(validating: try line(), as: UTF8.self) else {
                throw problem("names a global that is not UTF-8", at: offset)
            }
            return text
        }

        /// A decimal line (GET, PUT) as Python's `int()` reads it — surrounding whitespace (a CRLF's carriage return
        /// too) and underscores between digits allowed; nil when it is no integer.
        mutating func decimalLine() throws(Failure) -> Int? {
            let text = try line().filter { $0 != UInt8(ascii: "_") }
            let trimmed = text.drop { Self.isSpace($0) }.reversed().drop { Self.isSpace($0) }.reversed()
            return Int(String(decoding: trimmed, as: UTF8.self))
        }

        /// Whether `byte` is ASCII whitespace as Python's `int()` strips it.
        static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

        /// INT's and LONG's line, which Python reads with `int(text, 0)` (`0x10`, `0o7`, `0b1`, `1_000`, a trailing
        /// `L`): whether it can be one. Lenient — walking on where Python would stop only names more imports.
        mutating func integerLine() throws(Failure) -> Bool {
            let text = try line().filter { !Self.isSpace($0) }
            return !text.isEmpty
                && text.allSatisfy {
                    (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                        || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-")
                }
        }

        /// A string constant of `count` UTF-8 bytes (BINUNICODE and friends, SHORT_BINSTRING and BINSTRING, which
        /// Python 3 decodes too); bytes Python would not decode make a value the scan does not know.
        mutating func utf8(_ count: Int) throws(Failure) -> PickleValue {
            String(validating: try take(count), as: UTF8.self).map(PickleValue.string) ?? .unknown
        }

        /// Walks opcodes to the next `STOP`, telling `record` each import as it is made.
        mutating func walkOnePickle(_ record: ((PickleImport, importable: Bool)) -> Void) throws(Failure) {
            var stack = PickleStack()
            var memo: [Int: PickleValue] = [:]
            var offset = position
            func imported(_ module: String, _ name: String) {
                let verdict = PicklePolicy.verdict(module, name)
                record(
                    (
                        PickleImport(module: module, name: name, verdict: verdict),
                        PickleText.isImportable(module) && PickleText.isImportable(name)
                    ))
            }
            func put(_ index: Int) throws(Failure) {
                guard index >= 0 else { throw problem("stores to a negative memo index", at: offset) }
                guard memo.count < PickleScanner.maximumMemo || memo[index] != nil else {
                    throw problem("memoizes more than \(PickleScanner.maximumMemo) values", at: offset)
                }
                memo[index] = try stack.top()
            }
            func get(_ index: Int?) throws(Failure) {
                guard let index, let value = memo[index] else {
                    throw problem("reads a memo entry that was never stored", at: offset)
                }
                try stack.push(value)
            }
            while true {
                offset = position
                stack.offset = offset
                let opcode = try take(1).first!
                switch opcode {
                case UInt8(ascii: "."):  // STOP: returns the top value
                    _ = try stack.pop()
                    return
                case 0x80:  // PROTO
                    let version = try integer(1)
                    guard version <= 5 else { throw problem("claims protocol \(version)", at: offset) }
                case 0x95:  // FRAME: a length, then opcodes as usual
                    _ = try integer(8)
                case UInt8(ascii: "c"), UInt8(ascii: "i"):  // GLOBAL, INST: module\nname\n
                    let module = try utf8Line(at: offset)
                    let name = try utf8Line(at: offset)
                    imported(module, name)
                    if opcode == UInt8(ascii: "i") {
                        _ = try stack.popMark()  // the arguments the class is called with
                    }
                    try stack.push(.unknown)
                case 0x93:  // STACK_GLOBAL: Python requires two str; anything else cannot be traced
                    let operands = try stack.pop(2)
                    if case .string(let module) = operands[0], case .string(let name) = operands[1] {
                        imported(module, name)
                    } else {
                        var module: String?
                        var name: String?
                        if case .string(let known) = operands[0] { module = known }
                        if case .string(let known) = operands[1] { name = known }
                        record((PickleImport.untraceable(module, name), operands.allSatisfy { $0 != .other }))
                    }
                    try stack.push(.unknown)
                case 0x82, 0x83, 0x84:  // EXT1, EXT2, EXT4: copyreg's extension registry names the import
                    let code = opcode == 0x82 ? try integer(1) : opcode == 0x83 ? try integer(2) : try signed32()
                    guard code > 0 else { throw problem("gives extension code \(code)", at: offset) }
                    record((PickleImport.untraceable(nil, "? (extension code \(code))"), true))
                    try stack.push(.unknown)
                case UInt8(ascii: "X"):  // BINUNICODE
                    try stack.push(try utf8(integer(4)))
                case 0x8C:  // SHORT_BINUNICODE
                    try stack.push(try utf8(integer(1)))
                case 0x8D:  // BINUNICODE8
                    try stack.push(try utf8(integer(8)))
                case UInt8(ascii: "U"):  // SHORT_BINSTRING
                    try stack.push(try utf8(integer(1)))
                case UInt8(ascii: "T"):  // BINSTRING
                    let length = try signed32()
                    guard length >= 0 else { throw problem("gives a negative length", at: offset) }
                    try stack.push(try utf8(length))
                case UInt8(ascii: "V"):  // UNICODE (raw-unicode-escaped line)
                    try stack.push(PickleText.unicode(try line()).map(PickleValue.string) ?? .unknown)
                case UInt8(ascii: "S"):  // STRING (a quoted repr)
                    let (quoted, text) = PickleText.string(try line())
                    guard quoted else { throw problem("has a STRING argument that is not quoted", at: offset) }
                    try stack.push(text.map(PickleValue.string) ?? .unknown)
                case UInt8(ascii: "p"):  // PUT
                    try put(try decimalLine() ?? -1)
                case UInt8(ascii: "q"):  // BINPUT
                    try put(try integer(1))
                case UInt8(ascii: "r"):  // LONG_BINPUT
                    try put(try integer(4))
                case 0x94:  // MEMOIZE: the next index is the memo's size
                    try put(memo.count)
                case UInt8(ascii: "g"):  // GET
                    try get(try decimalLine())
                case UInt8(ascii: "h"):  // BINGET
                    try get(try integer(1))
                case UInt8(ascii: "j"):  // LONG_BINGET
                    try get(try integer(4))
                case UInt8(ascii: "("):  // MARK
                    try stack.mark()
                case UInt8(ascii: "1"):  // POP_MARK
                    _ = try stack.popMark()
                case UInt8(ascii: "0"):  // POP (the MARK itself when the frame is empty)
                    try stack.popValueOrMark()
                case UInt8(ascii: "2"):  // DUP
                    try stack.push(try stack.top())
                case UInt8(ascii: "t"), UInt8(ascii: "l"), 0x91:  // TUPLE, LIST, FROZENSET
                    _ = try stack.popMark()
                    try stack.push(.other)
                case UInt8(ascii: "d"):  // DICT: key, value pairs
                    guard try stack.popMark().count % 2 == 0 else {
                        throw problem("builds a dict of an odd number of items", at: offset)
                    }
                    try stack.push(.other)
                case 0x85:  // TUPLE1
                    try stack.replaceTop(with: .other)
                case 0x86, 0x87:  // TUPLE2, TUPLE3
                    _ = try stack.pop(opcode == 0x86 ? 2 : 3)
                    try stack.push(.other)
                case UInt8(ascii: "a"):  // APPEND: value onto the list below it
                    _ = try stack.pop()
                    _ = try stack.top()
                case UInt8(ascii: "e"), 0x90:  // APPENDS, ADDITEMS: the frame's values into the object below
                    _ = try stack.popMark()
                    _ = try stack.top()
                case UInt8(ascii: "s"):  // SETITEM
                    _ = try stack.pop(2)
                    _ = try stack.top()
                case UInt8(ascii: "u"):  // SETITEMS
                    guard try stack.popMark().count % 2 == 0 else {
                        throw problem("sets an odd number of dict items", at: offset)
                    }
                    _ = try stack.top()
                case UInt8(ascii: "b"):  // BUILD: state onto the object below (which may run __setstate__)
                    _ = try stack.pop()
                    _ = try stack.top()
                case UInt8(ascii: "R"):  // REDUCE: callable(*args)
                    _ = try stack.pop()
                    try stack.replaceTop(with: .unknown)
                case 0x81:  // NEWOBJ: cls.__new__(cls, *args)
                    _ = try stack.pop(2)
                    try stack.push(.unknown)
                case 0x92:  // NEWOBJ_EX: cls.__new__(cls, *args, **kwargs)
                    _ = try stack.pop(3)
                    try stack.push(.unknown)
                case UInt8(ascii: "o"):  // OBJ: the frame is a class and its arguments
                    guard try !stack.popMark().isEmpty else {
                        throw problem("builds an object without a class (OBJ of an empty MARK)", at: offset)
                    }
                    try stack.push(.unknown)
                case UInt8(ascii: "P"):  // PERSID: the loader's persistent_load makes the value
                    _ = try line()
                    try stack.push(.unknown)
                case UInt8(ascii: "Q"):  // BINPERSID
                    try stack.replaceTop(with: .unknown)
                case 0x97:  // NEXT_BUFFER: an out-of-band buffer the loader passes
                    try stack.push(.unknown)
                case 0x98:  // READONLY_BUFFER: the top value, made read-only
                    _ = try stack.top()
                case UInt8(ascii: "N"), UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "}"), 0x88, 0x89, 0x8F:
                    // NONE, EMPTY_TUPLE, EMPTY_LIST, EMPTY_DICT, NEWTRUE, NEWFALSE, EMPTY_SET
                    try stack.push(.other)
                case UInt8(ascii: "I"), UInt8(ascii: "L"):  // INT, LONG: a decimal line
                    guard try integerLine() || opcode == UInt8(ascii: "L") else {
                        throw problem("has an INT argument that is no integer", at: offset)
                    }
                    try stack.push(.other)
                case UInt8(ascii: "F"):  // FLOAT: a line
                    _ = try line()
                    try stack.push(.other)
                case UInt8(ascii: "K"):  // BININT1
                    _ = try take(1)
                    try stack.push(.other)
                case UInt8(ascii: "M"):  // BININT2
                    _ = try take(2)
                    try stack.push(.other)
                case UInt8(ascii: "J"):  // BININT
                    _ = try take(4)
                    try stack.push(.other)
                case UInt8(ascii: "G"):  // BINFLOAT
                    _ = try take(8)
                    try stack.push(.other)
                case 0x8A:  // LONG1
                    _ = try take(integer(1))
                    try stack.push(.other)
                case 0x8B:  // LONG4
                    let length = try signed32()
                    guard length >= 0 else { throw problem("gives a negative length", at: offset) }
                    _ = try take(length)
                    try stack.push(.other)
                case UInt8(ascii: "C"):  // SHORT_BINBYTES
                    _ = try take(integer(1))
                    try stack.push(.other)
                case UInt8(ascii: "B"):  // BINBYTES
                    _ = try take(integer(4))
                    try stack.push(.other)
                case 0x8E, 0x96:  // BINBYTES8, BYTEARRAY8
                    _ = try take(integer(8))
                    try stack.push(.other)
                default:
                    throw problem(
                        "holds opcode 0x\(String(opcode, radix: 16)), which no pickle protocol defines", at: offset)
                }
            }
        }
    }
}
