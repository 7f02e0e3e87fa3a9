import ModelDepotCore

/// A value on the unpickler's stack, as far as a scan can know it without running anything.
enum PickleValue: Sendable, Equatable {
    /// A `str` constant written in the pickle (the only thing `STACK_GLOBAL` may name an import with).
    case string(String)
    /// A value whose type the pickle fixes and which is no `str`: a number, bytes, a container, `None`.
    case other
    /// A value made by running something (a global, a call's result, a persistent or extension object): it may be
    /// anything, a string included.
    case unknown
}

/// The unpickler's stack and MARK stack, as CPython's `pickle._Unpickler` keeps them: a MARK opens a new frame, values
/// below it cannot be popped until a `pop_mark` closes it, and popping an empty frame is an underflow.
struct PickleStack {
    /// How many values may be on the stack at once; checkpoints hold a few thousand (batches of 1000 items).
    static let maximumDepth = 1 << 20

    private(set) var values: [PickleValue] = []
    /// Where each open frame starts in `values`.
    private(set) var marks: [Int] = []

    /// Where the opcode being run starts, for the errors.
    var offset = 0

    /// Why an operation is impossible: Python raises here.
    enum Problem {
        case underflow
        case noMark
        case tooDeep

        var text: String {
            switch self {
            case .underflow: "pops more than was pushed (stack underflow)"
            case .noMark: "pops to a MARK that was never pushed (could not find MARK)"
            case .tooDeep:
                "nests more than \(PickleScanner.maximumNesting) levels deep or holds more than \(PickleStack.maximumDepth) values"
            }
        }
    }

    private func fail(_ problem: Problem) -> PickleScanner.Failure { .invalid(problem.text, at: offset) }

    private var fence: Int { marks.last ?? 0 }

    mutating func push(_ value: PickleValue) throws(PickleScanner.Failure) {
        guard values.count < Self.maximumDepth else { throw fail(.tooDeep) }
        values.append(value)
    }

    mutating func pop() throws(PickleScanner.Failure) -> PickleValue {
        guard values.count > fence else { throw fail(.underflow) }
        return values.removeLast()
    }

    /// Pops `count` values, returned in the order they were pushed.
    mutating func pop(_ count: Int) throws(PickleScanner.Failure) -> [PickleValue] {
        guard values.count - fence >= count else { throw fail(.underflow) }
        defer { values.removeLast(count) }
        return Array(values.suffix(count))
    }

    /// The top value, which stays (BUILD, APPEND and the like change it in place; PUT stores it).
    func top() throws(PickleScanner.Failure) -> PickleValue {
        guard values.count > fence, let last = values.last else { throw fail(.underflow) }
        return last
    }

    /// Replaces the top value (TUPLE1 wraps it, a call's result replaces the callable).
    mutating func replaceTop(with value: PickleValue) throws(PickleScanner.Failure) {
        guard values.count > fence else { throw fail(.underflow) }
        values[values.count - 1] = value
    }

    mutating func mark() throws(PickleScanner.Failure) {
        guard marks.count < PickleScanner.maximumNesting else { throw fail(.tooDeep) }
        marks.append(values.count)
    }

    /// Closes the innermost frame and returns its values (TUPLE, LIST, DICT, APPENDS, SETITEMS, OBJ, INST, …).
    mutating func popMark() throws(PickleScanner.Failure) -> [PickleValue] {
        guard let start = marks.popLast() else { throw fail(.noMark) }
        defer { values.removeSubrange(start...) }
        return Array(values[start...])
    }

    /// POP: the top value, or, when the frame is empty, the MARK itself (as both CPython unpicklers do).
    mutating func popValueOrMark() throws(PickleScanner.Failure) {
        if let start = marks.last, start == values.count {
            marks.removeLast()
        } else {
            _ = try pop()
        }
    }
}
