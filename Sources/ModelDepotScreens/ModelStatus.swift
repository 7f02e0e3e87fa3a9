import Foundation
import ModelDepot

/// What a person can do with a model from its row or page: one primary action at a time.
public enum ModelAction: String, Sendable, Hashable, Codable, CaseIterable {
    case download, pause, resume, cancel, retry, repair, use
}

/// A model's readiness as a badge: a kind for styling, a short label, and the reason when there is one
/// ("missing model.gguf", "model.gguf: wrong magic").
public struct ReadinessBadge: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable {
        case ready, unverified, notDownloaded, partial, corrupt, downloading, paused, failed
    }

    public var kind: Kind
    public var label: String
    public var reason: String?
}

/// The one place that decides, from a model's readiness on disk and its download here, which badge it wears,
/// which action its button offers, and whether it can be selected for use.
public struct ModelStatus: Sendable, Equatable, Encodable {
    public var badge: ReadinessBadge
    /// The button the row shows; nil when there is nothing to do (never, today: every state has one).
    public var action: ModelAction?
    /// The label of that button.
    public var actionLabel: String?
    /// The download's progress while one runs, is paused or failed (0...1).
    public var fraction: Double?
    /// Whether the model can be chosen for use (loadable: ready, or present and well-formed but not hashed).
    public var selectable: Bool

    /// The status for `readiness` on disk and `download`, the download started here if any.
    public static func decide(
        readiness: Readiness, download: ModelDownloads.Entry?, strings: ModelStatusStrings = .english
    ) -> ModelStatus {
        let fraction = download?.progress?.fractionCompleted
        switch download?.state {
        case .pending?, .downloading?:
            let percent = fraction.map { " \(Int($0 * 100))%" } ?? ""
            return ModelStatus(
                badge: ReadinessBadge(kind: .downloading, label: strings.downloading + percent, reason: nil),
                action: .pause, actionLabel: strings.label(.pause), fraction: fraction ?? 0, selectable: false)
        case .paused?:
            return ModelStatus(
                badge: ReadinessBadge(kind: .paused, label: strings.paused, reason: nil), action: .resume,
                actionLabel: strings.label(.resume), fraction: fraction, selectable: false)
        case .failed(let error)?:
            return ModelStatus(
                badge: ReadinessBadge(kind: .failed, label: strings.failed, reason: error.message), action: .retry,
                actionLabel: strings.label(.retry), fraction: fraction, selectable: false)
        case .cancelled?, .completed?, nil:
            break
        }
        switch readiness {
        case .ready:
            return ModelStatus(
                badge: ReadinessBadge(kind: .ready, label: strings.ready, reason: nil), action: .use,
                actionLabel: strings.label(.use), fraction: nil, selectable: true)
        case .unverified(let files):
            return ModelStatus(
                badge: ReadinessBadge(
                    kind: .unverified, label: strings.unverified, reason: strings.notHashed(files)),
                action: .use, actionLabel: strings.label(.use), fraction: nil, selectable: true)
        case .notDownloaded:
            return ModelStatus(
                badge: ReadinessBadge(kind: .notDownloaded, label: strings.notDownloaded, reason: nil),
                action: .download, actionLabel: strings.label(.download), fraction: nil, selectable: false)
        case .partial(let missing):
            return ModelStatus(
                badge: ReadinessBadge(kind: .partial, label: strings.partial, reason: strings.missing(missing)),
                action: .download, actionLabel: strings.downloadRest, fraction: nil, selectable: false)
        case .downloading(let missing):
            // On disk a download was interrupted (another process, an earlier run): downloading resumes it.
            return ModelStatus(
                badge: ReadinessBadge(kind: .partial, label: strings.interrupted, reason: strings.missing(missing)),
                action: .download, actionLabel: strings.label(.resume), fraction: nil, selectable: false)
        case .corrupt(let files):
            let reasons = files.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
            return ModelStatus(
                badge: ReadinessBadge(kind: .corrupt, label: strings.corrupt, reason: reasons), action: .repair,
                actionLabel: strings.label(.repair), fraction: nil, selectable: false)
        }
    }
}

/// The words of badges and buttons, in one table (ready for localization).
public struct ModelStatusStrings: Sendable {
    public var ready = "Ready"
    public var unverified = "Ready (not hashed yet)"
    public var notDownloaded = "Not downloaded"
    public var partial = "Partly downloaded"
    public var interrupted = "Download interrupted"
    public var corrupt = "Damaged"
    public var downloading = "Downloading"
    public var paused = "Paused"
    public var failed = "Download failed"
    public var downloadRest = "Download the rest"
    public var actionLabels: [ModelAction: String] = [
        .download: "Download", .pause: "Pause", .resume: "Resume", .cancel: "Cancel", .retry: "Retry",
        .repair: "Repair", .use: "Use",
    ]

    public static let english = ModelStatusStrings()

    public func label(_ action: ModelAction) -> String { actionLabels[action] ?? action.rawValue }

    public func missing(_ files: [String]) -> String {
        "missing " + Self.list(files)
    }

    public func notHashed(_ files: [String]) -> String {
        "\(files.count == 1 ? "1 file" : "\(files.count) files") not checked by hash yet"
    }

    static func list(_ files: [String]) -> String {
        let shown = files.prefix(3).joined(separator: ", ")
        return files.count > 3 ? "\(shown) and \(files.count - 3) more" : shown
    }
}
