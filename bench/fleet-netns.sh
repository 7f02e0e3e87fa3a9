#!/usr/bin/env bash
# The fleet on a simulated network (scripts/netns-fleet): a hub host behind a slow link (200 Mbit/s by default), two
# pull-through mirror nodes, the nginx cache tier of deploy/nginx/modeldepot-fleet.conf, and N client hosts on a
# 1 Gbit/s LAN, each its own network namespace. Measured, same run:
#   - N clients pulling a repository (4 weight files and a config; --mib in all) through the tier at once: upstream
#     bytes (counted at the hub host's interface) over the repository's size (goal 1.00), and the time until the
#     last client is done over the physical limit (the repository once over the hub link, then N copies out of
#     nginx's one LAN port), the formula printed (goal <= 1.15);
#   - the same N clients each pulling straight from the hub, side by side;
#   - the tier again, warm (every file in the caches);
#   - a mirror node killed and its link taken down mid-pull: every client finishes through the other, nothing
#     corrupt, upstream copies still <= 1.05;
#   - a second, small repository (1/8 the size) pulled by one more client while the N pull the first, against the
#     same pull with the tier idle (both cold): no head-of-line blocking means it need not wait for the first;
#   - a mirror found on the LAN with DNS-SD (`serve --advertise` on m1, avahi-daemon and a D-Bus bus per host):
#     how long `discover` takes, and one client's `pull --discover` (content from the LAN mirror, checked against
#     the hub's listing) cold and warm, against the same client straight from the hub.
# Every client's snapshot is checked file by file. Needs root; about (2N + 5) × --mib of disk (256 MiB: ~10 GiB at
# N = 16). Finishes in a few minutes at the default size.
#
#   bench/fleet-netns.sh [--mib 256] [--clients 16] [--hub-rate 200mbit] [--lan-rate 1gbit] [--hub-delay 20ms]
set -euo pipefail
mib=256 clients=16 hub_rate=200mbit lan_rate=1gbit hub_delay=20ms
while [ $# -gt 0 ]; do
    case "$1" in
        --mib) mib=$2; shift 2 ;;
        --clients) clients=$2; shift 2 ;;
        --hub-rate) hub_rate=$2; shift 2 ;;
        --lan-rate) lan_rate=$2; shift 2 ;;
        --hub-delay) hub_delay=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
