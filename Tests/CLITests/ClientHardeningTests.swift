import Foundation
import ModelDepotTesting
import Testing

@testable import ModelDepot

/// Issue 39, section 2: each test is the exploit a hostile server, listing, archive or local user would try.
@Suite struct ClientHardeningTests {
    // MARK: - pull <URL>

    /// The file is named after the URL's last component, which URL percent-decodes: `%2F` becomes `/`, so a
    /// server's link names a path that climbs out of the folder the user pulled into.
    @Test func aURLWhoseNameDecodesToAPathCannotWriteOutsideTheFolder() async throws {
        let bytes = Array("export PATH=/tmp/evil:$PATH\n".utf8)
        let hostile = [
            "/files/a%2F..%2F..%2F..%2Fescaped.txt", "/files/..%5C..%5C..%5Cescaped.txt",
            "/files/a%00escaped.txt",
        ]
        let server = try await FaultServer.start(files: Dictionary(uniqueKeysWithValues: hostile.map { ($0, bytes) }))
        defer { Task { try? await server.shutdown() } }
        let folder = try TemporaryDirectory(prefix: "modeldepot-urlname")
        defer { folder.remove() }
        let inner = folder.path("work/inner")
        try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
        for path in hostile {
            let output = try await CLIRunner.run(["pull", server.url(path).absoluteString, "--quiet"], in: inner)
            #expect(output.status == 1, "\(path) was pulled: \(output.stdout)")
            #expect(output.stderr.contains("--output"), "\(path): \(output.stderr)")
            // Also into a folder named with --output.
            let into = try await CLIRunner.run(
                ["pull", server.url(path).absoluteString, "-o", inner.path, "--quiet"], in: folder.url)
            #expect(into.status == 1, "\(path) was pulled into the folder: \(into.stdout)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("escaped.txt").path), "a file escaped the folder")
        let left = try FileManager.default.subpathsOfDirectory(atPath: folder.url.path)
        #expect(left.sorted() == ["work", "work/inner"], "\(left)")
    }

    // MARK: - --local-dir

    /// A Hub (or anything answering as one) whose listing names `.git/config`: pulled into a folder that is a
    /// git working tree, it would set `core.fsmonitor` and run code at the user's next `git status`.
    @Test func aListingThatNamesGitFilesIsRefusedForALocalDirectory() async throws {
        for name in [".git/config", ".GIT/config", "sub/.Git/hooks/post-checkout", ".git./config"] {
            let folder = try TemporaryDirectory(prefix: "modeldepot-localgit")
            defer { folder.remove() }
            let local = folder.path("clone")
            try FileManager.default.createDirectory(
                at: local.appendingPathComponent(".git"), withIntermediateDirectories: true)
            let original = Array("[core]\n\trepositoryformatversion = 0\n".utf8)
            try Data(original).write(to: local.appendingPathComponent(".git/config"))
            let payload = Array("[core]\n\tfsmonitor = touch /tmp/pwned-by-modeldepot\n".utf8)
            let hub = try await HostileHub.start(files: [name: payload, "model.bin": Array("weights".utf8)])
            defer { Task { try? await hub.server.shutdown() } }
            let error = await #expect(throws: ModelDepotError.self, "\(name)") {
                try await hub.pull(into: local, cache: folder.path("cache"))
            }
            #expect(error?.message.contains(".git") == true, "\(name): \(String(describing: error))")
            #expect(try Data(contentsOf: local.appendingPathComponent(".git/config")) == Data(original), "\(name)")
            if name != ".git/config" {
                #expect(!FileManager.default.fileExists(atPath: local.appendingPathComponent(name).path), "\(name)")
            }
            #expect(hub.server.requests.allSatisfy { !$0.path.contains("/resolve/") }, "\(name): a file was fetched")
        }
    }

