import ModelDepotCore

/// Which imports a pickle may make: what checkpoints need to rebuild tensors is safe; whatever reaches processes,
/// code, files or the network is dangerous; everything else is unknown (loading it runs that module's code).
/// Judged as picklescan judges them (the tests check our verdicts against it and fickling).
package enum PicklePolicy {
    /// Imports a PyTorch or NumPy checkpoint makes: rebuilding tensors, storages, arrays and ordered dicts.
    static let safe: [String: Set<String>] = [
        "collections": ["OrderedDict"],
        "torch": [
            "BFloat16Storage", "BoolStorage", "ByteStorage", "CharStorage", "ComplexDoubleStorage",
            "ComplexFloatStorage", "DoubleStorage", "FloatStorage", "HalfStorage", "IntStorage", "LongStorage",
            "QInt32Storage", "QInt8Storage", "QUInt2x4Storage", "QUInt4x2Storage", "QUInt8Storage", "ShortStorage",
            "Size", "float16", "float32", "bfloat16",
        ],
        "torch._utils": ["_rebuild_tensor_v2", "_rebuild_parameter"],
        "numpy": ["dtype", "ndarray"],
        "numpy.core.multiarray": ["_reconstruct", "scalar"],
        "numpy._core.multiarray": ["_reconstruct", "scalar"],
    ]

    /// Modules whose every name is dangerous: processes, the interpreter, the file system, the network.
    static let dangerousModules: Set<String> = [
        "os", "posix", "nt", "subprocess", "pty", "commands", "sys", "shutil", "socket", "ssl", "runpy", "ctypes",
        "cProfile", "profile", "pdb", "bdb", "asyncio", "aiohttp", "httplib", "http.client", "requests",
        "requests.api", "urllib.request", "webbrowser", "pickle", "_pickle", "marshal", "importlib", "code",
        "codeop", "pydoc", "venv", "pip", "ensurepip", "multiprocessing", "numpy.f2py",
        "numpy.testing._private.utils", "distutils.file_util", "tempfile", "shelve",
    ]

    /// Dangerous names in otherwise ordinary modules.
    static let dangerousNames: [String: Set<String>] = [
        "builtins": [
            "eval", "exec", "compile", "open", "getattr", "setattr", "apply", "breakpoint", "__import__", "input",
        ],
        "__builtin__": [
            "eval", "exec", "compile", "open", "getattr", "setattr", "apply", "breakpoint", "__import__", "input",
        ],
        "operator": ["attrgetter", "itemgetter", "methodcaller"],
        "_operator": ["attrgetter", "itemgetter", "methodcaller"],
        "functools": ["partial", "reduce"],
        "types": ["CodeType", "FunctionType"],
        "logging": ["FileHandler"],
        "_io": ["FileIO"],
        "io": ["FileIO", "open"],
        "torch.serialization": ["load"],
        "torch._inductor.codecache": ["compile_file"],
        "torch.storage": ["_load_from_bytes"],
        "cloudpickle.cloudpickle": ["_builtin_type", "_make_function", "subimport"],
    ]

    /// The verdict for importing `module.name`.
    package static func verdict(_ module: String, _ name: String) -> PickleImport.Verdict {
        if dangerousModules.contains(module) || dangerousModules.contains(where: { module.hasPrefix($0 + ".") }) {
            return .dangerous
        }
        // A dotted name reaches through attributes (`os.path` from `posixpath` is fine, `system` via a
        // dangerous first part is not): judge its first part.
        let first = String(name.split(separator: ".").first ?? Substring(name))
        if dangerousNames[module]?.contains(first) == true { return .dangerous }
        if safe[module]?.contains(name) == true { return .safe }
        return .unknown
    }
}
