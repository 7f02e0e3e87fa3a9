#if canImport(SwiftUI)
    import ModelDepotScreens
    import SwiftUI

    /// A model's badge as ``ModelStatus`` decided it: the label, the reason under it, and the progress bar while
    /// a download runs. Never compiled here: SwiftUI exists only on Apple platforms.
    public struct ModelStatusBadge: View {
        let status: ModelStatus

        public init(_ status: ModelStatus) {
            self.status = status
        }

        public var body: some View {
            VStack(alignment: .leading, spacing: 2) {
                Text(status.badge.label).font(.caption.weight(.semibold))
                if let reason = status.badge.reason {
                    Text(reason).font(.caption).foregroundStyle(.secondary)
                }
                // ProgressView(value:) takes a fraction 0...1 (SwiftUI `ProgressView.init(value:total:)`).
                if let fraction = status.fraction {
                    ProgressView(value: fraction)
                }
            }
            // One element for VoiceOver: the label, then the reason.
            .accessibilityElement(children: .combine)
        }
    }
#endif
