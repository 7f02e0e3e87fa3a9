import ModelDepotCore
import ModelDepotTransfer
import ModelDepotTrust

/// Progress of a whole repository pull, weighted by bytes across its files.
public struct SnapshotProgress: Sendable, Equatable {
    /// Where a pull is: resolving the revision, downloading files, or done.
    public enum Phase: String, Sendable, Equatable, Codable {
        /// Resolving the revision and listing files.
        case resolving
        case downloading
        /// Compiling downloaded Core ML models for this device (``ModelCompiler``).
        case compiling
        case completed
    }

    /// The pull's current phase.
    public var phase: Phase
    /// Bytes of the selected files on disk, those already cached included.
    public var bytesCompleted: Int64
    /// Total size of the selected files, once listed.
    public var totalBytes: Int64?
    /// Selected files fully on disk, those already cached included.
    public var filesCompleted: Int
    /// Files the pull selected, once listed.
    public var totalFiles: Int
    /// A file being transferred right now (the largest one in flight), for display.
    public var currentFile: String?
    /// Bytes per second over the last few seconds, over all files.
    public var bytesPerSecond: Double
    /// Bytes that came over the network in this run of the pull (not the cache, not the partial files a resume
    /// continued): what a speed chart counts.
    package var bytesReceived: Int64 = 0
    /// Connections open across the files in flight.
    public var activeConnections = 0
    /// Seconds left at the current speed; nil while unknown.
    public var estimatedSecondsRemaining: Double?
    /// Set while the pull waits for a server's answer or for its next attempt; nil while bytes flow.
    public var waiting: TransferWait?
    /// The file whose download waits; nil when the wait is the Hub's API (resolving, listing).
    public var waitingFile: String?
    /// The server files come from now (`host:port`): the Hub, or the mirror in use when mirrors are set
    /// (`HubMirror`); it changes when one fails and the next takes over.
    public var endpoint: String?
    /// True when every selected file was in the cache before the pull started: it downloads nothing, and this
    /// one `completed` event is all it reports (no downloading phase, no speed).
    public var alreadyCached = false
    /// Files pulled through Xet so far, and their bytes: received from the network (xorb ranges, as sent) and copied
    /// from files already on disk (chunks a cached file shares).
    public var xetFiles = 0
    public var xetBytesFromNetwork: Int64 = 0
    public var xetBytesFromDisk: Int64 = 0
    /// In the `compiling` phase: models compiled so far, and in all.
    public var modelsCompiled = 0
    public var modelsToCompile = 0

    /// A progress value; the engine makes these, tests and previews may too.
    public init(
        phase: Phase, bytesCompleted: Int64 = 0, totalBytes: Int64? = nil, filesCompleted: Int = 0,
        totalFiles: Int = 0, currentFile: String? = nil, bytesPerSecond: Double = 0,
        estimatedSecondsRemaining: Double? = nil
    ) {
        self.phase = phase
        self.bytesCompleted = bytesCompleted
        self.totalBytes = totalBytes
        self.filesCompleted = filesCompleted
        self.totalFiles = totalFiles
        self.currentFile = currentFile
        self.bytesPerSecond = bytesPerSecond
        self.estimatedSecondsRemaining = estimatedSecondsRemaining
    }

    /// 0...1 by bytes, when the total is known.
    public var fractionCompleted: Double? {
        guard let totalBytes else { return nil }
        guard totalBytes > 0 else { return totalFiles == 0 ? 1 : Double(filesCompleted) / Double(totalFiles) }
        return min(1, Double(bytesCompleted) / Double(totalBytes))
    }
}
