import Foundation
import ModelDepotCore
import Testing

@testable import ModelDepotTransfer

/// A server's answer that does not fit is worded by field, not with Swift's `DecodingError` text.
@Suite struct JSONAnswerTests {
    /// A tree entry's LFS part, as the Hub sends it.
    struct LFS: Decodable {
        let oid: String
        let size: Int
    }

    /// A tree entry, as the Hub sends it.
    struct Entry: Decodable {
        let path: String
        let lfs: LFS?
    }

    static func message(_ json: String) -> String {
        do {
            _ = try JSONAnswer.decode(
                [Entry].self, from: Array(json.utf8), sender: "https://hub.example", what: "the file list of acme/tiny",
                hint: "Check that the endpoint is a Hub.")
            return "decoded"
        } catch let error as ModelDepotError {
            #expect(error.code == .protocolViolation)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func aMissingOrWrongFieldIsNamed() {
        let missing = Self.message(#"[{"path": "a"}, {"path": "w.bin", "lfs": {"size": 3}}]"#)
        #expect(
            missing
                == "https://hub.example sent the file list of acme/tiny that ModelDepot cannot read: the field '[1].lfs.oid' is missing. Check that the endpoint is a Hub.",
            "\(missing)")
        #expect(!missing.contains("keyNotFound") && !missing.contains("CodingKeys"))
        #expect(Self.message(#"[{"path": 7}]"#).contains("the field '[0].path' is not a string"))
        #expect(
            Self.message(#"[{"path": "a", "lfs": {"oid": "x", "size": "big"}}]"#).contains(
                "'[0].lfs.size' is not a number"))
        #expect(Self.message(#"[{"path": null}]"#).contains("the field '[0].path' is null"))
        #expect(Self.message("<html>").contains(": it is not JSON."))
        #expect(Self.message(#"{"path": "a"}"#).contains("the field '(the answer)' is not a list"))
    }
}
