import Foundation

/// A program that serves a CTranslate2 Whisper model (faster-whisper) over OpenAI's audio API on this machine:
/// PyPI's `faster-whisper-server`.
public enum TranscriptionServerRuntime: Sendable, Equatable, CustomStringConvertible {
    /// The `faster-whisper-server` program pip installs.
    case fasterWhisperServer(URL)
    /// A Python with the package installed (`python -m faster_whisper_server`).
    case python(URL)

    public var description: String {
        switch self {
        case .fasterWhisperServer(let url): "faster-whisper-server (\(url.path))"
        case .python(let url): "faster-whisper-server (\(url.path) -m faster_whisper_server)"
        }
    }

    /// What to tell someone who has none.
    public static let installHint = """
        No local transcription server is installed. Install faster-whisper-server:
          python3 -m venv .venv-whisper && .venv-whisper/bin/pip install faster-whisper-server==0.0.3
        then run from the folder that holds .venv-whisper, put faster-whisper-server on PATH, or name it with
        MODELDEPOT_WHISPER_SERVER (the program) or MODELDEPOT_WHISPER_PYTHON (a python that has it);
        or use a running server with --endpoint URL.
        """

    /// The first runtime found, in this order: `MODELDEPOT_WHISPER_SERVER`, `MODELDEPOT_WHISPER_PYTHON` (when it
    /// has the package), `faster-whisper-server` on `PATH`, `./.venv-whisper/bin/python`, `./.venv/bin/python`,
    /// then `python3` on `PATH`.
    public static func find(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> TranscriptionServerRuntime?
    {
        let fileManager = FileManager.default
        if let path = environment["MODELDEPOT_WHISPER_SERVER"], fileManager.isExecutableFile(atPath: path) {
            return .fasterWhisperServer(URL(fileURLWithPath: path))
        }
        if let path = environment["MODELDEPOT_WHISPER_PYTHON"], hasPackage(path) {
            return .python(URL(fileURLWithPath: path))
        }
        let searchPath = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        if let program = LocalServerRuntime.executable(named: "faster-whisper-server", in: searchPath) {
            return .fasterWhisperServer(program)
        }
        for venv in [".venv-whisper", ".venv"] {
            let python = fileManager.currentDirectoryPath + "/\(venv)/bin/python"
            if hasPackage(python) { return .python(URL(fileURLWithPath: python)) }
        }
        if let python = LocalServerRuntime.executable(named: "python3", in: searchPath), hasPackage(python.path) {
            return .python(python)
        }
        return nil
    }

    static func hasPackage(_ python: String) -> Bool {
        LocalServerRuntime.pythonCanImport(["faster_whisper_server", "faster_whisper", "multipart"], python: python)
    }

    /// The command line that serves the model folder `model` on `127.0.0.1:port`.
    func command(model: URL, port: Int) -> (URL, [String]) {
        let serve = [model.path, "--host", "127.0.0.1", "--port", "\(port)", "--log-level", "info"]
        switch self {
        case .fasterWhisperServer(let program): return (program, serve)
        case .python(let python): return (python, ["-m", "faster_whisper_server"] + serve)
        }
    }
}
