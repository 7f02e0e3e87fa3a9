import Foundation
import ModelDepotCore
import Testing

@testable import ModelDepotTransfer

/// Proxy variables and `no_proxy` read as curl and Python read them, and proxy URLs this client cannot use
/// refused by name — without a network.
@Suite struct ProxySettingsTests {
    @Test func variablesAreReadAsPythonReadsThem() throws {
        let both = try ProxySettings.fromEnvironment([
            "HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:2", "HTTP_PROXY": "upper-http:3128",
            "ALL_PROXY": "socks5h://socks:1080", "NO_PROXY": "internal.example",
        ])
        #expect(both.https == ProxyServer(kind: .http, host: "lower", port: 2), "lower case wins")
        // Upper-case HTTP_PROXY is read (curl ignores it; Python does not), and a URL without a scheme is HTTP.
        #expect(both.http == ProxyServer(kind: .http, host: "upper-http", port: 3128))
        #expect(both.all == ProxyServer(kind: .socks5, host: "socks", port: 1080))
        #expect(both.proxy(for: URL(string: "https://huggingface.co/api/models")!)?.host == "lower")
        #expect(both.proxy(for: URL(string: "http://mirror.lan:8080/x")!)?.host == "upper-http")
        #expect(both.proxy(for: URL(string: "https://cdn.internal.example/x")!) == nil)
        let empty = try ProxySettings.fromEnvironment(["https_proxy": "", "HTTPS_PROXY": "http://unused:1"])
        #expect(empty.https == nil, "a lower-case variable set empty unsets the upper-case one, as in Python")
        #expect(try ProxySettings.fromEnvironment(["HTTPS_PROXY": "http://used:1"]).https?.host == "used")
        let allOnly = try ProxySettings.fromEnvironment(["all_proxy": "http://everything:8080"])
        #expect(allOnly.proxy(for: URL(string: "https://huggingface.co")!)?.host == "everything")
        #expect(
            allOnly.proxy(for: URL(string: "http://127.0.0.1:8080")!)?.host == "everything", "loopback is not special")
        #expect(try ProxySettings.fromEnvironment([:]).isEmpty)
    }

    @Test func credentialsAreDecodedAndNeverShown() throws {
        let proxy = try ProxyServer(parsing: "http://al%40ice:p%3Ass%20w@proxy.example:3128", setting: "HTTPS_PROXY")
        #expect(proxy.username == "al@ice" && proxy.password == "p:ss w")
        #expect(proxy.description == "http://***@proxy.example:3128")
        #expect(try ProxyServer(parsing: "http://proxy.example", setting: "x").port == 80)
        #expect(try ProxyServer(parsing: "http://[::1]:3128", setting: "x").host == "::1")
    }

    @Test func proxiesThisClientCannotUseAreRefusedByName() {
        let cases: [(String, String)] = [
            ("https://proxy.example:3128", "https:// proxy"),
            ("http://alice:2024#secret@proxy.example:3128", "not a proxy URL"),
            ("http://proxy.example:70000", "not a proxy URL"),
            ("socks5h://user:secret@proxy.example:1080", "SOCKS proxy with credentials"),
            ("ftp://proxy.example", "'ftp'"),
            ("http://", "not a proxy URL"),
        ]
        for (text, said) in cases {
            #expect {
                try ProxyServer(parsing: text, setting: "HTTPS_PROXY")
            } throws: { error in
                guard let error = error as? ModelDepotError else { return false }
                return error.code == .invalidArgument && error.message.contains("HTTPS_PROXY")
                    && error.message.contains(said) && !error.message.contains("secret")
            }
        }
        #expect(throws: ModelDepotError.self) { try ProxySettings.fromEnvironment(["all_proxy": "https://p:1"]) }
    }

    @Test func noProxyHasCurlsMeaning() {
        let list = NoProxy(
            "example.com, .corp.example,*.wild.example, 10.0.0.0/8,192.168.1.7 ,::1, [fd00::]/8, [2001:db8::1]:8443, mirror.lan:8080, CAPS.Example., [::2]:abc, 0.0.0.0/0"
        )
        let bypassed: [(String, Int)] = [
            ("example.com", 443), ("cdn.example.com", 443), ("corp.example", 443), ("a.b.corp.example", 80),
            ("10.1.2.3", 80), ("192.168.1.7", 8080), ("::1", 80),
            ("[::1]", 80), ("fd12:3456::1", 443), ("2001:db8::1", 8443), ("mirror.lan", 8080), ("caps.example", 443),
            ("EXAMPLE.COM.", 443),
        ]
        for (host, port) in bypassed { #expect(list.bypasses(host: host, port: port), "\(host):\(port)") }
        let proxied: [(String, Int)] = [
            ("notexample.com", 443), ("example.com.evil", 443), ("11.0.0.1", 80), ("192.168.1.8", 80),
            ("2001:db8::1", 443), ("mirror.lan", 80), ("fe80::1", 80), ("huggingface.co", 443),
            // curl and Python match nothing with a wildcard inside a name, and /0 is no range.
            ("x.wild.example", 443), ("wild.example", 443), ("8.8.8.8", 443), ("::2", 80),
            // `010.0.0.1` is octal to the C library (8.0.0.1): not the 10/8 it looks like.
            ("010.0.0.1", 80),
        ]
        for (host, port) in proxied { #expect(!list.bypasses(host: host, port: port), "\(host):\(port)") }
        #expect(NoProxy("*").bypasses(host: "anything", port: 1))
        #expect(!NoProxy("localhost,*").bypasses(host: "anything", port: 1), "* only as the whole value")
        #expect(!NoProxy("").bypasses(host: "localhost", port: 80))
        #expect(
            !NoProxy("10.0.0.0/99, bad/8, :x").bypasses(host: "10.0.0.1", port: 80), "malformed entries match nothing")
    }

    /// What URLSession gets on Apple platforms when the variables are set: CFNetwork's keys, no credentials.
    @Test func urlSessionGetsCFNetworksDictionary() throws {
        #expect(ProxySettings.none.connectionProxyDictionary == nil, "unset: the system's settings")
        let settings = try ProxySettings.fromEnvironment([
            "https_proxy": "http://alice:pw@proxy.corp:3128", "http_proxy": "socks5h://socks.corp:1080",
            "no_proxy": "internal.example,10.0.0.0/8,::1",
        ])
        let dictionary = try #require(settings.connectionProxyDictionary)
        #expect(dictionary["HTTPSEnable"] as? Int == 1 && dictionary["HTTPSProxy"] as? String == "proxy.corp")
        #expect(dictionary["HTTPSPort"] as? Int == 3128)
        #expect(dictionary["SOCKSProxy"] as? String == "socks.corp" && dictionary["HTTPEnable"] == nil)
        #expect(
            dictionary["ExceptionsList"] as? [String]
                == ["internal.example", "*.internal.example", "10.0.0.0/8", "0:0:0:0:0:0:0:1"])
        #expect(!"\(dictionary)".contains("pw"), "credentials go in the challenge's answer, not the dictionary")
    }

    @Test func addressesParseWithoutTheCLibrary() {
        #expect(IPAddress.parse("127.0.0.1") == [127, 0, 0, 1])
        #expect(IPAddress.parse("::1") == [UInt8](repeating: 0, count: 15) + [1])
        #expect(IPAddress.parse("::ffff:10.0.0.1")?.suffix(4) == [10, 0, 0, 1])
        #expect(IPAddress.parse("2001:db8::") == [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 12))
        for bad in [
            "256.0.0.1", "1.2.3", "1::2::3", "12345::", "example.com", "1.2.3.4.5", "", "010.0.0.1", "1.2.3.4::",
            "+1::",
        ] {
            #expect(IPAddress.parse(bad) == nil, "\(bad)")
        }
    }
}
