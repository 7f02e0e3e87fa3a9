import Foundation
import ModelDepotCore
import Testing

/// Which endpoints count as this machine or its local network, where a refused connection is final.
struct LocalNetworkTests {
    @Test func localNetworkHosts() {
        for local in [
            "http://127.0.0.1:8080", "http://localhost", "http://10.1.2.3", "http://172.20.0.1", "http://192.168.1.9",
            "http://169.254.3.4", "http://[::1]:80", "http://[fe80::1]", "http://[fd12::5]", "http://nas.local",
        ] {
            #expect(URL(string: local)!.isOnLocalNetwork, "\(local)")
        }
        for remote in [
            "https://huggingface.co", "http://8.8.8.8", "http://172.32.0.1", "http://[2001:db8::1]",
            "http://192.169.0.1", "http://localhost.example.com",
        ] {
            #expect(!URL(string: remote)!.isOnLocalNetwork, "\(remote)")
        }
    }
}
