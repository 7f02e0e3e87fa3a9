"""An independent DNS-SD browser: python-zeroconf's own mDNS stack (its own multicast sockets, no avahi, no
dns_sd), looking for _hf-mirror._tcp as any client on the LAN would.

    mdns_browser.py SECONDS NAME

Prints one JSON object per instance named NAME that resolves within SECONDS (its addresses, port and TXT
properties), then exits 0; exits 1 when none did.
"""
import json
import sys
import time

from zeroconf import IPVersion, ServiceBrowser, ServiceListener, Zeroconf

SERVICE = "_hf-mirror._tcp.local."


class Listener(ServiceListener):
    def __init__(self):
        self.names = []

    def add_service(self, zc, type_, name):
        self.names.append(name)

    def update_service(self, zc, type_, name):
        pass

    def remove_service(self, zc, type_, name):
        pass


def main():
    seconds, wanted = float(sys.argv[1]), sys.argv[2]
    zc = Zeroconf(ip_version=IPVersion.V4Only)
    listener = Listener()
    ServiceBrowser(zc, SERVICE, listener)
    deadline = time.time() + seconds
    found = None
    while time.time() < deadline and found is None:
        for name in list(listener.names):
            if name == f"{wanted}.{SERVICE}":
                info = zc.get_service_info(SERVICE, name, timeout=2000)
                if info is not None:
                    found = info
        time.sleep(0.05)
    zc.close()
    if found is None:
        return 1
    print(json.dumps({
        "name": found.name,
        "addresses": found.parsed_addresses(IPVersion.V4Only),
        "port": found.port,
        "properties": {k.decode(): (v or b"").decode() for k, v in found.properties.items()},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
