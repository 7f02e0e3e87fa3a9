import Foundation
import Hummingbird
import NIOCore

/// The body of `POST …/paths-info/{revision}`: the paths asked about and whether to expand their entries. The
/// Hub takes a form (`paths=a&paths=b&expand=true`, what `huggingface_hub` sends) or a JSON object
/// (`{"paths": [...], "expand": true}`).
struct PathsInfoForm: Equatable {
    var paths: [String]
    var expand: Bool

    /// More than this is not a list of paths.
    static let maximumBodyBytes = 1 << 20
    /// The most paths one request may ask about, as the Hub allows.
    static let maximumPaths = 1000

    static func read(from request: Request) async throws -> PathsInfoForm {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: maximumBodyBytes)
        } catch {
            throw HubServerError(
                status: 413, code: nil, message: "A paths-info request may be at most 1 MiB.", commit: nil)
        }
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        let form = try parse(Data(body.readableBytesView), json: contentType.hasPrefix("application/json"))
        guard form.paths.count <= maximumPaths else {
            throw HubServerError(
                status: 413, code: nil,
                message:
                    "A paths-info request may ask about at most \(maximumPaths) paths (this one asks about \(form.paths.count)); split it.",
                commit: nil)
        }
        return form
    }

    static func parse(_ body: Data, json: Bool) throws -> PathsInfoForm {
        json ? try parseJSON(body) : parseForm(String(decoding: body, as: UTF8.self))
    }

    private static func parseJSON(_ body: Data) throws -> PathsInfoForm {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw HubServerError.badRequest("The paths-info body is not a JSON object like {\"paths\": [\"a.txt\"]}.")
        }
        let paths: [String]
        switch object["paths"] {
        case let list as [String]: paths = list
        case let one as String: paths = [one]
        default: throw HubServerError.badRequest("The paths-info body needs \"paths\": a list of file or folder paths.")
        }
        let expand = (object["expand"] as? Bool) ?? ((object["expand"] as? String)?.lowercased() == "true")
        return PathsInfoForm(paths: paths, expand: expand)
    }

    private static func parseForm(_ text: String) -> PathsInfoForm {
        var form = PathsInfoForm(paths: [], expand: false)
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            let value = parts.count > 1 ? decode(parts[1]) : ""
            switch name {
            case "paths", "paths[]": form.paths.append(value)
            case "expand": form.expand = value.lowercased() == "true" || value == "1"
            default: break
            }
        }
        return form
    }

    /// `application/x-www-form-urlencoded`: `+` is a space, then percent-decoding.
    private static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
