import Foundation
import ModelDepot
import ModelDepotScreens
import Mustache

/// Renders the screens as HTML with the Mustache templates in `Resources/templates`: each page's context is
/// the screen's values as they are; the templates hold no rules (those are the screens').
struct UIPages: Sendable {
    let library: MustacheLibrary

    /// Loads the templates shipped with the package.
    static func load() async throws -> UIPages {
        guard let folder = Bundle.module.url(forResource: "templates", withExtension: nil, subdirectory: "Resources")
        else {
            throw ModelDepotError(.invalidArgument, "The web app's templates are missing from the package's resources.")
        }
        return UIPages(library: try await MustacheLibrary(directory: folder.path))
    }

    /// A value as JSON for a `data-` attribute (the template escapes it; the browser gives it back as written).
    /// Nil when it cannot be encoded (a template section then leaves the chart out).
    static func json(_ value: some Encodable) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) }
    }

    func render(_ template: String, _ context: [String: Any]) -> String {
        library.render(context, withTemplate: template)
            ?? "<!doctype html><title>ModelDepot</title><p>The page \(template) is missing."
    }

    /// The header's values: title, which page, whether the app is offline.
    static func frame(_ title: String, page: String, model: String = "", offline: Bool) -> [String: Any] {
        [
            "title": title, "page": page, "pageModel": model, "onModels": page == "models" || page == "model",
            "onDownloads": page == "downloads", "onStorage": page == "storage", "onSettings": page == "settings",
            "onChat": page == "chat", "onEmbeddings": page == "embeddings", "onTranscribe": page == "transcribe",
            "offline": offline,
        ]
    }

    static func status(_ status: ModelStatus) -> [String: Any] {
        var values: [String: Any] = [
            "badgeKind": status.badge.kind.rawValue, "badgeLabel": status.badge.label,
            "badgeReason": status.badge.reason ?? "", "fraction": status.fraction ?? 0,
            "hasFraction": status.fraction != nil, "actionLabel": status.actionLabel ?? "",
        ]
        // An absent value is left out: Mustache would print a nil it is handed as "nil".
        values["action"] = status.action?.rawValue
        return values
    }

    func models(_ screen: ModelsScreen, loaded: LoadedModelsScreen?, offline: Bool) -> String {
        var context = Self.frame(screen.strings.title, page: "models", offline: offline)
        if let loaded {
            context["hasRuntimes"] = true
            context["loadedEmpty"] = loaded.emptyMessage ?? ""
            // A flag, not the message: an empty string still opens a Mustache section.
            context["hasLoaded"] = !loaded.rows.isEmpty
            context["loaded"] = loaded.rows.map(Self.loadedRow)
        }
        context["search"] = screen.filter.search
        context["capabilities"] = ModelCapability.allCases.map {
            ["value": $0.rawValue, "selected": $0 == screen.filter.capability] as [String: Any]
        }
        context["formats"] = ModelFormat.allCases.map {
            ["value": $0.rawValue, "selected": $0 == screen.filter.format] as [String: Any]
        }
        context["presets"] = screen.presets.map {
            ["name": $0.name, "members": $0.models.joined(separator: ", "), "summary": $0.summary] as [String: Any]
        }
        context["emptyMessage"] = screen.emptyMessage
        context["hub"] = screen.filter.hub
        context["hubMessage"] = screen.hubMessage
        context["hubResults"] = screen.hubResults.map { result -> [String: Any] in
            [
                "id": result.id, "author": result.author, "downloads": result.downloads.map(String.init) ?? "",
                "likes": result.likes.map(String.init) ?? "", "license": result.license ?? "",
                "task": result.task ?? "", "cached": result.cached,
            ]
        }
        context["hasHubResults"] = !screen.hubResults.isEmpty
        context["otherCached"] = screen.otherCached.map { ["id": $0.id, "type": $0.type, "sizeText": $0.sizeText] }
        context["hasOtherCached"] = !screen.otherCached.isEmpty
        context["otherCachedTitle"] = screen.strings.otherCachedTitle
        context["rows"] = screen.rows.map { row -> [String: Any] in
            var values = Self.status(row.status)
            values["name"] = row.name
            values["description"] = row.description
            values["recommended"] = row.recommended
            values["format"] = row.format.rawValue
            values["sizeText"] = row.sizeText
            values["capabilities"] = row.capabilities.map(\.rawValue).joined(separator: ", ")
            values["usePath"] = row.usePath ?? "/models/\(row.name)"
            values["loadable"] = row.usePath != nil
            values["selectable"] = row.status.selectable
            // Absent, not "": this Mustache opens a section for an empty string.
            values["unservedReason"] = row.unservedReason
            return values
        }
        return render("models", context)
    }

    /// A row of the "Loaded models" panel (the script draws the same from `/api/ui/runtimes`).
    static func loadedRow(_ row: LoadedModelsScreen.Row) -> [String: Any] {
        var values: [String: Any] = [
            "name": row.name, "runtimeText": row.runtimeText, "state": row.state, "whereText": row.whereText,
            "memoryText": row.memoryText, "message": row.message ?? "",
        ]
        values["usePath"] = row.usePath
        return values
    }

    func model(_ screen: ModelDetailScreen, runtime: ModelRuntimeSummary?, offline: Bool) -> String {
        var context = Self.frame(screen.name, page: "model", model: screen.name, offline: offline)
        context.merge(Self.status(screen.status)) { $1 }
        if let runtime {
            // Absent, not "": this Mustache opens a section for an empty string.
            var values: [String: Any] = [
                "text": runtime.text, "fits": runtime.fits, "servable": runtime.servable,
                "loaded": runtime.state == "loaded" || runtime.state == "loading",
            ]
            values["installHint"] = runtime.installHint
            values["memoryText"] = runtime.memoryText
            values["stateText"] = runtime.state
            context["runtime"] = values
        }
        context["usePath"] = runtime?.usePath ?? ""
        context["selectable"] = screen.status.selectable
        context["name"] = screen.name
        context["description"] = screen.description
        context["planText"] = screen.planText
        context["fits"] = screen.fits
        context["location"] = screen.location
        context["facts"] = screen.facts.map { ["label": $0.label, "value": $0.value] }
        context["files"] = screen.files.map {
            ["path": $0.path, "sizeText": $0.sizeText, "cached": $0.cached, "facts": $0.facts ?? ""] as [String: Any]
        }
        return render("model", context)
    }

    func downloads(_ screen: DownloadsScreen, title: String, offline: Bool) -> String {
        var context = Self.frame(title, page: "downloads", offline: offline)
        context["overallFraction"] = screen.overallFraction ?? 0
        context["hasOverall"] = screen.overallFraction != nil
        context["overallText"] = screen.overallText ?? ""
        context["bandwidthText"] = screen.bandwidthText
        context["bandwidthMegabytes"] =
            screen.bandwidthBytesPerSecond.map { String(format: "%g", Double($0) / 1e6) } ?? ""
        context["emptyMessage"] = screen.emptyMessage
        context["throughputJSON"] = Self.json(screen.throughput) ?? ""
        context["throughputWidth"] = screen.throughput.width
        context["throughputHeight"] = screen.throughput.height
        context["throughputSummary"] = screen.throughput.summary
        context["rows"] = screen.rows.map { row -> [String: Any] in
            // Only when there is a chart: Mustache takes an empty string as true (and a name the row lacks is looked up
            // in the page, so the row's has a name of its own).
            var values: [String: Any] = row.throughput.flatMap(Self.json).map { ["rowChartJSON": $0] } ?? [:]
            values.merge([
                "name": row.name, "state": row.state, "stateText": row.stateText, "fraction": row.fraction ?? 0,
                "bytesText": row.bytesText, "speedText": row.speedText ?? "", "etaText": row.etaText ?? "",
                "filesText": row.filesText ?? "", "waiting": row.waiting ?? "", "message": row.message ?? "",
                "currentFile": row.currentFile ?? "", "connectionsText": row.connectionsText ?? "",
                "actions": row.actions.map { ["action": $0.action.rawValue, "label": $0.label] },
            ]) { old, _ in old }
            return values
        }
        return render("downloads", context)
    }

    func onboarding(_ screen: OnboardingScreen, offline: Bool) -> String {
        var context = Self.frame(screen.title, page: "onboarding", model: screen.name, offline: offline)
        context["name"] = screen.name
        context["title"] = screen.title
        context["step"] = screen.step.rawValue
        context["message"] = screen.message
        context["sizeText"] = screen.sizeText
        context["freeText"] = screen.freeText
        context["fraction"] = screen.fraction ?? 0
        context["hasFraction"] = screen.fraction != nil
        context["action"] = screen.action?.rawValue
        context["actionLabel"] = screen.actionLabel ?? ""
        return render("onboarding", context)
    }

    func storage(_ screen: StorageScreen, offline: Bool) -> String {
        var context = Self.frame("Storage", page: "storage", offline: offline)
        context["totalText"] = screen.totalText
        context["freeSpaceText"] = screen.freeSpaceText
        context["cacheFolder"] = screen.cacheFolder
        context["emptyMessage"] = screen.emptyMessage
        context["hasRows"] = !screen.rows.isEmpty
        context["detachedSummary"] = screen.detached.summary
        context["hasDetached"] = !screen.detached.removes.isEmpty
        if let chart = screen.chart {
            context["hasChart"] = true
            context["chartJSON"] = Self.json(chart) ?? ""
            context["chartHeight"] = chart.height
            context["chartSummary"] = chart.summary
        }
        context["rows"] = screen.rows.map { row -> [String: Any] in
            [
                "id": row.id, "type": row.type, "sizeText": row.sizeText, "kindText": row.kindText,
                "revisionsText": row.revisionsText, "lastUsedText": row.lastUsedText, "pinned": row.pinned,
                "deleteConfirmation": row.deleteConfirmation,
                "actions": row.actions.map { ["action": $0.action.rawValue, "label": $0.label] },
            ]
        }
        return render("storage", context)
    }

    func settings(_ screen: SettingsScreen, offline: Bool) -> String {
        var context = Self.frame("Settings", page: "settings", offline: offline)
        context["tokenState"] = screen.tokenState
        context["tokenSource"] = screen.tokenSource
        context["tokenStatus"] = screen.tokenStatus
        context["endpoint"] = screen.endpoint
        context["mirrors"] = screen.mirrors.map { ["label": $0.label, "value": $0.value] }
        context["mirrorsText"] = screen.mirrorsText
        context["network"] = screen.network.map { ["label": $0.label, "value": $0.value] }
        context["bandwidthMegabytes"] =
            screen.bandwidthBytesPerSecond.map { String(format: "%g", Double($0) / 1e6) } ?? ""
        context["bandwidthText"] = screen.network.first?.value ?? ""
        return render("settings", context)
    }

    /// A playground's page: its model selector, or what to do when there is nothing to choose.
    func playground(_ choices: PlaygroundChoices, offline: Bool) -> String {
        let title: String
        var context: [String: Any] = [:]
        switch choices.kind {
        case .chat:
            title = "Chat"
            context["presets"] = ChatPlayground.presets.map { ["name": $0.name] }
        case .embeddings:
            title = "Embeddings"
        case .transcribe:
            title = "Transcribe"
            context["limit"] = ByteFormat.string(Int64(TranscribePlayground.maximumAudioBytes))
        }
        context.merge(Self.frame(title, page: choices.kind.rawValue, offline: offline)) { $1 }
        context["ready"] = !choices.choices.isEmpty
        context["missing"] = choices.emptyMessage ?? ""
        context["kind"] = choices.kind.rawValue
        context["waitingText"] = choices.waitingText
        context["source"] = choices.choices.first { $0.id == choices.selected }?.label ?? ""
        context["choices"] = choices.choices.map { choice -> [String: Any] in
            [
                "id": choice.id, "label": choice.label, "state": choice.state, "detail": choice.detail,
                "selected": choice.id == choices.selected, "stateText": Self.choiceState(choice.state),
            ]
        }
        return render(choices.kind.rawValue, context)
    }

    /// What an option of a playground's selector adds to its label.
    static func choiceState(_ state: String) -> String {
        switch state {
        case "loaded": " (loaded)"
        case "loading": " (loading)"
        case "ready": " (loads when chosen)"
        case "failed": " (stopped: choose it to load again)"
        default: ""
        }
    }

    func mirror(_ screen: MirrorScreen, canSignIn: Bool) -> String {
        render(
            "mirror",
            [
                "readOnly": screen.readOnly, "readOnlyText": screen.readOnlyText ?? "", "canSignIn": canSignIn,
                "needsToken": false, "upstreamText": screen.upstreamText, "totalText": screen.totalText,
                "pullsText": screen.pullsText, "hasRows": !screen.rows.isEmpty,
                "counters": screen.counters.map { ["key": $0.key, "label": $0.label, "value": $0.value] },
                "rows": screen.rows.map { row -> [String: Any] in
                    [
                        "id": row.id, "type": row.type, "sizeText": row.sizeText, "filesText": row.filesText,
                        "lastUsedText": row.lastUsedText, "pinned": row.pinned,
                        "actions": row.actions.map {
                            ["action": $0.action.rawValue, "label": $0.label, "confirmation": $0.confirmation ?? ""]
                        },
                    ]
                },
                "pulls": screen.pulls.map {
                    ["repository": $0.repository, "path": $0.path, "fraction": $0.fraction, "bytesText": $0.bytesText]
                        as [String: Any]
                },
                "clients": screen.clients.map {
                    ["address": $0.address, "requestsText": $0.requestsText, "lastSeenText": $0.lastSeenText]
                },
                "charts": screen.charts.map { chart -> [String: Any] in
                    [
                        "key": chart.key, "title": chart.title, "json": Self.json(chart.chart) ?? "",
                        "width": chart.chart.width, "height": chart.chart.height, "summary": chart.chart.summary,
                    ]
                },
            ])
    }

    func mirrorSignIn(needsToken: Bool) -> String {
        render("mirror", ["needsToken": needsToken, "canSignIn": true, "readOnly": true])
    }

    func notice(_ title: String, _ text: String) -> String {
        var context = Self.frame(title, page: "notice", offline: false)
        context["text"] = text
        return render("notice", context)
    }
}

/// The stylesheet and the script, served from the package's resources.
enum UIAssets {
    static let known: Set<String> = ["app.css", "app.js", "chart.js", "mirror.js", "playground.js", "runtimes.js"]

    /// Read once, when first asked for: every page loads them, and a file read per request is disk work in a
    /// request's task, on the cooperative pool.
    private static let loaded: [String: (Data, String)] = Dictionary(
        uniqueKeysWithValues: known.compactMap { name in
            guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Resources/assets"),
                let data = try? Data(contentsOf: url)
            else { return nil }
            return (name, (data, name.hasSuffix(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8"))
        })

    static func load(_ name: String) -> (Data, String)? { loaded[name] }
}
