#!/usr/bin/env bash
# Fleet benchmark: N clients pull one model through a pull-through mirror (`modeldepot serve --upstream`), against
# one client pulling it straight from the upstream, same run, same machine.
#
#   bench/fleet.sh [--size-mib 128] [--clients 16] [--rate 32MB]
#
# The upstream is `modeldepot serve --root` with every response capped at --rate (per connection, like a CDN
# edge's per-connection throughput). Reported:
#   - upstream bytes for the whole fleet, in copies of the model (goal: 1);
#   - time until the last of the N clients is done, over the single direct pull's time (goal: <= 1.5).
# Every client's snapshot is checked byte for byte.
set -euo pipefail
size_mib=128
clients=16
rate=32MB
while [ $# -gt 0 ]; do
    case "$1" in
        --size-mib) size_mib=$2; shift 2 ;;
        --clients) clients=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/modeldepot-fleetbench.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
. "$root/bench/lib.sh"
bin=${MODELDEPOT_BIN:-$(build_release "$root")}  # MODELDEPOT_BIN: an already built binary

# serve OUT ARGS…: starts `modeldepot serve ARGS --port 0` and prints its URL.
serve() {
    local out=$1; shift
    "$bin" serve "$@" --port 0 > "$out" 2>"$out.log" & pids+=($!)
    for _ in $(seq 200); do grep -q listening "$out" 2>/dev/null && break; sleep 0.05; done
    sed -n 's/^listening on \([^ ]*\).*/\1/p' "$out"
}
# metric URL NAME: a counter from a server's /metrics.
metric() { curl -s "$1/metrics" | awk -v name="$2" '$1 == name { print $2 }'; }

repo="$work/repos/acme/fleet"
mkdir -p "$repo"
head -c $((size_mib << 20)) /dev/urandom > "$repo/model.safetensors"
echo '{"model_type": "bench"}' > "$repo/config.json"
(cd "$repo" && sha256sum model.safetensors config.json) > "$work/expected.sum"
upstream=$(serve "$work/upstream.out" --root "$work/repos" --faults "rate=$rate")
# Warm the upstream's hash index and the page cache, so both runs meet the same upstream.
curl -s -o /dev/null "$upstream/api/models/acme/fleet/tree/main?recursive=true"
cat "$repo/model.safetensors" > /dev/null
size=$(stat -c %s "$repo/model.safetensors")

check() {
    (cd "$1/models--acme--fleet/snapshots"/* && sha256sum -c --quiet "$work/expected.sum") ||
        { echo "the snapshot in $1 is wrong" >&2; exit 1; }
}

# --- one client, straight from the upstream ---------------------------------------------------------------
before=$(metric "$upstream" modeldepot_served_bytes_total)
start=$(now)
"$bin" pull acme/fleet --endpoint "$upstream" --cache-dir "$work/direct" --quiet > /dev/null
direct=$(elapsed "$start" "$(now)")
check "$work/direct"
direct_bytes=$(( $(metric "$upstream" modeldepot_served_bytes_total) - before ))
echo "direct: one client in ${direct}s, the upstream sent $direct_bytes bytes"

# pull_all ENDPOINT PREFIX: the N clients at once, each into its own cache; prints the time until the last is done.
pull_all() {
    local endpoint=$1 prefix=$2 start fleet_pids=()
    start=$(now)
    for i in $(seq "$clients"); do
        "$bin" pull acme/fleet --endpoint "$endpoint" --cache-dir "$work/$prefix-$i" --quiet > /dev/null &
        fleet_pids+=($!)
    done
    for pid in "${fleet_pids[@]}"; do wait "$pid"; done
    elapsed "$start" "$(now)"
    for i in $(seq "$clients"); do check "$work/$prefix-$i"; rm -rf "${work:?}/$prefix-$i"; done
}

# --- the fleet, straight from the upstream (the same client work, N upstream copies) -------------------------
before=$(metric "$upstream" modeldepot_served_bytes_total)
fleet_direct=$(pull_all "$upstream" direct-client)
fleet_direct_bytes=$(( $(metric "$upstream" modeldepot_served_bytes_total) - before ))
echo "fleet without a mirror: $clients clients straight from the upstream, the last done in ${fleet_direct}s; the upstream sent $fleet_direct_bytes bytes"

# --- the fleet, through a pull-through mirror ---------------------------------------------------------------
mirror=$(serve "$work/mirror.out" --upstream "$upstream" --cache-dir "$work/mirror-cache")
before=$(metric "$upstream" modeldepot_served_bytes_total)
fleet=$(pull_all "$mirror" client)
upstream_bytes=$(( $(metric "$upstream" modeldepot_served_bytes_total) - before ))
echo "fleet: $clients clients through the mirror, the last done in ${fleet}s; the upstream sent $upstream_bytes bytes"
echo "mirror: pulls $(metric "$mirror" modeldepot_upstream_pulls_total), joined $(metric "$mirror" modeldepot_upstream_pulls_joined_total), cache hits $(metric "$mirror" modeldepot_cache_hits_total), served $(metric "$mirror" modeldepot_served_bytes_total) bytes"
# --- the mirror's own fan-out: 16 curl clients (no hashing, no disk) behind a fresh mirror's first pull ------
fresh=$(serve "$work/fresh.out" --upstream "$upstream" --cache-dir "$work/fresh-cache")
commit=$(curl -s "$fresh/api/models/acme/fleet/revision/main" | python3 -c "import json,sys; print(json.load(sys.stdin)['sha'])")
start=$(now)
curl_pids=()
for i in $(seq "$clients"); do
    curl -s -o "$work/curl-$i" "$fresh/acme/fleet/resolve/$commit/model.safetensors" & curl_pids+=($!)
done
for pid in "${curl_pids[@]}"; do wait "$pid"; done
fanout=$(elapsed "$start" "$(now)")
for i in $(seq "$clients"); do
    cmp -s "$work/curl-$i" "$repo/model.safetensors" || { echo "curl client $i got other bytes" >&2; exit 1; }
    rm -f "$work/curl-$i"
done
echo "fan-out: $clients curl clients behind the first pull of a fresh mirror, the last done in ${fanout}s"

python3 -c "print(f'upstream copies for the fleet: {$upstream_bytes / $size:.3f} (goal: 1; {$clients} without the mirror)')"
python3 -c "print(f'upstream copies without the mirror: {$fleet_direct_bytes / $size:.3f}')"
python3 -c "print(f'last of $clients clients / one direct pull: {$fleet / $direct:.2f}x (goal <= 1.5)')"
python3 -c "print(f'last of $clients clients through the mirror / straight from the upstream: {$fleet / $fleet_direct:.2f}x')"
python3 -c "print(f'last of $clients curl clients behind a fresh mirror / one direct pull: {$fanout / $direct:.2f}x (the mirror side of the goal)')"
echo "($(nproc) cores: the $clients clients, the mirror and the upstream share them; the clients alone hash and write $((clients * size_mib)) MiB)"
