import Foundation
import Hummingbird
import ModelDepot
import ModelDepotCore
import NIOCore

extension HubEndpoints {
    /// `GET /api/{type}s/{repo}/bom/{revision}`: the CycloneDX 1.6 bill of materials of a cached revision, every
    /// file hashed now (``BillOfMaterials``). A mirror serving a folder of plain files has none (404); a revision not
    /// fully cached is 404 naming what is missing; while another bill is being made, 429.
    func billOfMaterials(_ type: RepoType, _ id: RepoID, revision: String) async throws -> Response {
        guard billsOfMaterials.tryEnter() else {
            throw HubServerError(
                status: 429, code: "Busy",
                message: "Another bill of materials is being made (each hashes a whole model); try again shortly.",
                commit: nil, retryAfter: .seconds(5))
        }
        defer { billsOfMaterials.leave() }
        guard let (cache, origin) = try await source.servedCache(type: type, id: id) else {
            throw HubServerError(
                status: 404, code: "NotACache",
                message:
                    "This mirror serves \(id) from a folder of plain files (or not at all), not from a Hub cache: no bill of materials.",
                commit: nil)
        }
        let bill: BillOfMaterials
        do {
            bill = try await BillOfMaterials.make(
                cache: cache, repo: id, type: type, revision: revision, endpoint: origin)
        } catch let error as ModelDepotError where error.code == .notCached || error.code == .incompleteSnapshot {
            throw HubServerError(status: 404, code: "NotCached", message: error.message, commit: nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "application/vnd.cyclonedx+json; version=1.6", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bill.cycloneDX())))
    }
}
