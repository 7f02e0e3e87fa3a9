#!/usr/bin/env bash
# The mirror's Xet index (serve --xet): how long indexing a file takes, and that the first plain download is not
# delayed by it. One 1 GiB file (half float32, half random) served from a folder by the release build; curl
# downloads it (discarding) from a mirror without --xet and from one with --xet whose first request starts the
# index; then the time until resolves carry X-Xet-Hash, measured from that first request.
#
#   bench/xet-mirror.sh [--mib 1024]
set -euo pipefail
mib=1024
while [ $# -gt 0 ]; do
    case "$1" in
        --mib) mib=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/modeldepot-xetmirror.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
. "$root/bench/lib.sh"
bin=$(build_release "$root")
mkdir -p "$work/plain/acme/big" "$work/xet/acme/big"
python3 - "$work/plain/acme/big/weights.bin" "$mib" <<'PY'
import math, os, struct, sys
path, mib = sys.argv[1], int(sys.argv[2])
with open(path, "wb") as out:
    half = mib << 19
    block = b"".join(struct.pack("<f", math.sin(i / 50) * 0.02) for i in range(1 << 18))
    for _ in range(half // len(block)): out.write(block)
    for _ in range(half // (1 << 20)): out.write(os.urandom(1 << 20))
PY
cp "$work/plain/acme/big/weights.bin" "$work/xet/acme/big/weights.bin"
# start_mirror FOLDER EXTRA…: sets `port`. Not in a subshell: the mirror's pid must reach `pids` for the cleanup.
start_mirror() {
    local folder=$1; shift
    port=$(free_port)
    "$bin" serve --root "$folder" --port "$port" "$@" > "$folder.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/healthz" > /dev/null && break; sleep 0.05; done
}
start_mirror "$work/plain"
plain=$port
start_mirror "$work/xet" --xet
xet=$port
fetch() { curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$1/acme/big/resolve/main/weights.bin"; }
fetch "$plain" > /dev/null  # the page cache warm for both (same bytes, two copies)
t_plain=$(fetch "$plain")
started=$(now)
t_xet=$(fetch "$xet")
while ! curl -sfI "http://127.0.0.1:$xet/acme/big/resolve/main/weights.bin" | grep -qi '^x-xet-hash'; do sleep 0.2; done
indexed=$(elapsed "$started" "$(now)")
t_after=$(fetch "$xet")
echo "$mib MiB file, curl to /dev/null, release build, 2 cores"
echo "  first download, mirror without --xet:            ${t_plain} s"
echo "  first download, --xet (starts the index):        ${t_xet} s"
echo "  download again once indexed:                     ${t_after} s"
echo "  index ready after the first request:             ${indexed} s ($(python3 -c "print(round($mib / $indexed, 1))") MiB/s)"
