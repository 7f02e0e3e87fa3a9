#!/usr/bin/env bash
# Load benchmark: how fast the mirror answers small requests, beside nginx serving the same folder in the same run,
# and how long its API calls wait while it is busy with big files.
#
#   bench/load.sh [--quick] [--duration 5] [--connections 16] [--rounds 2] [--big-mib 256] [--downloads 16]
#                 [--pulls 4] [--streams 50] [--clients-nice 10]
#
# 1. Small requests: wrk -t1 -cCONNECTIONS for DURATION seconds against a folder mirror (`serve --root`) and nginx
#    over the same folder: GET of a 3-byte config.json through the Hub's resolve path, HEAD of an empty file (wrk
#    cannot read a HEAD answer whose Content-Length is not 0; a HEAD never opens the file, so the size does not
#    matter to the server), /api/models/{repo}, a tree listing, /healthz, nginx's static GET of the same
#    config.json, and the ceiling of the stack: the smallest Hummingbird server (modeldepot-bench bare-server: one
#    route, a fixed body, same Hummingbird and NIO). Each is run ROUNDS times, alternating; the best round is shown
#    with its ratios to nginx's best and the bare server's.
#    Goals (issue 63): /healthz >= 0.9x the bare server; resolve GET/HEAD and /api/models >= 0.7x it.
# 1b. As root with perf: system calls, malloc and swift_retain calls per request, counted (uprobes), for the
#    bare server and the mirror's small requests: the work, which the noisy rates cannot show.
# 2. Latency under load: a pull-through mirror (`serve --upstream`) answers /api/models and a resolve HEAD, idle,
#    then while DOWNLOADS clients download a BIG-MIB file it holds at rest (each again as soon as it is done) and
#    PULLS clients pull cold BIG-MIB files through it from an upstream mirror (which it hashes as they land).
#    p50/p99/max, requests/s, errors, and the mirror's CPU (from /proc/PID/stat).
#    Goal: p99 under load within 5x idle and never above 250 ms; no errors (issue 63: <= 250 ms, no errors).
#    The download and pull clients stand in for devices elsewhere and run at nice CLIENTS_NICE (10 by default):
#    on two shared cores, 16 curls receiving at loopback speed otherwise take the CPU the mirror answers with, and
#    the p99 measures the scheduler's share-out among twenty processes rather than the mirror (this VM, one
#    session: 239 and 280 ms at nice 0, 51 and 102 ms at nice 10, the same binary). wrk, the mirror and its
#    upstream keep the normal priority. --clients-nice 0 measures the machine as a whole.
# 3. The web app (`modeldepot ui`): its pages and JSON with no event stream open, then with STREAMS open.
# --quick: 2-second runs, one round, 64 MiB files; a full run takes about 4 minutes on 2 cores.
# MODELDEPOT_BIN=path skips the release build.
set -euo pipefail
duration=5
connections=16
rounds=2
big_mib=256
downloads=16
pulls=4
streams=50
clients_nice=10
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) duration=2; rounds=1; big_mib=64; shift ;;
        --duration) duration=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --big-mib) big_mib=$2; shift 2 ;;
        --downloads) downloads=$2; shift 2 ;;
        --pulls) pulls=$2; shift 2 ;;
        --streams) streams=$2; shift 2 ;;
        --clients-nice) clients_nice=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
for tool in nginx curl python3 wrk; do
    command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y nginx curl wrk" >&2; exit 1; }
