import Foundation
import Hummingbird

extension HubEndpoints {
    /// `GET /api/whoami-v2`. A mirror behind a token says the token is accepted (the request got this far, so it
    /// is); an open mirror knows no users, and answers as the Hub answers an anonymous caller: 401.
    func whoami() throws -> Response {
        guard token != nil else {
            throw HubServerError(
                status: 401, code: nil,
                message:
                    "Invalid credentials in Authorization header: this mirror is open to anyone and knows no users.",
                commit: nil)
        }
        return Self.json([
            "type": "user", "id": "modeldepot-mirror", "name": "modeldepot-mirror",
            "fullname": "Client of a ModelDepot mirror", "isPro": false, "orgs": [[String: Any]](),
            "auth": ["type": "access_token", "accessToken": ["displayName": "mirror token", "role": "read"]],
        ])
    }
}
