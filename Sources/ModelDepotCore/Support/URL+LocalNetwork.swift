import Foundation

extension URL {
    /// Whether the host is this machine or on its local network: `localhost`, a `.local` name, or an address
    /// that is loopback (127.0.0.0/8, ::1), private (10/8, 172.16/12, 192.168/16, fc00::/7) or link-local
    /// (169.254/16, fe80::/10). There, a refused connection means nothing listens, not a passing hiccup of a
    /// load balancer on the internet.
    package var isOnLocalNetwork: Bool {
        guard var host = host?.lowercased() else { return false }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host.hasSuffix(".localhost") || host.hasSuffix(".local") { return true }
        if host.contains(":") {
            if host == "::1" { return true }
            let first = host.split(separator: ":", omittingEmptySubsequences: false).first ?? ""
            guard let group = UInt16(first, radix: 16) else { return false }
            return group & 0xffc0 == 0xfe80 || group & 0xfe00 == 0xfc00
        }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
        guard parts.count == 4 else { return false }
        switch (parts[0], parts[1]) {
        case (127, _), (10, _), (192, 168), (169, 254): return true
        case (172, let second): return (16...31).contains(second)
        default: return false
        }
    }

    /// Whether the host is this machine: `localhost` (or a name below it), 127.0.0.0/8 or ::1.
    package var isLoopback: Bool {
        guard var host = host?.lowercased() else { return false }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" { return true }
        // Every label a number: `127.0.0.1.attacker.example` is a DNS name that resolves anywhere.
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        let parts = labels.compactMap { UInt8($0) }
        return labels.count == 4 && parts.count == 4 && parts[0] == 127
    }
}
