#if canImport(SwiftUI)
    import ModelDepot
    import ModelDepotScreens
    import SwiftUI

    /// What is on the device (Python's downloads too): size, last use, pinned; delete behind a confirmation that
    /// says what it frees, pin, verify and repair, as ``StorageScreen`` decides. Never compiled here.
    public struct StorageView: View {
        let manager: ModelManager
        @State private var screen: StorageScreen?
        @State private var outcome: String?
        @State private var failure: (any Error)?
        @State private var confirming: StorageScreen.Row?

        public init(manager: ModelManager) {
            self.manager = manager
        }

        public var body: some View {
            List {
                if let failure {
                    ErrorRetryView(failure) { self.failure = nil }
                }
                if let outcome { Text(outcome) }
                if let screen {
                    Section {
                        LabeledContent("Total", value: screen.totalText)
                        if let free = screen.freeSpaceText { Text(free).foregroundStyle(.secondary) }
                    }
                    if let message = screen.emptyMessage { Text(message).foregroundStyle(.secondary) }
                    ForEach(screen.rows, id: \.id) { row in
                        VStack(alignment: .leading, spacing: 4) {
                            Text(row.id).font(.headline)
                            Text("\(row.sizeText) · \(row.kindText) · \(row.lastUsedText)").font(.caption)
                            HStack {
                                ForEach(row.actions, id: \.action) { button in
                                    Button(button.label) {
                                        if button.action == .delete {
                                            confirming = row
                                        } else {
                                            run(button.action, row)
                                        }
                                    }
                                    .buttonStyle(.bordered)
                                }
                            }
                        }
                    }
                }
            }
            .navigationTitle("Storage")
            // confirmationDialog(_:isPresented:presenting:actions:message:) asks before the destructive action;
            // its words (what the deletion frees) are the screen's.
            .confirmationDialog(
                "Delete", isPresented: Binding(get: { confirming != nil }, set: { if !$0 { confirming = nil } }),
                presenting: confirming
            ) { row in
                Button("Delete", role: .destructive) { run(.delete, row) }
            } message: { row in
                Text(row.deleteConfirmation)
            }
            .task { await load() }
        }

        private func run(_ action: StorageScreen.Action, _ row: StorageScreen.Row) {
            Task {
                do {
                    outcome = try await StorageScreen.perform(action, on: row.id, type: row.type, manager).message
                    await load()
                } catch {
                    failure = error
                }
            }
        }

        private func load() async {
            screen = await StorageScreen.load(manager)
        }
    }
#endif