net="$root/scripts/netns-fleet"
id=$(printf 'b%05d' $((RANDOM % 100000)))
work=$(mktemp -d /tmp/modeldepot-fleetns.XXXXXX)
cleanup() { "$net" down "$id" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
. "$root/bench/lib.sh"
bin=${MODELDEPOT_BIN:-$(build_release "$root")}
command -v nginx >/dev/null || { echo "bench/fleet-netns.sh needs nginx: apt-get install -y nginx" >&2; exit 1; }

"$net" up "$id" --clients $((clients + 1)) --mirrors 2 --hub-rate "$hub_rate" --lan-rate "$lan_rate" --hub-delay "$hub_delay"
on() { local host=$1; shift; "$net" exec "$id" "$host" "$@"; }
hub=$("$net" addr "$id" hub) nginx_address=$("$net" addr "$id" nginx)
m1=$("$net" addr "$id" m1) m2=$("$net" addr "$id" m2)

repo="$work/repos/acme/fleet"
mkdir -p "$repo"
for i in 1 2 3 4; do head -c $((mib << 18)) /dev/urandom > "$repo/model-0000$i-of-00004.safetensors"; done
echo '{"model_type": "bench"}' > "$repo/config.json"
(cd "$repo" && sha256sum ./*) > "$work/expected.sum"
size=$(du -cb "$repo"/* | tail -1 | cut -f1)
second="$work/repos/acme/second"
mkdir -p "$second"
head -c $((mib << 17)) /dev/urandom > "$second/model.safetensors"
echo '{"model_type": "second"}' > "$second/config.json"

# wait_for URL HOST: until HOST reaches URL.
wait_for() { for _ in $(seq 400); do on "$2" curl -sf -o /dev/null "$1" && return; sleep 0.05; done; echo "no answer from $1" >&2; exit 1; }
on hub "$bin" serve --root "$work/repos" --host "$hub" --port 8080 > "$work/hub.log" 2>&1 &
wait_for "http://$hub:8080/healthz" c1
# Warm the hub's hash index and page cache, so every run meets the same hub.
on c1 curl -s -o /dev/null "http://$hub:8080/api/models/acme/fleet/tree/main?recursive=true"
cat "$repo"/* > /dev/null
start_node() {  # start_node HOST ADDRESS CACHE
    on "$1" "$bin" serve --upstream "http://$hub:8080" --cache-dir "$3" --host "$2" --port 8080 \
        --allowed-host "$nginx_address" --max-pulls-per-client 72 > "$work/$1.log" 2>&1 &
    wait_for "http://$2:8080/healthz" c1
}
start_tier() {  # fresh node caches and a fresh nginx cache
    rm -rf "$work/m1-cache" "$work/m2-cache" "$work/nginx"
    start_node m1 "$m1" "$work/m1-cache"
    start_node m2 "$m2" "$work/m2-cache"
    mkdir -p "$work/nginx/tmp"
    sed -e "s|@CACHE@|$work/nginx/cache|" -e "s|@LISTEN@|$nginx_address:8080|" -e "s|@NODE1@|$m1:8080|" \
        -e "s|@NODE2@|$m2:8080|" "$root/deploy/nginx/modeldepot-fleet.conf" > "$work/nginx/fleet.conf"
    cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 2;
daemon off;
user root;
error_log $work/nginx/error.log;
pid $work/nginx/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $work/nginx/tmp/body; proxy_temp_path $work/nginx/tmp/proxy;
    fastcgi_temp_path $work/nginx/tmp/fcgi; uwsgi_temp_path $work/nginx/tmp/uwsgi; scgi_temp_path $work/nginx/tmp/scgi;
    sendfile on;
    include $work/nginx/fleet.conf;
}
CONF
    on nginx nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" &
    wait_for "http://$nginx_address:8080/api/models/acme/fleet" c1
}
stop_tier() {
    for host in m1 m2 nginx; do
        for pid in $(ip netns pids "md$id-$host"); do kill -9 "$pid" 2>/dev/null || true; done
    done
    sleep 0.2
}

check() {  # check CACHE: every file of the snapshot byte for byte
    (cd "$1/models--acme--fleet/snapshots"/* && sha256sum -c --quiet "$work/expected.sum") ||
        { echo "the snapshot in $1 is wrong" >&2; exit 1; }
}

# pull_all ENDPOINT PREFIX: the N clients at once, each from its own host into its own cache; prints the time until
# the last is done.
pull_all() {
    local endpoint=$1 prefix=$2 started client_pids=()
    started=$(now)
    for i in $(seq "$clients"); do
        on "c$i" "$bin" pull acme/fleet --endpoint "$endpoint" --cache-dir "$work/$prefix-$i" --quiet > /dev/null 2>"$work/$prefix-$i.err" &
        client_pids+=($!)
    done
    local failed=0
    for pid in "${client_pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done
    elapsed "$started" "$(now)"
    [ "$failed" -eq 0 ] || { echo "$failed clients failed: $(cat "$work/$prefix"-*.err | head -5)" >&2; exit 1; }
    for i in $(seq "$clients"); do check "$work/$prefix-$i"; rm -rf "${work:?}/$prefix-$i"; done
}
hub_tx() { "$net" bytes "$id" hub tx; }
rate_bits() { python3 -c "
import re,sys
m = re.fullmatch(r'([0-9.]+)([kmg]?)bit', sys.argv[1].lower())
print(float(m.group(1)) * {'': 1, 'k': 1e3, 'm': 1e6, 'g': 1e9}[m.group(2)])" "$1"; }
hub_bits=$(rate_bits "$hub_rate") lan_bits=$(rate_bits "$lan_rate")
limit_tier=$(python3 -c "print($size * 8 / $hub_bits + $clients * $size * 8 / $lan_bits)")
limit_direct=$(python3 -c "print($clients * $size * 8 / $hub_bits)")

# --- through the tier, cold -----------------------------------------------------------------------------------
start_tier
before=$(hub_tx)
t_tier=$(pull_all "http://$nginx_address:8080" tier)
tier_bytes=$(( $(hub_tx) - before ))
# --- the tier again, warm (same caches) ------------------------------------------------------------------------
before=$(hub_tx)
t_warm=$(pull_all "http://$nginx_address:8080" warm)
warm_bytes=$(( $(hub_tx) - before ))
stop_tier
# --- a node fails mid-pull -------------------------------------------------------------------------------------
start_tier
before=$(hub_tx)
(sleep $(python3 -c "print($size * 8 / $hub_bits / 3)"); for pid in $(ip netns pids "md$id-m1"); do kill -9 "$pid"; done;
    "$net" link "$id" m1 down) &
t_fail=$(pull_all "http://$nginx_address:8080" failing)
fail_bytes=$(( $(hub_tx) - before ))
stop_tier
"$net" link "$id" m1 up
# --- a second repository, alone and while the fleet pulls the first (both cold) ---------------------------------
extra="c$((clients + 1))"
pull_second() {
    local started; started=$(now)
    on "$extra" "$bin" pull acme/second --endpoint "http://$nginx_address:8080" --cache-dir "$work/second-$1" --quiet > /dev/null
    elapsed "$started" "$(now)"
    cmp -s "$second/model.safetensors" "$work/second-$1/models--acme--second/snapshots/"*/model.safetensors ||
        { echo "the second repository arrived wrong" >&2; exit 1; }
    rm -rf "${work:?}/second-$1"
}
start_tier
t_second_alone=$(pull_second alone)
stop_tier
start_tier
( sleep 1; pull_second during > "$work/second-during.time" ) &
second_job=$!
t_first=$(pull_all "http://$nginx_address:8080" first)
wait "$second_job"
t_second_during=$(cat "$work/second-during.time")
stop_tier
# --- each client straight from the hub -------------------------------------------------------------------------
before=$(hub_tx)
t_direct=$(pull_all "http://$hub:8080" direct)
direct_bytes=$(( $(hub_tx) - before ))
# --- a mirror found on the LAN (DNS-SD) -------------------------------------------------------------------------
"$net" mdns "$id" m1 "$extra"
on m1 "$bin" serve --upstream "http://$hub:8080" --cache-dir "$work/m1-lan" --host "$m1" --port 8080 \
    --advertise --advertise-name "bench mirror" > "$work/m1-lan.log" 2>&1 &
wait_for "http://$m1:8080/healthz" c1
started=$(now)
on "$extra" "$bin" discover --json > "$work/discover.json"
t_discover=$(elapsed "$started" "$(now)")
# Again, the daemons settled (the first browse meets avahi still probing its host name).
started=$(now)
on "$extra" "$bin" discover --json > /dev/null
t_discover_again=$(elapsed "$started" "$(now)")
grep -q '"bench mirror"' "$work/discover.json" || { echo "discover did not find the mirror: $(cat "$work/discover.json")" >&2; exit 1; }
pull_one() {  # pull_one NAME [--discover]: one client, alone; prints its time
    local name=$1 started; shift
    started=$(now)
    on "$extra" "$bin" pull acme/fleet --endpoint "http://$hub:8080" --cache-dir "$work/$name" --quiet "$@" > /dev/null 2>"$work/$name.err" ||
        { echo "$name failed: $(cat "$work/$name.err")" >&2; exit 1; }
    elapsed "$started" "$(now)"
    check "$work/$name"
    rm -rf "${work:?}/$name"
}
before=$(hub_tx)
t_lan_cold=$(pull_one lan-cold --discover)
lan_cold_bytes=$(( $(hub_tx) - before ))
before=$(hub_tx)
t_lan_warm=$(pull_one lan-warm --discover)
lan_warm_bytes=$(( $(hub_tx) - before ))
t_one_direct=$(pull_one one-direct)

netem=$("$net" netem "$id")
echo "fleet on a simulated network: $clients clients, hub link $hub_rate$([ "$netem" = yes ] && echo ", ${hub_delay} each way" || echo " (this kernel has no netem: no delay)"), LAN $lan_rate per host,"
echo "  2 mirror nodes behind nginx (deploy/nginx/modeldepot-fleet.conf); repository $((size >> 20)) MiB in 5 files; release build, $(nproc) cores"
python3 - <<PY
size, n = $size, $clients
hub, lan = $hub_bits, $lan_bits
print(f"  physical limit through the tier = size×8/hub + N×size×8/lan = {size*8/hub:.2f} + {n*size*8/lan:.2f} = {$limit_tier:.2f} s")
print(f"  physical limit straight from the hub = N×size×8/hub = {$limit_direct:.2f} s")
print(f"  through the tier, cold:  last client done in {$t_tier:.2f} s = {$t_tier/$limit_tier:.2f}× the limit (goal ≤ 1.15); upstream copies {$tier_bytes/size:.3f} (goal 1.00)")
print(f"  through the tier, warm:  {$t_warm:.2f} s = {$t_warm/(n*size*8/lan):.2f}× N×size×8/lan; upstream copies {$warm_bytes/size:.3f}")
print(f"  a node killed mid-pull:  {$t_fail:.2f} s, every client complete; upstream copies {$fail_bytes/size:.3f} (goal ≤ 1.05)")
print(f"  straight from the hub:   {$t_direct:.2f} s = {$t_direct/$limit_direct:.2f}× its limit; upstream copies {$direct_bytes/size:.3f}")
print(f"  tier ÷ straight from the hub: {$t_tier/$t_direct:.2f}")
second = $(du -cb "$second"/* | tail -1 | cut -f1)
print(f"  a second repository ({second >> 20} MiB), cold: alone {$t_second_alone:.2f} s; started 1 s into the fleet's pull of the first, {$t_second_during:.2f} s while the first took {$t_first:.2f} s (its share of the hub link: {second*8/hub:.2f} s alone)")
PY
python3 - <<PY
size, hub, lan = $size, $hub_bits, $lan_bits
print(f"  a mirror found on the LAN: discover {$t_discover:.2f} s just after the daemons started, {$t_discover_again:.2f} s after; pull --discover cold {$t_lan_cold:.2f} s (upstream copies {$lan_cold_bytes/size:.3f}), warm {$t_lan_warm:.2f} s (upstream copies {$lan_warm_bytes/size:.3f})")
print(f"    one client straight from the hub {$t_one_direct:.2f} s (limit size×8/hub = {size*8/hub:.2f} s); warm ÷ straight = {$t_lan_warm/$t_one_direct:.2f} (the LAN's limit ÷ the hub's: {hub/lan:.2f})")
PY
[ "$netem" = yes ] || echo "  not run: the loss and jitter comparison with curl and aria2c needs netem, which this kernel lacks"
