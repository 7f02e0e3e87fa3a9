#!/usr/bin/env bash
# A served file changes in place and the mirror indexes it before anyone asks (issue 63): `serve --xet --root`
# serves a MIB MiB file (random bytes: nothing repeats), a client pulls it, 1 MiB in its middle is rewritten, and
# after PAUSE seconds (the mirror notices the change and re-indexes in the background) the same client pulls
# again. What the second pull moved is read from the loopback interface's counters (/proc/net/dev, `lo` receive),
# not from the client's own accounting; nothing else should use loopback while it runs.
# Goal (issue 63): after a 1 MiB change in a 64 MiB file and a 5 s pause, the next pull moves <= 4 MiB.
#
#   bench/xet-change.sh [--mib 64] [--pause 5]
# MODELDEPOT_BIN=path skips the release build.
set -euo pipefail
mib=64
pause=5
while [ $# -gt 0 ]; do
    case "$1" in
        --mib) mib=$2; shift 2 ;;
        --pause) pause=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/modeldepot-xetchange.XXXXXX)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
. "$root/bench/lib.sh"
bin=${MODELDEPOT_BIN:-$(build_release "$root")}
lo_received() { awk '$1 == "lo:" { print $2 }' /proc/net/dev; }

mkdir -p "$work/repos/acme/changing"
head -c $((mib << 20)) /dev/urandom > "$work/repos/acme/changing/model.bin"
"$bin" serve --root "$work/repos" --xet --port 0 > "$work/serve.out" 2> "$work/serve.log" &
server_pid=$!
for _ in $(seq 200); do grep -q listening "$work/serve.out" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's/^listening on \([^ ]*\).*/\1/p' "$work/serve.out")
# The first index is built at start; wait for it as a client would not (the first pull's Xet is not measured).
for _ in $(seq 600); do
    metrics=$(curl -sf "$url/metrics" || true)
    grep -q 'modeldepot_xet_files{state="indexed"} 1' <<< "$metrics" \
        && grep -q 'modeldepot_xet_files{state="pending"} 0' <<< "$metrics" && break
    sleep 0.1
done
pull() { "$bin" pull acme/changing --endpoint "$url" --cache-dir "$work/cache" --quiet > /dev/null; }
before=$(lo_received); pull; first=$(( $(lo_received) - before ))

# 1 MiB rewritten in the middle, in place (same size, new bytes).
dd if=/dev/urandom of="$work/repos/acme/changing/model.bin" bs=1M count=1 seek=$((mib / 2)) conv=notrunc status=none
sleep "$pause"
indexed=$(curl -sf "$url/metrics" | sed -n 's/^modeldepot_xet_files{state="\(indexed\|pending\)"} \(.*\)/\1=\2/p' | tr '\n' ' ')
before=$(lo_received); pull; second=$(( $(lo_received) - before ))

expected=$(sha256sum "$work/repos/acme/changing/model.bin" | cut -c1-64)
commit=$(cat "$work/cache/models--acme--changing/refs/main")
got=$(sha256sum "$work/cache/models--acme--changing/snapshots/$commit/model.bin" | cut -c1-64)
[ "$expected" = "$got" ] || { echo "the second pull did not produce the changed file" >&2; exit 1; }
goal=$((4 << 20))
printf 'xet change bench: %d MiB file, 1 MiB rewritten, %s s pause; mirror after the pause: %s\n' "$mib" "$pause" "$indexed"
printf '  first pull moved  %8.2f MiB on lo\n' "$(echo "$first / 1048576" | bc -l)"
printf '  second pull moved %8.2f MiB on lo (goal: <= 4 MiB): %s\n' "$(echo "$second / 1048576" | bc -l)" \
    "$([ "$second" -le "$goal" ] && echo met || echo MISSED)"
