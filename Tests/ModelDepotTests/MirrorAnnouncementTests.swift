import Foundation
import ModelDepotCore
import ModelDepotPlatform
import Testing

@testable import ModelDepot

/// DNS-SD TXT records and mirror announcements, read as what they are: bytes from anyone on the link.
@Suite struct MirrorAnnouncementTests {
    @Test func anAnnouncementRoundTripsAsRFC6763LaysItOut() throws {
        let announcement = MirrorAnnouncement(path: "/hub", tokenRequired: true, scheme: "https")
        let bytes = announcement.text.bytes
        #expect(bytes.first == UInt8("txtvers=1".utf8.count))
        #expect(String(decoding: bytes, as: UTF8.self).contains("path=/hub"))
        #expect(MirrorAnnouncement(parsing: DNSTextRecord(parsing: bytes)) == announcement)
        #expect(DNSTextRecord([]).bytes == [0], "an empty record is one empty string (§6.1)")
        let endpoint = try #require(announcement.endpoint(address: "10.0.0.7", port: 8443))
        #expect(endpoint.absoluteString == "https://10.0.0.7:8443/hub")
        #expect(
            MirrorAnnouncement(tokenRequired: false).endpoint(address: "192.168.1.2", port: 8080)?.absoluteString
                == "http://192.168.1.2:8080")
    }

    @Test func malformedRecordsAreReadAsFarAsTheyHold() {
        // A length past the end, an empty string, a key-less string, a repeated key (first wins, any case).
        let record = DNSTextRecord(
            parsing: [5] + Array("path=".utf8) + [0] + [6] + Array("=value".utf8) + [10] + Array("PATH=/evil".utf8)
                + [9] + Array("token=non".utf8) + [200] + Array("cut".utf8))
        #expect(record["path"] == "")
        #expect(record["Path"] == "")
        #expect(record.pairs.count == 2, "\(record.pairs)")
        #expect(record["token"] == "non")
        #expect(DNSTextRecord(parsing: []).pairs.isEmpty)
        #expect(DNSTextRecord(parsing: [3] + Array("key".utf8))["key"] == nil, "a key alone has no value")
    }

    @Test(arguments: [
        "path=/../etc", "path=relative", "path=/a/./b", "path=/a%2e%2e", "path=/a?b", "path=/a#b", "path=/a\\b",
        "path=/a\u{7}b", "scheme=file", "scheme=javascript", "token=maybe", "txtvers=2",
    ])
    func announcementsThatDoNotHoldUpAreIgnored(pair: String) {
        let text = DNSTextRecord(parsing: [UInt8(pair.utf8.count)] + Array(pair.utf8))
        #expect(MirrorAnnouncement(parsing: text) == nil, "\(pair)")
    }

    @Test func addressesNoLANHostHasAreRefused() {
        let announcement = MirrorAnnouncement(tokenRequired: false)
        for address in [
            "127.0.0.1", "127.1.2.3", "0.0.0.0", "224.0.0.251", "255.255.255.255", "240.0.0.1", "10.0.0", "10.0.0.1.2",
            "10.0.0.256", "010.0.0.1", "example.com", "::1", "",
        ] {
            #expect(announcement.endpoint(address: address, port: 8080) == nil, "\(address)")
        }
        #expect(announcement.endpoint(address: "10.0.0.1", port: 0) == nil)
        #expect(announcement.endpoint(address: "169.254.3.4", port: 80) != nil, "link-local is a LAN address")
    }

    @Test func aDiscoveredMirrorIsContentOnlyAndGetsNoToken() throws {
        func announced(text: [UInt8], addresses: [String] = ["10.0.0.9"]) -> DNSServiceInstance {
            DNSServiceInstance(
                name: "rack-3", host: "rack-3.local.", port: 8080, text: text, addresses: addresses, interface: 2)
        }
        let instance = announced(text: MirrorAnnouncement(tokenRequired: true).text.bytes)
        let found = try #require(MirrorDiscovery.mirror(from: instance))
        #expect(found.tokenRequired)
        #expect(found.hubMirror.token == nil)
        #expect(found.hubMirror.trust == .contentOnly)
        // The first usable address wins; one no LAN host has is passed over.
        let skipped = announced(
            text: MirrorAnnouncement(tokenRequired: false).text.bytes, addresses: ["127.0.0.1", "10.1.2.3"])
        #expect(MirrorDiscovery.mirror(from: skipped)?.endpoint.host == "10.1.2.3")
        let hostile = announced(text: Array("\u{9}path=/../".utf8))
        #expect(MirrorDiscovery.mirror(from: hostile) == nil)
        // A name is printed to terminals: no escape sequence of the announcer's reaches one.
        var escaping = announced(text: MirrorAnnouncement(tokenRequired: false).text.bytes)
        escaping.name = "mirror\u{1B}]0;owned\u{7}\u{9B}2J\u{7F}"
        #expect(MirrorDiscovery.mirror(from: escaping)?.name == "mirror?]0;owned??2J?")
    }

    @Test func discoveryIsOnlyWhatTheEnvironmentSays() {
        #expect(HubEnvironment(variables: ["MODELDEPOT_DISCOVER": "1"]).discoversMirrors)
        #expect(HubEnvironment(variables: ["MODELDEPOT_DISCOVER": "yes"]).discoversMirrors)
        #expect(!HubEnvironment(variables: ["MODELDEPOT_DISCOVER": "0"]).discoversMirrors)
        #expect(!HubEnvironment(variables: [:]).discoversMirrors)
    }
}