done
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/modeldepot-loadbench.XXXXXX)
pids=()
cleanup() {
    touch "$work/stop" 2>/dev/null || true
    # serve runs inside $(…), so its servers' pids are in files, not in the array.
    for pid in "${pids[@]}" $(cat "$work"/*.pid 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
. "$root/bench/lib.sh"
bin=${MODELDEPOT_BIN:-$(build_release "$root")}
# The ceiling: the smallest Hummingbird server (one route, a fixed body), same Hummingbird and NIO, release build.
bench_bin=${MODELDEPOT_BENCH_BIN:-$(build_release "$root" modeldepot-bench)}

# serve OUT ARGS…: starts `modeldepot serve ARGS --port 0`, prints its URL; its pid goes to OUT.pid.
serve() {
    local out=$1; shift
    "$bin" serve "$@" --port 0 > "$out" 2>"$out.log" & echo $! > "$out.pid"
    for _ in $(seq 200); do grep -q listening "$out" 2>/dev/null && break; sleep 0.05; done
    sed -n 's/^listening on \([^ ]*\).*/\1/p' "$out"
}
# cpu_ticks PID: user + system clock ticks the process has used.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# wrk prints one line through this script: requests, seconds, errors, p50/p99/max in microseconds.
cat > "$work/report.lua" <<'LUA'
done = function(summary, latency, requests)
    local e = summary.errors
    io.write(string.format("RESULT %d %.3f %d %d %.0f %.0f %.0f\n", summary.requests, summary.duration / 1e6,
        e.connect + e.read + e.write + e.timeout, e.status, latency:percentile(50), latency:percentile(99),
        latency.max))
end
LUA
{ echo 'wrk.method = "HEAD"'; cat "$work/report.lua"; } > "$work/head.lua"

# measure NAME METHOD URL [HEADER]: one wrk run; appends "NAME requests seconds errors status p50 p99 max".
measure() {
    local name=$1 method=$2 url=$3 header=${4:-} script=$work/report.lua args=()
    [ "$method" = HEAD ] && script=$work/head.lua
    [ -n "$header" ] && args=(-H "$header")
    local line
    line=$(wrk -t1 -c"$connections" -d"${duration}s" --timeout 5s "${args[@]}" -s "$script" "$url" | grep '^RESULT')
    echo "$name ${line#RESULT }" >> "$work/results"
}

# --- 1. small requests: folder mirror vs nginx ---------------------------------------------------------------
small="$work/root/acme/small"
mkdir -p "$small/sub"
printf '{}\n' > "$small/config.json"
: > "$small/empty.txt"
echo "# small" > "$small/README.md"
printf '{"bos": 1}\n' > "$small/tokenizer_config.json"
echo "one" > "$small/sub/one.txt"
echo "two" > "$small/sub/two.txt"
nginx_port=$(free_port)
start_nginx "$work" "$nginx_port" "access_log off;" "root $work/root;"
pids+=("$nginx_pid")
"$bench_bin" bare-server > "$work/bare.out" 2>&1 & echo $! > "$work/bare.pid"
for _ in $(seq 200); do grep -q listening "$work/bare.out" 2>/dev/null && break; sleep 0.05; done
bare=$(sed -n 's/^listening on \([^ ]*\).*/\1/p' "$work/bare.out")
folder=$(serve "$work/folder.out" --root "$work/root")
[ -n "$folder" ] || { cat "$work/folder.out.log" >&2; exit 1; }
nginx_url="http://127.0.0.1:$nginx_port/acme/small/config.json"
for _ in $(seq 50); do curl -sf -o /dev/null "$nginx_url" && break; sleep 0.1; done
for path in /api/models/acme/small /acme/small/resolve/main/config.json; do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$folder$path")" = 200 ] || { echo "$path fails" >&2; exit 1; }
done
echo "== small requests: wrk -t1 -c$connections, ${duration} s each, best of $rounds, $(nproc) cores," \
    "load before: $(cut -d' ' -f1 /proc/loadavg)" >&2
for round in $(seq "$rounds"); do
    measure nginx GET "$nginx_url"
    measure "bare Hummingbird" GET "$bare/bare"
    measure "GET resolve" GET "$folder/acme/small/resolve/main/config.json"
    measure "HEAD resolve" HEAD "$folder/acme/small/resolve/main/empty.txt"
    measure "/api/models" GET "$folder/api/models/acme/small"
    measure "tree" GET "$folder/api/models/acme/small/tree/main"
    measure "healthz" GET "$folder/healthz"
