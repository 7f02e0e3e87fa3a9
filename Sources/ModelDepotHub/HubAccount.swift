import Foundation
import ModelDepotCore
import ModelDepotTransfer

/// Who a token belongs to, as the endpoint's `GET /api/whoami-v2` says (`hf auth whoami`).
package struct HubAccount: Sendable, Equatable, Codable {
    /// The account's name (`julien-c`), or what a mirror calls its clients.
    package var name: String
    package var fullname: String?
    /// `user` or `org`.
    package var type: String?

    package init(name: String, fullname: String? = nil, type: String? = nil) {
        self.name = name
        self.fullname = fullname
        self.type = type
    }
}

/// What the endpoint said about the token a client sends: the answer a settings screen shows.
package enum TokenCheck: Sendable, Equatable {
    /// The endpoint knows the token: it belongs to this account.
    case accepted(HubAccount)
    /// The endpoint refused it (HTTP 401 or 403): it is wrong, expired or revoked.
    case refused(status: Int)
    /// The client has no token to check.
    case noToken
    /// Offline mode: nothing was asked.
    case offline
    /// The endpoint could not be asked or answered something else; the message says what.
    case unavailable(String)
}

extension HubClient {
    /// Asks the endpoint who the client's token belongs to. Asked once, without retries: a person is waiting
    /// for the answer, and a retry would only delay "cannot reach".
    package func checkToken() async -> TokenCheck {
        guard !isOffline else { return .offline }
        guard token != nil else { return .noToken }
        let target = url("/api/whoami-v2")
        do {
            let response = try await send(method: "GET", url: target)
            let body = try await Self.collect(response.body, limit: 1 << 20, url: target)
            switch response.status {
            case 200..<300:
                let account = try? JSONDecoder().decode(HubAccount.self, from: Data(body))
                guard let account else {
                    return .unavailable(
                        "\(endpoint.absoluteString) answered whoami-v2 with something else than an account.")
                }
                return .accepted(account)
            case 401, 403:
                return .refused(status: response.status)
            default:
                return .unavailable("\(endpoint.absoluteString) answered whoami-v2 with HTTP \(response.status).")
            }
        } catch let error as ModelDepotError {
            return .unavailable(error.message)
        } catch {
            return .unavailable("Cannot reach \(endpoint.absoluteString): \(error).")
        }
    }
}
