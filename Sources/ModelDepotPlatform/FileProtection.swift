import Foundation

/// Data protection for the cache on iOS and its kin.
package enum FileProtection {
    /// Gives `folder` (and what is created in it afterwards, which inherits the class) the protection
    /// `completeUntilFirstUserAuthentication` (`FileProtectionType`, `FileAttributeKey.protectionKey`): readable
    /// once the device was unlocked after boot, so a download relaunched in the background on a locked device
    /// can still write its files. iOS, tvOS, watchOS and visionOS only (macOS has no data protection classes
    /// for ordinary folders); never compiled here. Failures are ignored: the default class also works while
    /// unlocked.
    package static func untilFirstUnlock(_ folder: URL) {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            try? FileManager.default.setAttributes(
                [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication], ofItemAtPath: folder.path)
        #endif
    }
}
