import Foundation
import ModelDepotCore

/// When a download the person started may keep the full parallel engine running after the app leaves the
/// foreground, under iOS 26's `BGContinuedProcessingTask`, and what happens when the system ends that time: the
/// files not finished go on as background pieces (`BackgroundSessionState`, internal to the package), keeping the bytes the engine wrote.
///
/// Apple's rules, which a library cannot meet for the app: the request is submitted from the foreground right after
/// the person's action; its identifier starts with the app's bundle identifier; and the app's own Info.plist lists
/// it under `BGTaskSchedulerPermittedIdentifiers` (a trailing `.*` covers a family). The DocC article
/// "Downloading while the app is suspended" says what the app adds. Portable and tested; the glue that talks to
/// `BGTaskScheduler` is Apple-only.
public struct ContinuedProcessing: Sendable, Equatable {
    /// Why no continued-processing request is made: the download then runs in the foreground only, and in
    /// background pieces once the app is suspended.
    public enum Refusal: Error, Equatable, Sendable {
        /// Only a download the person started may ask (the system refuses others).
        case notStartedByThePerson
        /// Requests are made from the foreground, right after the action.
        case notInForeground
        /// Before iOS and iPadOS 26 there is no such task.
        case unsupportedSystem
    }

    /// The task's identifier, as the app's Info.plist lists it.
    public let identifier: String

    /// - Throws: `invalidArgument` when `identifier` does not start with `bundleIdentifier` followed by a dot, or is
    ///   not among `permittedIdentifiers` (the app's `BGTaskSchedulerPermittedIdentifiers`, `.*` wildcards allowed).
    public init(identifier: String, bundleIdentifier: String, permittedIdentifiers: [String]) throws {
        guard identifier.hasPrefix(bundleIdentifier + "."), identifier.count > bundleIdentifier.count + 1 else {
            throw ModelDepotError(
                .invalidArgument,
                "The continued-processing identifier '\(identifier)' must start with the app's bundle identifier and a dot (\(bundleIdentifier).…)."
            )
        }
        let listed = permittedIdentifiers.contains { permitted in
            permitted.hasSuffix(".*") ? identifier.hasPrefix(String(permitted.dropLast(1))) : permitted == identifier
        }
        guard listed else {
            throw ModelDepotError(
                .invalidArgument,
                "Add '\(identifier)' to BGTaskSchedulerPermittedIdentifiers in the app's Info.plist: the system refuses identifiers the app does not list."
            )
        }
        self.identifier = identifier
    }

    /// Whether to submit the request now, for a download `startedByThePerson` while the app `isInForeground`, on a
    /// system that `supportsContinuedProcessing`. Returns the identifier to submit.
    public func submission(startedByThePerson: Bool, isInForeground: Bool, supportsContinuedProcessing: Bool)
        -> Result<String, Refusal>
    {
        guard supportsContinuedProcessing else { return .failure(.unsupportedSystem) }
        guard startedByThePerson else { return .failure(.notStartedByThePerson) }
        guard isInForeground else { return .failure(.notInForeground) }
        return .success(identifier)
    }

    /// A file the engine had not finished when the system ended the continued-processing time.
    public struct UnfinishedFile: Sendable, Equatable {
        public var url: URL
        public var destination: URL
        public var size: Int64
        public var sha256: String
        /// Where the engine wrote it so far (`<destination>.incomplete` in a plain folder, the blob's partial file in
        /// the cache), and its resume record beside it.
        public var partialPath: String
        public var resumeRecordPath: String

        /// The file of an engine download `request` (its partial file and resume record), to be fetched from `url`.
        package init(_ request: DownloadRequest, url: URL, size: Int64, sha256: String) {
            self.url = url
            destination = request.destination
            self.size = size
            self.sha256 = sha256
            partialPath = request.partialPath
            resumeRecordPath = request.resumeRecordPath
        }
    }

    /// The task's expiration: after the engine's downloads have been cancelled (their partial files and resume
    /// records kept), each unfinished file goes on as background pieces, the ranges the engine completed adopted
    /// rather than fetched again. `url` must need no credentials (`BackgroundTransfer`).
    ///
    /// - Throws: when a record cannot be written; the files before it are handed over.
    package static func handOver(
        _ files: [UnfinishedFile], to state: BackgroundSessionState, pieceSize: Int64 = 64 << 20
    ) throws {
        for file in files {
            let partial = URL(fileURLWithPath: file.partialPath)
            let record = ResumeRecord.load(from: file.resumeRecordPath)
            var transfer = BackgroundTransfer(
                url: file.url, destination: file.destination, size: file.size, sha256: file.sha256,
                pieceSize: pieceSize)
            if let record, record.totalSize == file.size, FileManager.default.fileExists(atPath: partial.path) {
                try transfer.adopt(partial, completed: record.completed.ranges)
                try? FileManager.default.removeItem(atPath: file.resumeRecordPath)
            }
            try state.adopt(transfer)
        }
    }
}