done
folder_cpu=$(cpu_ticks "$(cat "$work/folder.out.pid")")
small_results=$(cat "$work/results")
: > "$work/results"

# --- 1b. work per request, counted: what the noisy rates cannot blur -------------------------------------------
# System calls, malloc and swift_retain calls per request over 3,000 requests on one keep-alive connection, from
# `perf stat` on a tracepoint and two uprobes (root and linux-perf needed; skipped otherwise).
cat > "$work/client.py" <<'PY'
import http.client, sys, urllib.parse
url = urllib.parse.urlparse(sys.argv[1])
connection = http.client.HTTPConnection(url.hostname, url.port)
for _ in range(int(sys.argv[2])):
    connection.request(sys.argv[3], url.path)
    connection.getresponse().read()
PY
swift_core=$(ldd "$bin" | sed -n 's/.*libswiftCore.so => \([^ ]*\).*/\1/p')
libc=$(ldd "$bin" | sed -n 's/.*libc.so.6 => \([^ ]*\).*/\1/p')
work_counts=""
can_count=false
if command -v perf >/dev/null && [ "$(id -u)" = 0 ] && [ -n "$swift_core" ] && [ -n "$libc" ]; then
    # Each fails harmlessly when the probe is already there.
    perf probe -q -x "$libc" malloc 2>/dev/null || true
    perf probe -q -x "$swift_core" swift_retain 2>/dev/null || true
    perf list > "$work/perf-list.txt" 2>/dev/null || true
    grep -q 'probe_libc:malloc' "$work/perf-list.txt" && grep -q 'probe_libswiftCore:swift_retain' "$work/perf-list.txt" \
        && can_count=true
fi
if $can_count; then
    # count NAME PID URL METHOD: appends "NAME syscalls mallocs retains" per request.
    count() {
        python3 "$work/client.py" "$3" 500 "$4"
        perf stat -x, -e raw_syscalls:sys_enter,probe_libc:malloc,probe_libswiftCore:swift_retain -p "$2" \
            -o "$work/perf.txt" -- python3 "$work/client.py" "$3" 3000 "$4"
        work_counts+="$1|$(awk -F, 'NF > 3 { printf "%.1f ", $1 / 3000 }' "$work/perf.txt")"$'\n'
    }
    folder_pid=$(cat "$work/folder.out.pid")
    count "bare Hummingbird" "$(cat "$work/bare.pid")" "$bare/bare" GET
    count "GET resolve" "$folder_pid" "$folder/acme/small/resolve/main/config.json" GET
    count "HEAD resolve" "$folder_pid" "$folder/acme/small/resolve/main/empty.txt" HEAD
    count "/api/models" "$folder_pid" "$folder/api/models/acme/small" GET
    count "healthz" "$folder_pid" "$folder/healthz" GET
fi

# --- 2. latency under load: a pull-through mirror --------------------------------------------------------------
upstream_root="$work/upstream"
mkdir -p "$upstream_root/acme/small" "$upstream_root/acme/rest" "$upstream_root/acme/cold"
cp "$small/config.json" "$small/README.md" "$small/empty.txt" "$upstream_root/acme/small/"
head -c $((big_mib << 20)) /dev/urandom > "$upstream_root/acme/rest/model.safetensors"
for i in $(seq "$pulls"); do
    head -c $((big_mib << 20)) /dev/urandom > "$upstream_root/acme/cold/part$i.safetensors"
