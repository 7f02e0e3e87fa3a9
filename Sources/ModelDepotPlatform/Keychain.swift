import Foundation

#if canImport(Security)
    import Security

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
                throw SystemCallError(
                    "Cannot read the keychain item \(service)/\(account) (OSStatus \(status))", code: status)
            }
            return String(decoding: data, as: UTF8.self)
        }

        /// Stores `secret` in the item, replacing what it held. `kSecAttrAccessibleAfterFirstUnlock`: a download
        /// relaunched in the background on a locked device must still read its token.
        package static func write(_ secret: String, service: String, account: String, accessGroup: String?) throws {
            try delete(service: service, account: account, accessGroup: accessGroup)
            var item = baseQuery(service: service, account: account, accessGroup: accessGroup)
            item[kSecValueData as String] = Data(secret.utf8)
            item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
            let status = SecItemAdd(item as CFDictionary, nil)
            guard status == errSecSuccess else {
                throw SystemCallError(
                    "Cannot write the keychain item \(service)/\(account) (OSStatus \(status))", code: status)
            }
        }

        /// Removes the item; nothing happens when there is none (`SecItemDelete`).
        package static func delete(service: String, account: String, accessGroup: String?) throws {
            let status = SecItemDelete(
                baseQuery(service: service, account: account, accessGroup: accessGroup) as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw SystemCallError(
                    "Cannot delete the keychain item \(service)/\(account) (OSStatus \(status))", code: status)
            }
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
