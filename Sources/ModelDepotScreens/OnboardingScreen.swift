import Foundation
import ModelDepot

/// The onboarding download, a step an app puts before its first use of a model: check the disk, offer the
/// download with its size, show progress, and let the person continue once the model is ready.
public struct OnboardingScreen: Sendable, Equatable, Encodable {
    /// Where the flow is.
    public enum Step: String, Sendable, Equatable, Encodable {
        /// The model is here: continue.
        case ready
        /// Not here, and it fits: offer the download.
        case offer
        /// Not here, and the disk lacks room for it.
        case noRoom
        /// Downloading (or paused).
        case downloading
        /// The download failed: say why and offer Retry.
        case failed
    }

    public var name: String
    public var title: String
    public var step: Step
    /// What the step says to the person.
    public var message: String
    public var sizeText: String
    public var freeText: String?
    public var fraction: Double?
    /// The button: download, retry, pause/resume while downloading, use to continue.
    public var action: ModelAction?
    public var actionLabel: String?

    /// The flow for catalog model `name` as it stands.
    ///
    /// - Throws: `invalidArgument` when the catalog has no such model.
    public static func load(
        _ name: String, downloads: ModelDownloads, strings: OnboardingStrings = .english
    ) async throws -> OnboardingScreen {
        let entry = try downloads.catalogEntry(name)
        let readiness = (try? downloads.manager.readiness(of: entry).readiness) ?? .notDownloaded
        let download = await downloads.entry(entry.name)
        let status = ModelStatus.decide(readiness: readiness, download: download, strings: strings.status)
        let free = StorageBudget(cache: downloads.manager.cache).availableSpace()
        var screen = OnboardingScreen(
            name: entry.name, title: strings.title(entry), step: .offer, message: "",
            sizeText: ByteFormat.string(entry.sizeBytes), freeText: free.map { ByteFormat.string($0) },
            fraction: status.fraction, action: status.action, actionLabel: status.actionLabel)
        switch status.badge.kind {
        case .ready, .unverified:
            screen.step = .ready
            screen.message = strings.ready
            screen.actionLabel = strings.continueLabel
        case .downloading, .paused:
            screen.step = .downloading
            screen.message = status.badge.kind == .paused ? strings.paused : strings.downloading
        case .failed:
            screen.step = .failed
            screen.message = status.badge.reason ?? strings.failed
        case .notDownloaded, .partial, .corrupt:
            // The whole size is asked for: a partial model needs less, but a person should not be told it fits
            // and then run out.
            if let free, free < entry.sizeBytes {
                screen.step = .noRoom
                screen.message = strings.noRoom(size: entry.sizeBytes, free: free)
                screen.action = nil
                screen.actionLabel = nil
            } else {
                screen.message = strings.offer(size: entry.sizeBytes, free: free)
            }
        }
        return screen
    }
}

/// The onboarding flow's words.
public struct OnboardingStrings: Sendable {
    public var ready = "The model is on this device. You can continue."
    public var downloading = "Downloading. You can leave this page; the download goes on."
    public var paused = "Paused. Resume when you are ready; nothing downloaded is lost."
    public var failed = "The download failed."
    public var continueLabel = "Continue"
    public var status = ModelStatusStrings.english

    public static let english = OnboardingStrings()

    public func title(_ entry: CatalogEntry) -> String { "Get \(entry.name)" }

    public func offer(size: Int64, free: Int64?) -> String {
        "This app needs \(ByteFormat.string(size)) of model files on this device before it can continue."
    }

    public func noRoom(size: Int64, free: Int64) -> String {
        "This model needs \(ByteFormat.string(size)) and the disk has \(ByteFormat.string(free)) free. Delete models you do not use (Storage) or free space on the device — the system may have to clear space it holds for itself first (Settings › General › Storage) — then come back."
    }
}