done
upstream=$(serve "$work/upstream.out" --root "$upstream_root")
mirror=$(serve "$work/mirror.out" --upstream "$upstream" --cache-dir "$work/mirror-cache")
mirror_pid=$(cat "$work/mirror.out.pid")
# The big file at rest: pulled once, then served from the mirror's disk.
curl -sf -o /dev/null "$mirror/acme/rest/resolve/main/model.safetensors"
curl -sf -o /dev/null "$mirror/acme/small/resolve/main/empty.txt"
api="$mirror/api/models/acme/small"
head_url="$mirror/acme/small/resolve/main/empty.txt"
# under_load PHASE: the API calls measured while nothing else runs (idle) or during the downloads and pulls.
under_load() {
    local phase=$1 cpu0 cpu1 start end
    cpu0=$(cpu_ticks "$mirror_pid"); start=$(now)
    measure "$phase /api/models" GET "$api"
    measure "$phase HEAD resolve" HEAD "$head_url"
    cpu1=$(cpu_ticks "$mirror_pid"); end=$(now)
    python3 -c "print('$phase cpu', round(($cpu1 - $cpu0) / $(getconf CLK_TCK) / ($end - $start), 2))" \
        >> "$work/results"
}
under_load idle
rm -f "$work/stop"
load_pids=()
for i in $(seq "$downloads"); do
    (
        while [ ! -e "$work/stop" ]; do
            code=$(nice -n "$clients_nice" curl -s -o /dev/null -w '%{http_code}' \
                "$mirror/acme/rest/resolve/main/model.safetensors")
            [ "$code" = 200 ] || echo "download $i: $code" >> "$work/load-errors"
        done
    ) & load_pids+=($!)
done
pull_start=$(now)
for i in $(seq "$pulls"); do
    (
        code=$(nice -n "$clients_nice" curl -s -o /dev/null -w '%{http_code}' \
            "$mirror/acme/cold/resolve/main/part$i.safetensors")
        [ "$code" = 200 ] || echo "pull $i: $code" >> "$work/load-errors"
        echo "$(elapsed "$pull_start" "$(now)")" >> "$work/pull-times"
    ) & load_pids+=($!)
done
under_load load
touch "$work/stop"
for pid in "${load_pids[@]}"; do wait "$pid" || true; done
pulls_done=$(sort -n "$work/pull-times" | tail -1)
load_errors=0
[ -f "$work/load-errors" ] && load_errors=$(wc -l < "$work/load-errors")
load_results=$(cat "$work/results")
: > "$work/results"

# --- 3. the web app: pages, then the same with event streams open ------------------------------------------
echo "bench-load-token" > "$work/token"
ui_port=$(free_port)
"$bin" ui --port "$ui_port" --token-file "$work/token" --cache-dir "$work/ui-cache" --endpoint "$upstream" \
    > "$work/ui.out" 2>&1 & ui_pid=$!; pids+=("$ui_pid")
for _ in $(seq 300); do grep -q "ModelDepot is at" "$work/ui.out" 2>/dev/null && break; sleep 0.1; done
grep -q "ModelDepot is at" "$work/ui.out" || { cat "$work/ui.out" >&2; exit 1; }
ui="http://127.0.0.1:$ui_port"
cookie=$(curl -s -D - -o /dev/null "$ui/session?token=bench-load-token" | sed -n 's/^[Ss]et-[Cc]ookie: \([^;]*\).*/\1/p')
[ -n "$cookie" ] || { echo "no session cookie from the ui" >&2; exit 1; }
for path in /models /api/ui/models; do
    [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $cookie" "$ui$path")" = 200 ] ||
        { echo "ui $path fails" >&2; exit 1; }
done
measure "ui /models" GET "$ui/models" "Cookie: $cookie"
measure "ui /api/ui/models" GET "$ui/api/ui/models" "Cookie: $cookie"
stream_pids=()
for _ in $(seq "$streams"); do
    curl -s -N -H "Cookie: $cookie" "$ui/api/ui/events" > /dev/null & stream_pids+=($!)
done
for _ in $(seq 100); do
    open=$(ss -tn state established "( sport = :$ui_port )" 2>/dev/null | tail -n +2 | wc -l)
    [ "$open" -ge "$streams" ] && break
    sleep 0.1
done
measure "ui+streams /models" GET "$ui/models" "Cookie: $cookie"
measure "ui+streams /api/ui/models" GET "$ui/api/ui/models" "Cookie: $cookie"
for pid in "${stream_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
ui_results=$(cat "$work/results")

