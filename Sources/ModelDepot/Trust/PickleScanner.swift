import Foundation
import ModelDepotCore

/// One global a pickle imports when it is loaded (`module.name`), with what loading it can do.
public struct PickleImport: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// How far an import can be trusted.
    public enum Verdict: String, Sendable, Hashable, Codable {
        /// Rebuilds tensors, arrays or containers; what checkpoints hold.
        case safe
        /// Neither known to be safe nor known to be dangerous: loading it runs that module's code.
        case unknown
        /// Runs commands, code, files or network access when loaded (`os.system`, `builtins.eval`, …).
        case dangerous
    }

    public var module: String
    public var name: String
    public var verdict: Verdict

    public var description: String { "\(module).\(name)" }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.description < rhs.description }
}

/// Reads a pickle's opcode stream without executing anything and lists the globals it would import.
///
/// Every opcode of protocols 0–5 is decoded with its argument, so the walk cannot be misled into reading data as
/// opcodes; `GLOBAL`/`INST` name their import inline, `STACK_GLOBAL` takes the two strings pushed before it
/// (through the memo too, as `torch.save` writes them).
public enum PickleScanner {
    /// How deep `MARK`s may nest before the pickle is refused (checkpoints use a handful).
    public static let maximumNesting = 10_000

    /// The globals `bytes` imports, in order of first appearance; a file of several pickles one after another (as
    /// old `torch.save` wrote) is read to its last `STOP`.
    ///
    /// - Throws: `invalidModelFile` naming the problem: an unknown opcode, a truncated pickle, an argument that
    ///   does not decode, or nesting deeper than ``maximumNesting``.
    public static func imports(in bytes: [UInt8]) throws -> [PickleImport] {
        do {
            return try scan(bytes)
        } catch {
            throw error.error
        }
    }

    /// Why a walk stopped: the bytes ran out (more of the file may hold the rest), or they are not a pickle.
    enum Failure: Error {
        case truncated(at: Int)
        case invalid(String, at: Int)

        var error: ModelDepotError {
            switch self {
            case .truncated(let offset):
                ModelDepotError(
                    .invalidModelFile,
                    "The pickle is truncated at byte \(offset); it cannot be judged, so it is refused.")
            case .invalid(let text, let offset):
                ModelDepotError(
                    .invalidModelFile, "The pickle \(text) at byte \(offset); it cannot be judged, so it is refused.")
            }
        }
    }

    static func scan(_ bytes: [UInt8]) throws(Failure) -> [PickleImport] {
        var reader = Reader(bytes: bytes)
        var found: [PickleImport] = []
        var seen = Set<String>()
        repeat {
            for (module, name) in try reader.walkOnePickle() where seen.insert("\(module).\(name)").inserted {
                found.append(PickleImport(module: module, name: name, verdict: PicklePolicy.verdict(module, name)))
            }
        } while reader.position < bytes.count && bytes[reader.position] == 0x80
        return found
    }

    struct Reader {
        let bytes: [UInt8]
        var position = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        func problem(_ text: String, at offset: Int) -> Failure { .invalid(text, at: offset) }

