import Foundation
import ModelDepotCore

/// Decodes a server's JSON answer; when it does not fit, the error says in words which field of which answer is
/// missing or of the wrong kind ("the field 'lfs.oid' is missing"), never Swift's `DecodingError` text.
package enum JSONAnswer {
    /// - Parameters:
    ///   - sender: who sent it (an endpoint's URL), `what` what it is ("the file list of acme/tiny"), and `hint`
    ///     what to check ("Check that the endpoint is a Hub.").
    package static func decode<T: Decodable>(
        _ type: T.Type, from body: [UInt8], sender: String, what: String, hint: String
    ) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch let error as DecodingError {
            throw ModelDepotError(
                .protocolViolation, "\(sender) sent \(what) that ModelDepot cannot read: \(describe(error)). \(hint)",
                underlying: error)
        } catch {
            throw ModelDepotError(
                .protocolViolation, "\(sender) sent \(what) that ModelDepot cannot read. \(hint)", underlying: error)
        }
    }

    /// What is wrong, for a person.
    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            return "the field '\(path(context.codingPath + [key]))' is missing"
        case .typeMismatch(let type, let context):
            return "the field '\(path(context.codingPath))' is not \(kind(type))"
        case .valueNotFound(let type, let context):
            return "the field '\(path(context.codingPath))' is null where \(kind(type)) is needed"
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return "it is not JSON"
        case .dataCorrupted(let context):
            return "the field '\(path(context.codingPath))' holds a value that cannot be read"
        @unknown default:
            return "it does not have the expected fields"
        }
    }

    /// `siblings[3].lfs.oid`; `(the answer)` for the top level.
    static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == "\(index)" {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text.isEmpty ? "(the answer)" : text
    }

    static func kind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Int64.Type, is Double.Type, is UInt64.Type: return "a number"
        case is Bool.Type: return "true or false"
        default:
            let name = "\(type)"
            if name.hasPrefix("Array") { return "a list" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return "what was expected (\(name))"
        }
    }
}