# --- the table -------------------------------------------------------------------------------------------------
python3 - "$connections" "$duration" "$big_mib" "$downloads" "$pulls" "$streams" "${pulls_done:-?}" "$load_errors" \
    "$folder_cpu" <<PY
import sys
connections, duration, big, downloads, pulls, streams, pulls_done, load_errors, _ = sys.argv[1:]
def rows(text):
    out = []
    for line in text.strip().splitlines():
        *name, requests, seconds, errors, status, p50, p99, peak = line.split()
        out.append((" ".join(name), int(requests) / float(seconds), int(errors) + int(status),
                    float(p50) / 1000, float(p99) / 1000, float(peak) / 1000))
    return out
def table(title, results, floor=None, ceiling=None):
    print(f"-- {title}")
    print(f"  {'request':28}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'errors':>8}" +
          (f"{'/nginx':>8}" if floor else "") + (f"{'/bare':>8}" if ceiling else ""))
    for name, rate, errors, p50, p99, peak in results:
        ratio = (f"{rate / floor:8.2f}" if floor else "") + (f"{rate / ceiling:8.2f}" if ceiling else "")
        print(f"  {name:28}{rate:9.0f}{p50:9.2f}{p99:9.2f}{peak:9.1f}{errors:8d}{ratio}")
small = rows("""$small_results""")
best = {}
for row in small:
    if row[0] not in best or row[1] > best[row[0]][1]: best[row[0]] = row
nginx = best["nginx"][1]
print(f"== modeldepot load bench: $(nproc) cores, wrk -t1 -c{connections}, {duration} s a run")
bare = best["bare Hummingbird"][1]
table("small requests, folder mirror (best of rounds; goals: /healthz >= 0.9 of the bare Hummingbird server,"
      " resolve and /api/models >= 0.7 of it)",
      [best[k] for k in ["nginx", "bare Hummingbird", "GET resolve", "HEAD resolve", "/api/models", "tree",
                         "healthz"]], nginx, bare)
counts = [l.split("|") for l in """$work_counts""".splitlines() if "|" in l]
if counts:
    print("-- work per request (3,000 requests on one connection; perf on a tracepoint and uprobes)")
    print(f"  {'request':28}{'syscalls':>10}{'malloc':>10}{'retain':>10}")
    for name, values in counts:
        syscalls, mallocs, retains = (values.split() + ["?"] * 3)[:3]
        print(f"  {name:28}{syscalls:>10}{mallocs:>10}{retains:>10}")
else:
    print("-- work per request: skipped (needs root and perf with uprobes)")
load_text = """$load_results"""
cpu = {l.split()[0]: float(l.split()[2]) for l in load_text.splitlines() if " cpu " in l}
load = rows("\n".join(l for l in load_text.splitlines() if " cpu " not in l))
table(f"pull-through mirror: idle, then under {downloads} downloads at rest + {pulls} cold pulls of {big} MiB"
      f" (clients at nice $clients_nice)", load)
print(f"  mirror CPU (cores busy): idle {cpu.get('idle', 0):.2f}, under load {cpu.get('load', 0):.2f};"
      f" the cold pulls took {pulls_done} s; download/pull errors: {load_errors}")
for kind in ("/api/models", "HEAD resolve"):
    idle = next(r for r in load if r[0] == f"idle {kind}")
    busy = next(r for r in load if r[0] == f"load {kind}")
    verdict = "ok" if busy[4] <= 5 * idle[4] and busy[4] <= 250 and busy[2] == 0 else "MISSED"
    print(f"  {kind}: p99 under load / idle = {busy[4] / max(idle[4], 0.001):.1f}x, {busy[4]:.1f} ms"
          f" (goal: <= 5x and <= 250 ms, no error): {verdict}")
table(f"web app pages, then with {streams} event streams open", rows("""$ui_results"""))
PY
