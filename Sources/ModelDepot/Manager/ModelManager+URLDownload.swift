import Foundation
import ModelDepotCore
import ModelDepotTransfer

extension ModelManager {
    /// Starts downloading one file from `url` (any http(s) server, not only the Hub) to `destination` with this manager's
    /// engine — its connections, retries, bandwidth cap and transport — verifying `sha256` when given. The Hub
    /// token goes with it only when `url` is on the Hub endpoint's origin (a `resolve` URL), as `hf download`
    /// sends it; any other origin gets none.
    ///
    /// The task is started; watch its `progress` or `states`, pause, resume or cancel it, and `result()` gives the
    /// verified file.
    ///
    /// ```swift
    /// let task = models.download(from: url, to: file, sha256: expected)
    /// for await progress in task.progress { print(progress.bytesCompleted, progress.totalBytes ?? -1) }
    /// let result = try await task.result()   // throws ModelDepotError; cancelled keeps the bytes for next time
    /// ```
    public nonisolated func download(from url: URL, to destination: URL, sha256: String? = nil) -> DownloadTask {
        pull.downloader.start(request(from: url, to: destination, sha256: sha256))
    }

    /// The same download, awaited, its progress told to `progress` (the command line's shape).
    ///
    /// - Throws: `ModelDepotError`; on cancellation `cancelled`, with the partial data kept for the next call.
    package nonisolated func downloadFile(
        from url: URL, to destination: URL, sha256: String? = nil,
        progress: @escaping @Sendable (DownloadProgress) -> Void = { _ in }
    ) async throws -> DownloadResult {
        try await pull.downloader.download(request(from: url, to: destination, sha256: sha256), progress: progress)
    }

    /// The engine's request for a file at `url`, with the Hub's token only when `url` is on the Hub's origin.
    private nonisolated func request(from url: URL, to destination: URL, sha256: String?) -> DownloadRequest {
        DownloadRequest(
            url: url, destination: destination, expectedSHA256: sha256, headers: pull.hub.authorization(for: url))
    }

    /// Where a file downloaded from `url` goes: `output` (a file, or a folder to put it in), else the URL's last
    /// path component in `folder`. The name taken from the URL must be a plain file name.
    ///
    /// URL percent-decodes the last component, so `a%2F..%2F..%2Fx` arrives as `a/../../x`: a name holding `/`,
    /// `\`, NUL or a line break is refused, as is an empty, hidden or dot name, and the result is checked to lie
    /// directly inside the folder.
    ///
    /// - Throws: `invalidArgument` naming the refused name and saying to pass an output path.
    public static func destination(for url: URL, output: URL?, in folder: URL) throws -> URL {
        if let output {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: output.path, isDirectory: &isFolder), isFolder.boolValue {
                return try file(named: fileName(of: url), directlyIn: output)
            }
            return output
        }
        return try file(named: fileName(of: url), directlyIn: folder.standardizedFileURL)
    }

    /// `folder/name`, checked to lie directly inside `folder` (a name is one component; this is the last guard).
    static func file(named name: String, directlyIn folder: URL) throws -> URL {
        let file = folder.appendingPathComponent(name).standardizedFileURL
        guard file.deletingLastPathComponent().standardizedFileURL.path == folder.standardizedFileURL.path else {
            throw ModelDepotError(
                .invalidArgument, "The URL's file name '\(name)' leads outside \(folder.path); pass an output path.",
                remedy: .chooseOutputPath)
        }
        return file
    }

    /// The last path component of `url`, refused when it could name something other than a plain file.
    static func fileName(of url: URL) throws -> String {
        let name = url.lastPathComponent
        guard !name.isEmpty, name != "/", name != ".", name != "..", !name.hasPrefix("."),
            !name.contains(where: { $0.isNewline || $0 == "\0" || $0 == "/" || $0 == "\\" })
        else {
            throw ModelDepotError(
                .invalidArgument,
                "Cannot name the file after the URL's last part '\(name.debugDescription.dropFirst().dropLast())'; pass an output path.",
                remedy: .chooseOutputPath)
        }
        return name
    }
}