    /// A listing that names a file the user already has in the folder (not one a pull wrote: no metadata)
    /// replaces it only with --force-download.
    @Test func aLocalDirectoryPullNeverReplacesAFileItDidNotWrite() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-localown")
        defer { folder.remove() }
        let local = folder.path("project")
        try FileManager.default.createDirectory(at: local, withIntermediateDirectories: true)
        let mine = Array("my own notes, not the model's\n".utf8)
        try Data(mine).write(to: local.appendingPathComponent("README.md"))
        let theirs = Array("# the model card\n".utf8)
        let config = Array(#"{"model_type": "bert"}"#.utf8)
        let hub = try await HostileHub.start(files: ["README.md": theirs, "config.json": config])
        defer { Task { try? await hub.server.shutdown() } }
        // A file with the repository's exact bytes is the repository's, metadata or not (a git clone).
        try Data(config).write(to: local.appendingPathComponent("config.json"))

        let error = await #expect(throws: ModelDepotError.self) {
            try await hub.pull(into: local, cache: folder.path("cache"))
        }
        #expect(error?.message.contains("README.md") == true, "\(String(describing: error))")
        #expect(error?.message.contains("--force-download") == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: local.appendingPathComponent("README.md")) == Data(mine))

        let forced = try await hub.pull(into: local, cache: folder.path("cache"), force: true)
        #expect(forced.filesDownloaded == 2)
        #expect(try Data(contentsOf: local.appendingPathComponent("README.md")) == Data(theirs))
        // Now the pull's own (metadata written), a later pull keeps or updates it without asking.
        let again = try await hub.pull(into: local, cache: folder.path("cache"))
        #expect(again.filesDownloaded == 0)
    }

    // MARK: - ui --open

    /// `ui --open` handed the one-time URL to the browser on its command line, which every local user reads in
    /// /proc/<pid>/cmdline while the browser runs. The browser (here a script xdg-open runs through $BROWSER)
    /// now gets a file only this user can read, which redirects to the URL.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/xdg-open")))
    func theBrowserIsNeverGivenTheTokenOnItsCommandLine() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-open")
        defer { folder.remove() }
        let record = folder.path("argv.txt")
        let browser = folder.path("browser.sh")
        try Data(
            """
            #!/bin/sh
            printf '%s\\n' "$@" > \(record.path).tmp
            mv \(record.path).tmp \(record.path)

            """.utf8
        ).write(to: browser)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: browser.path)
        let environment = [
            "BROWSER": browser.path, "DISPLAY": "", "WAYLAND_DISPLAY": "", "XDG_CURRENT_DESKTOP": "",
            "DESKTOP_SESSION": "", "HF_HUB_OFFLINE": "1",
        ]
        try await PeerProcess.with(
            CLIRunner.executable, ["ui", "--port", "0", "--open", "--cache-dir", folder.path("cache").path],
            in: folder.url, environment: environment, log: folder.path("ui.log")
        ) { ui in
            let line = await ui.firstLine()
            let launch = try #require(line?.split(separator: " ").last.map(String.init), "\(ui.output)")
            let opened = await waitUntil { FileManager.default.fileExists(atPath: record.path) }
            try #require(opened, "the browser was not started: \(ui.output)")
            let argument = try String(contentsOf: record, encoding: .utf8).trimmingCharacters(in: .newlines)
            #expect(!argument.contains("token="), "the browser's command line holds the token: \(argument)")
            let page =
                URL(string: argument)?.isFileURL == true ? URL(string: argument)! : URL(fileURLWithPath: argument)
            let attributes = try FileManager.default.attributesOfItem(atPath: page.path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(attributes)")
            let html = try String(contentsOf: page, encoding: .utf8)
            #expect(html.contains(launch), "the page does not lead to \(launch): \(html)")
            let folderAttributes = try FileManager.default.attributesOfItem(
                atPath: page.deletingLastPathComponent().path)
            #expect(((folderAttributes[.posixPermissions] as? Int) ?? 0o777) & 0o077 == 0, "\(folderAttributes)")
            #expect(await ui.terminate(), "\(ui.output)")
            #expect(!FileManager.default.fileExists(atPath: page.path), "the page outlived ui")
        }
    }

    // MARK: - import

    /// A PAX size near Int64.max made `start + size` overflow: the importer died of a trap instead of refusing.
    @Test func anArchiveWithASizeNearInt64MaxIsRefusedByName() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-tarsize")
        defer { folder.remove() }
        for size in [Int64.max, Int64.max - 600] {
            // Our own writer puts a PAX `size` record before a member too large for ustar.
            let archive = folder.path("huge-\(size % 1000).tar")
            let headers = BundleArchive.headers(name: "models/acme/tiny/x.bin", size: size)
            try Data(headers + [UInt8](repeating: 0, count: 3 * BundleArchive.block)).write(to: archive)
            let output = try await CLIRunner.run(["import", archive.path, "--cache-dir", folder.path("cache").path])
            #expect(output.status == 1, "died with \(output.status): \(output.stderr)")
            #expect(output.stderr.contains("models/acme/tiny/x.bin"), "\(output.stderr)")
        }
        // The same with GNU tar's base-256 size field.
        var header = BundleArchive.headers(name: "models/acme/tiny/x.bin", size: 4)
        header.replaceSubrange(124..<136, with: [0x80, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0])
        header.replaceSubrange(148..<156, with: Array("        ".utf8))
        let sum = header.reduce(0) { $0 + Int($1) }
        header.replaceSubrange(148..<156, with: Array(String(format: "%06o\0 ", sum).utf8))
        let base256 = folder.path("base256.tar")
        try Data(header + [UInt8](repeating: 0, count: 3 * BundleArchive.block)).write(to: base256)
        let output = try await CLIRunner.run(["import", base256.path, "--cache-dir", folder.path("cache").path])
        #expect(output.status == 1, "died with \(output.status): \(output.stderr)")
        #expect(output.stderr.contains("models/acme/tiny/x.bin"), "\(output.stderr)")
    }

    /// A bundle file swapped after the check for a link, a FIFO or a larger file: the copy follows nothing,
    /// blocks on nothing and copies no more than the lock's size.
    @Test func aFolderImportCopiesOnlyARegularFileOfTheLockedSize() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-swap")
        defer { folder.remove() }
        let bytes = SampleData.bytes(count: 1 << 20, seed: 39)
        let file = ModelLock.File(path: "model.bin", size: Int64(bytes.count), sha256: SampleData.sha256(bytes))
        let bigger = folder.path("bigger.bin")
        try Data(bytes + SampleData.bytes(count: 4 << 20, seed: 40)).write(to: bigger)

        // A link to a larger file: followed, the copy read all of it and only then said the size was wrong.
        let link = folder.path("link.bin")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: bigger)
        // A larger regular file: refused by its size, before a byte is copied.
        for (source, reason) in [(link, "link"), (bigger, "bytes")] {
            let error = #expect(throws: ModelDepotError.self) {
                try ModelManager.copyVerifying(
                    source, offset: 0, length: nil, to: folder.path("blob"), as: file, shown: "acme/tiny/model.bin")
            }
            // Refused as it is, not copied whole and then found to differ.
            #expect(error?.code == .invalidArgument, "the whole file was copied: \(String(describing: error))")
            #expect(error?.message.contains(reason) == true, "\(String(describing: error))")
        }
        // A FIFO: opening it waited for a writer forever.
        let fifo = folder.path("fifo.bin")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let refused = try await withTimeLimit(30) {
            try await onOwnThread {
                do {
                    try ModelManager.copyVerifying(
                        fifo, offset: 0, length: nil, to: folder.path("blob"), as: file, shown: "acme/tiny/model.bin")
                    return ""
                } catch let error as ModelDepotError {
                    return error.message
                }
            }
        }
        #expect(refused.contains("not a regular file"), "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("blob").path))
    }
}

