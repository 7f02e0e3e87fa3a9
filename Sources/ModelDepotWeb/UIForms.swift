import Foundation
import ModelDepotCore

/// The body of `PUT /api/ui/bandwidth`: `{"bytesPerSecond": 20000000}`, or null / 0 for no limit.
enum BandwidthForm {
    static func parse(_ body: Data) throws -> Int64? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            object.keys.contains("bytesPerSecond")
        else {
            throw ModelDepotError(
                .invalidArgument, #"Send {"bytesPerSecond": N} (bytes per second; null or 0 for no limit)."#)
        }
        switch object["bytesPerSecond"] {
        case is NSNull: return nil
        case let number as NSNumber:
            let value = number.doubleValue
            guard value.isFinite, value >= 0, value <= 1e13, value == value.rounded() else {
                throw ModelDepotError(
                    .invalidArgument, "bytesPerSecond must be a whole number from 0 to 10000000000000, or null.")
            }
            return value == 0 ? nil : Int64(value)
        default:
            throw ModelDepotError(.invalidArgument, "bytesPerSecond must be a number or null.")
        }
    }
}

/// The bodies of the Storage screen's calls: `{"id": "acme/chat", "type": "model"}` names a cached repository,
/// `{"maxBytes": 5000000000}` a budget to prune to.
enum StorageForm {
    static func repository(_ body: Data) throws -> (id: String, type: String) {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let id = object["id"] as? String, !id.isEmpty
        else {
            throw ModelDepotError(
                .invalidArgument,
                #"Send {"id": "owner/name", "type": "model"} (type: model or dataset; model if left out)."#)
        }
        guard let type = (object["type"] ?? "model") as? String else {
            throw ModelDepotError(.invalidArgument, "type must be model or dataset.")
        }
        return (id, type)
    }

    static func budget(_ body: Data) throws -> Int64 {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let number = object["maxBytes"] as? NSNumber
        else {
            throw ModelDepotError(.invalidArgument, #"Send {"maxBytes": N}: the size in bytes the cache may keep."#)
        }
        let value = number.doubleValue
        guard value.isFinite, value >= 0, value <= 1e15, value == value.rounded() else {
            throw ModelDepotError(.invalidArgument, "maxBytes must be a whole number of bytes from 0 to 10^15.")
        }
        return Int64(value)
    }
}
