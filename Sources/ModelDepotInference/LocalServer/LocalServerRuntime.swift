import Foundation
import ModelDepotPlatform

/// A program that serves a GGUF model over the OpenAI API on this machine.
public enum LocalServerRuntime: Sendable, Equatable, CustomStringConvertible {
    /// llama.cpp's own `llama-server`.
    case llamaServer(URL)
    /// A Python with llama-cpp-python's server installed (`python -m llama_cpp.server`).
    case llamaCppPython(URL)

    public var description: String {
        switch self {
        case .llamaServer(let url): "llama-server (\(url.path))"
        case .llamaCppPython(let url): "llama-cpp-python (\(url.path) -m llama_cpp.server)"
        }
    }

    /// What to tell someone who has neither.
    public static let installHint = """
        No local model server is installed. Install one of:
          - llama.cpp's llama-server (https://github.com/ggml-org/llama.cpp; brew install llama.cpp), on PATH or named by MODELDEPOT_LLAMA_SERVER
          - llama-cpp-python: python3 -m pip install 'llama-cpp-python[server]', with that python on PATH, in ./.venv or named by MODELDEPOT_PYTHON
        or use a running server with --endpoint URL.
        """

    /// The first runtime found, in this order: `MODELDEPOT_LLAMA_SERVER`, `MODELDEPOT_PYTHON` (when it has
    /// llama-cpp-python), `llama-server` on `PATH`, `./.venv/bin/python`, then `python3` on `PATH`.
    public static func find(environment: [String: String] = ProcessInfo.processInfo.environment) -> LocalServerRuntime?
    {
        let fileManager = FileManager.default
        if let path = environment["MODELDEPOT_LLAMA_SERVER"], fileManager.isExecutableFile(atPath: path) {
            return .llamaServer(URL(fileURLWithPath: path))
        }
        if let path = environment["MODELDEPOT_PYTHON"], hasLlamaCppPython(path) {
            return .llamaCppPython(URL(fileURLWithPath: path))
        }
        let searchPath = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        if let server = executable(named: "llama-server", in: searchPath) { return .llamaServer(server) }
        let venvPython = fileManager.currentDirectoryPath + "/.venv/bin/python"
        if hasLlamaCppPython(venvPython) { return .llamaCppPython(URL(fileURLWithPath: venvPython)) }
        if let python = executable(named: "python3", in: searchPath), hasLlamaCppPython(python.path) {
            return .llamaCppPython(python)
        }
        return nil
    }

    static func executable(named name: String, in searchPath: [String]) -> URL? {
        for folder in searchPath where !folder.isEmpty {
            let candidate = URL(fileURLWithPath: folder).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Whether `python` can import llama-cpp-python's server (checked without importing it: that takes seconds).
    static func hasLlamaCppPython(_ python: String) -> Bool {
        pythonCanImport(["llama_cpp", "uvicorn", "sse_starlette"], python: python)
    }

    /// Whether `python` finds every one of `modules`, asked without importing them.
    static func pythonCanImport(_ modules: [String], python: String) -> Bool {
        #if os(Linux) || os(macOS)
            let specs = modules.map { "u.find_spec('\($0)')" }.joined(separator: " and ")
            guard FileManager.default.isExecutableFile(atPath: python),
                let check = try? ChildProcess(
                    executable: python,
                    arguments: ["-c", "import importlib.util as u, sys; sys.exit(0 if \(specs) else 1)"],
                    output: "/dev/null")
            else { return false }
            check.waitForExitBlocking()
            return check.succeeded
        #else
            // iOS and its kin cannot start processes: no local server runtime there.
            return false
        #endif
    }

    /// The command line that serves `model` as `alias` on `127.0.0.1:port`.
    func command(model: URL, alias: String, port: Int, contextLength: Int) -> (URL, [String]) {
        switch self {
        case .llamaServer(let executable):
            return (
                executable,
                [
                    "--model", model.path, "--alias", alias, "--host", "127.0.0.1", "--port", "\(port)",
                    "--ctx-size", "\(contextLength)", "--embeddings", "--pooling", "mean",
                ]
            )
        case .llamaCppPython(let python):
            return (
                python,
                [
                    "-m", "llama_cpp.server", "--model", model.path, "--model_alias", alias, "--host", "127.0.0.1",
                    "--port", "\(port)", "--n_ctx", "\(contextLength)", "--embedding", "true",
                    // Without this a second request cuts the first reply short.
                    "--interrupt_requests", "false", "--verbose", "false",
                ]
            )
        }
    }
}