/// A server answering as the Hub for `evil/repo` with whatever listing a test gives it.
struct HostileHub {
    let server: FaultServer
    static let commit = String(repeating: "ab", count: 20)

    static func start(files: [String: [UInt8]]) async throws -> HostileHub {
        let info = Array(#"{"id": "evil/repo", "sha": "\#(commit)"}"#.utf8)
        let entries = files.keys.sorted().map { path in
            #"{"type": "file", "oid": "\#(GitBlob.id(of: files[path]!))", "size": \#(files[path]!.count), "path": "\#(path)"}"#
        }
        var served: [String: [UInt8]] = [
            "/api/models/evil/repo/revision/main": info,
            "/api/models/evil/repo/tree/\(commit)": Array("[\(entries.joined(separator: ","))]".utf8),
        ]
        for (path, bytes) in files { served["/evil/repo/resolve/\(commit)/\(path)"] = bytes }
        return HostileHub(server: try await FaultServer.start(files: served))
    }

    func pull(into local: URL, cache: URL, force: Bool = false) async throws -> Snapshot {
        let request = SnapshotRequest(
            repo: try RepoID("evil/repo"), forceDownload: force, localDirectory: LocalDirectory(local))
        return try await SnapshotDownloader(
            hub: HubClient(endpoint: server.baseURL, transport: DefaultTransport.shared, clock: ImmediateClock()),
            cache: HubCache(root: cache),
            clock: ImmediateClock()
        ).download(request)
    }
}