        mutating func take(_ count: Int) throws(Failure) -> ArraySlice<UInt8> {
            guard count >= 0 else { throw problem("gives a negative length", at: position) }
            guard count <= bytes.count - position else { throw .truncated(at: position) }
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

        mutating func line() throws(Failure) -> String {
            guard let end = bytes[position...].firstIndex(of: 0x0A) else { throw .truncated(at: position) }
            defer { position = end + 1 }
            return String(decoding: bytes[position..<end], as: UTF8.self)
        }

        /// Walks opcodes to the next `STOP` and returns the imports met.
        mutating func walkOnePickle() throws(Failure) -> [(String, String)] {
            var imports: [(String, String)] = []
            var strings: [String?] = []  // what was pushed, as far as strings go (nil: something else)
            var memo: [Int: String?] = [:]
            var nesting = 0
            func push(_ value: String?) {
                strings.append(value)
                if strings.count > 64 { strings.removeFirst(32) }
            }
            while true {
                let offset = position
                let opcode = try take(1).first!
                switch opcode {
                case UInt8(ascii: "."):  // STOP
                    return imports
                case UInt8(ascii: "c"), UInt8(ascii: "i"):  // GLOBAL, INST: module\nname\n
                    let module = try line()
                    let name = try line()
                    imports.append((module, name))
                    if opcode == UInt8(ascii: "i") { nesting -= 1 }
                    push(nil)
                case 0x93:  // STACK_GLOBAL: module and name are the two strings pushed last
                    guard strings.count >= 2, let module = strings[strings.count - 2], let name = strings.last!
                    else { throw problem("imports a global whose name is not a string", at: offset) }
                    strings.removeLast(2)
                    imports.append((module, name))
                    push(nil)
                case UInt8(ascii: "X"):  // BINUNICODE
                    push(String(decoding: try take(integer(4)), as: UTF8.self))
                case 0x8C:  // SHORT_BINUNICODE
                    push(String(decoding: try take(integer(1)), as: UTF8.self))
                case 0x8D:  // BINUNICODE8
                    push(String(decoding: try take(integer(8)), as: UTF8.self))
                case UInt8(ascii: "V"):  // UNICODE (raw-unicode-escaped line)
                    push(try line())
                case UInt8(ascii: "S"):  // STRING (a quoted repr)
                    let text = try line()
                    push(String(text.dropFirst().dropLast()))
                case UInt8(ascii: "U"):  // SHORT_BINSTRING
                    push(String(decoding: try take(integer(1)), as: UTF8.self))
                case UInt8(ascii: "T"):  // BINSTRING
                    push(String(decoding: try take(integer(4)), as: UTF8.self))
                case UInt8(ascii: "q"):  // BINPUT
                    memo[try integer(1)] = strings.last ?? nil
                case UInt8(ascii: "r"):  // LONG_BINPUT
                    memo[try integer(4)] = strings.last ?? nil
                case UInt8(ascii: "p"):  // PUT
                    memo[Int(try line()) ?? -1] = strings.last ?? nil
                case 0x94:  // MEMOIZE
                    memo[memo.count] = strings.last ?? nil
                case UInt8(ascii: "h"):  // BINGET
                    push(memo[try integer(1)] ?? nil)
                case UInt8(ascii: "j"):  // LONG_BINGET
                    push(memo[try integer(4)] ?? nil)
                case UInt8(ascii: "g"):  // GET
                    push(memo[Int(try line()) ?? -1] ?? nil)
                case UInt8(ascii: "("):  // MARK
                    nesting += 1
                    guard nesting <= PickleScanner.maximumNesting else {
                        throw problem("nests more than \(PickleScanner.maximumNesting) levels deep", at: offset)
                    }
                case UInt8(ascii: "t"), UInt8(ascii: "l"), UInt8(ascii: "d"), UInt8(ascii: "e"), UInt8(ascii: "u"),
                    UInt8(ascii: "o"), UInt8(ascii: "1"), 0x90, 0x91:
                    // Opcodes that consume a MARK.
                    nesting -= 1
                    push(nil)
                case 0x80:  // PROTO
                    let version = try integer(1)
                    guard version <= 5 else { throw problem("claims protocol \(version)", at: offset) }
                case UInt8(ascii: "K"), 0x82:  // BININT1, EXT1
                    _ = try take(1)
                    push(nil)
                case UInt8(ascii: "M"), 0x83:  // BININT2, EXT2
                    _ = try take(2)
                    push(nil)
                case UInt8(ascii: "J"), 0x84:  // BININT, EXT4
                    _ = try take(4)
                    push(nil)
                case UInt8(ascii: "G"):  // BINFLOAT
                    _ = try take(8)
                    push(nil)
                case 0x95:  // FRAME: a length, then opcodes as usual
                    _ = try take(8)
                case UInt8(ascii: "I"), UInt8(ascii: "L"), UInt8(ascii: "F"), UInt8(ascii: "P"):
                    // INT, LONG, FLOAT, PERSID: a line
                    _ = try line()
                    push(nil)
                case UInt8(ascii: "C"), 0x8A:  // SHORT_BINBYTES, LONG1
                    _ = try take(integer(1))
                    push(nil)
                case UInt8(ascii: "B"), 0x8B:  // BINBYTES, LONG4
                    _ = try take(integer(4))
                    push(nil)
                case 0x8E, 0x96:  // BINBYTES8, BYTEARRAY8
                    _ = try take(integer(8))
                    push(nil)
                case UInt8(ascii: "0"):  // POP
                    _ = strings.popLast()
                case UInt8(ascii: "2"):  // DUP
                    push(strings.last ?? nil)
                case UInt8(ascii: "N"), UInt8(ascii: "R"), UInt8(ascii: "a"),
                    UInt8(ascii: "b"), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: "s"), UInt8(ascii: ")"),
                    UInt8(ascii: "Q"), 0x81, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8F, 0x92, 0x97, 0x98:
                    // No argument: NONE, REDUCE, APPEND, BUILD, EMPTY_DICT, EMPTY_LIST, SETITEM,
                    // EMPTY_TUPLE, BINPERSID, NEWOBJ, TUPLE1-3, NEWTRUE, NEWFALSE, EMPTY_SET, NEWOBJ_EX,
                    // NEXT_BUFFER, READONLY_BUFFER.
                    push(nil)
                default:
                    throw problem(
                        "holds opcode 0x\(String(opcode, radix: 16)), which no pickle protocol defines", at: offset)
                }
            }
        }
    }
}
