import Foundation
import HTTPTypes
import Hummingbird
import ModelDepot
import NIOCore

/// The shapes of the web app's answers (and the mirror dashboard's): JSON values, `{"error": …}`, pages, redirects.
enum UIResponses {
    static func json(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }

    /// `{"error": message, "code": code}`: the code (a `ModelDepotError` code's name) lets a page offer what fits,
    /// "Load anyway" for `insufficientMemory`.
    static func error(_ status: Int, _ message: String, code: String? = nil) -> Response {
        var object = ["error": message]
        object["code"] = code
        let data = (try? JSONEncoder().encode(object)) ?? Data()
        return Response(
            status: HTTPResponse.Status(code: status), headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A bill of materials as CycloneDX JSON, saved by a browser as `NAME.cdx.json` (the name is a catalog name:
    /// ASCII letters, digits, `.`, `-`, `_`; anything else is dropped from the file name).
    static func billOfMaterials(_ bill: BillOfMaterials, fileName name: String) -> Response {
        let safe = String(
            name.unicodeScalars.filter {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0))
            })
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/vnd.cyclonedx+json; version=1.6",
                .contentDisposition: "attachment; filename=\"\(safe.isEmpty ? "model" : safe).cdx.json\"",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bill.cycloneDX())))
    }

    static func html(_ status: Int, _ body: String) -> Response {
        Response(
            status: HTTPResponse.Status(code: status), headers: [.contentType: "text/html; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    /// A packaged asset (stylesheet, script, icon), or nil when there is none of that name.
    static func asset(_ name: String) -> Response? {
        guard let (data, type) = UIAssets.load(name) else { return nil }
        return Response(
            status: .ok, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Whether a path is the JSON API's (answered in JSON) rather than a page's (answered in HTML).
    static func isAPI(_ path: String) -> Bool { path.hasPrefix("/api/") || path.hasPrefix("/ui/api/") }
}

extension RequestGuard.Refusal {
    /// A refusal's answer; a page (rather than JSON) for a page without a session, when `pages` are given.
    func response(path: String, pages: UIPages?) -> Response {
        var response: Response
        switch self {
        case .foreignHost(let host):
            response = UIResponses.error(421, "This server does not answer for the host '\(host.prefix(100))'.")
        case .noSession:
            if let pages, !UIResponses.isAPI(path) {
                response = UIResponses.html(
                    401,
                    pages.notice(
                        "Open the link modeldepot printed",
                        "This page needs the one-time link `modeldepot ui` printed when it started (or --token-file's token)."
                    ))
            } else {
                response = UIResponses.error(401, "Open the link `modeldepot ui` printed first; it starts a session.")
            }
        case .crossSite(let what):
            response = UIResponses.error(403, "Refused a change requested from another site (\(what)).")
        case .notJSON:
            response = UIResponses.error(415, "Send changes as JSON (Content-Type: application/json).")
        }
        response.headers[.connection] = "close"
        return response
    }
}
