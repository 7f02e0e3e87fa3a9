import Foundation

#if canImport(Security)
    import Security

    /// A keychain call that failed, in words (`SecCopyErrorMessageString`) and by its `OSStatus`.
    package struct KeychainError: Error, Sendable, CustomStringConvertible {
        package let description: String
        package let status: OSStatus

        init(_ description: String, status: OSStatus) {
            self.description = description
            self.status = status
        }
    }

    /// Generic-password items in Apple's keychain (`<Security/SecItem.h>`). Apple platforms only; never compiled
    /// here (no Apple SDK on the build machine): written from Apple's "Keychain services" documentation.
    package enum Keychain {
        /// The item's secret as text; nil when there is no such item.
        ///
        /// `SecItemCopyMatching` with `kSecClassGenericPassword`, `kSecAttrService`, `kSecAttrAccount`,
        /// `kSecReturnData` and `kSecMatchLimitOne`; `errSecItemNotFound` is "none", any other status an error.
        package static func read(service: String, account: String, accessGroup: String?) throws -> String? {
            var query = baseQuery(service: service, account: account, accessGroup: accessGroup)
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let data = result as? Data else {
                throw KeychainError(
                    "Cannot read the keychain item \(service)/\(account): \(describe(status))", status: status)
            }
            return String(decoding: data, as: UTF8.self)
        }

        /// Stores `secret` in the item, replacing what it held: `SecItemUpdate` when the item exists, `SecItemAdd`
        /// when it does not (deleting first and adding would lose the token when the add fails).
        /// `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`: a download relaunched in the background on a locked
        /// device must still read its token, and a token never travels to another device in a backup.
        package static func write(_ secret: String, service: String, account: String, accessGroup: String?) throws {
            let query = baseQuery(service: service, account: account, accessGroup: accessGroup)
            let changes: [String: Any] = [
                kSecValueData as String: Data(secret.utf8),
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            ]
            var status = SecItemUpdate(query as CFDictionary, changes as CFDictionary)
            if status == errSecItemNotFound {
                status = SecItemAdd(query.merging(changes) { _, new in new } as CFDictionary, nil)
            }
            guard status == errSecSuccess else {
                throw KeychainError(
                    "Cannot write the keychain item \(service)/\(account): \(describe(status))", status: status)
            }
        }

        /// Removes the item; nothing happens when there is none (`SecItemDelete`).
        package static func delete(service: String, account: String, accessGroup: String?) throws {
            let status = SecItemDelete(
                baseQuery(service: service, account: account, accessGroup: accessGroup) as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw KeychainError(
                    "Cannot delete the keychain item \(service)/\(account): \(describe(status))", status: status)
            }
        }

        /// An `OSStatus` in words: `SecCopyErrorMessageString` (`<Security/SecBase.h>`), with the number kept for a
        /// search (`strerror` knows nothing of keychain statuses).
        private static func describe(_ status: OSStatus) -> String {
            let message = SecCopyErrorMessageString(status, nil) as String?
            return "\(message ?? "unknown keychain error") (OSStatus \(status))"
        }

        private static func baseQuery(service: String, account: String, accessGroup: String?) -> [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }
    }
#endif
