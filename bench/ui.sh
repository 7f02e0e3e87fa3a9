#!/usr/bin/env bash
# Web app benchmark (`modeldepot ui`, `serve --ui`): how long each screen takes with a big cache, how often
# progress events go out during a download, and what an idle app costs.
#
#   bench/ui.sh [--repos 100] [--files 100] [--runs 30]
#
# A Hub cache of REPOS x FILES files (10,000 by default) is written in Python's layout; `ui` serves it. Each
# page and JSON call is asked RUNS times over loopback on a kept-alive connection; the median and p95 are
# printed beside nginx answering a static file of the same size in the same run (the floor for one loopback
# request), and the ratio. Then a download from a rate-capped `serve` counts the progress events per second a
# page receives, and `ui` is left idle with a page's event stream open to read its CPU time from /proc.
#
# Targets: every screen under 100 ms with 10,000 cached files; at most ~4 progress events a second per task;
# an idle ui uses no CPU.
set -euo pipefail
repos=100
files=100
runs=30
while [ $# -gt 0 ]; do
    case "$1" in
        --repos) repos=$2; shift 2 ;;
        --files) files=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
for tool in nginx curl python3; do
    command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y nginx curl" >&2; exit 1; }
done
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/modeldepot-uibench.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
. "$root/bench/lib.sh"
bin=${MODELDEPOT_BIN:-$(build_release "$root")}

# The cache: REPOS repositories of FILES small files each, blobs and snapshot links as Python writes them.
python3 - "$work/cache" "$repos" "$files" <<'PY'
import hashlib, os, sys
cache, repos, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for r in range(repos):
    folder = os.path.join(cache, f"models--bench--repo{r:04d}")
    commit = hashlib.sha1(f"commit{r}".encode()).hexdigest()
    os.makedirs(os.path.join(folder, "blobs"))
    os.makedirs(os.path.join(folder, "refs"))
    with open(os.path.join(folder, "refs", "main"), "w") as f:
        f.write(commit)
    snapshot = os.path.join(folder, "snapshots", commit)
    os.makedirs(snapshot)
    for i in range(files):
        data = f"repo {r} file {i}\n".encode() * 64
        blob = hashlib.sha256(data).hexdigest()
        with open(os.path.join(folder, "blobs", blob), "wb") as f:
            f.write(data)
        os.symlink(os.path.join("..", "..", "blobs", blob), os.path.join(snapshot, f"file{i:04d}.txt"))
PY

# A Hub for the download: one 32 MiB model, each connection capped at 2 MB/s, and a catalog naming it.
mkdir -p "$work/hub/bench/big"
head -c $((32 << 20)) /dev/urandom > "$work/hub/bench/big/weights.bin"
cat > "$work/catalog.json" <<JSON
{"version": 1, "models": [{"name": "bench-big", "repo": "bench/big", "files": ["weights.bin"], "format": "pytorch",
 "capabilities": ["textGeneration"], "sizeBytes": $((32 << 20)), "description": "32 MiB at 2 MB/s a connection"}]}
JSON
hub_port=$(free_port)
"$bin" serve --root "$work/hub" --port "$hub_port" --faults rate=2MB > "$work/serve.out" 2>&1 & pids+=($!)
echo "bench-ui-token" > "$work/token"
ui_port=$(free_port)
"$bin" ui --port "$ui_port" --token-file "$work/token" --cache-dir "$work/cache" --catalog "$work/catalog.json" \
    --endpoint "http://127.0.0.1:$hub_port" > "$work/ui.out" 2>&1 & ui_pid=$!; pids+=("$ui_pid")
for _ in $(seq 300); do grep -q "ModelDepot is at" "$work/ui.out" 2>/dev/null && break; sleep 0.1; done
grep -q "ModelDepot is at" "$work/ui.out" || { cat "$work/ui.out" >&2; exit 1; }

nginx_port=$(free_port)
mkdir -p "$work/static"
start_nginx "$work" "$nginx_port" "access_log off;" "root $work/static;"
pids+=("$nginx_pid")

python3 - "$ui_port" "$nginx_port" "$work" "$runs" "$ui_pid" "$repos" "$files" <<'PY'
import http.client, json, os, statistics, sys, threading, time
ui_port, nginx_port, work, runs, ui_pid = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
repos, files = int(sys.argv[6]), int(sys.argv[7])
host = f"127.0.0.1:{ui_port}"

def connect(port):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=60)

ui = connect(ui_port)
ui.request("GET", "/session?token=bench-ui-token")
answer = ui.getresponse(); answer.read()
cookie = answer.getheader("Set-Cookie").split(";")[0]
headers = {"Cookie": cookie, "Host": host}

def timed(connection, path, extra=None):
    times, size = [], 0
    for _ in range(runs + 2):
        start = time.perf_counter()
        connection.request("GET", path, headers=extra or {})
        response = connection.getresponse()
        body = response.read()
        times.append(time.perf_counter() - start)
        assert response.status == 200, (path, response.status, body[:200])
        size = len(body)
    times = sorted(times[2:])  # the first two warm up
    return statistics.median(times) * 1000, times[int(len(times) * 0.95) - 1] * 1000, size

print(f"ui with a cache of {repos} repositories x {files} files = {repos * files} files; {runs} runs each, loopback")
print(f"{'screen':<26}{'median':>10}{'p95':>10}{'bytes':>10}{'nginx same size':>18}{'ratio':>8}")
nginx = connect(nginx_port)
worst = 0
for path in ["/models", "/storage", "/downloads", "/settings", "/chat", "/api/ui/storage", "/api/ui/models",
             "/api/ui/downloads"]:
    median, p95, size = timed(ui, path, headers)
    name = f"static{size}.html"
    with open(os.path.join(work, "static", name), "wb") as f:
        f.write(b"x" * size)
    floor, _, _ = timed(nginx, "/" + name)
    worst = max(worst, p95)
    print(f"{path:<26}{median:>8.1f}ms{p95:>8.1f}ms{size:>10}{floor:>16.2f}ms{median / floor:>8.0f}x")
print(f"slowest p95: {worst:.1f} ms (target: under 100 ms)")

# Progress events during one download: a page's event stream, counted while bytes flow.
def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

events = connect(ui_port)
events.request("GET", "/api/ui/events", headers=headers)
stream = events.getresponse()
stamps, done = [], threading.Event()
def read():
    for line in stream:
        if line.startswith(b"event: update"):
            stamps.append(time.perf_counter())
        if b'"state":"completed"' in line:
            done.set()
            return
reader = threading.Thread(target=read, daemon=True)
reader.start()
post = connect(ui_port)
post.request("POST", "/api/ui/models/bench-big/download", body="{}",
             headers={**headers, "Content-Type": "application/json", "Origin": f"http://{host}"})
response = post.getresponse(); response.read()
assert response.status == 200, response.status
done.wait(120)
span = stamps[-1] - stamps[1] if len(stamps) > 2 else 0
gaps = [b - a for a, b in zip(stamps[1:], stamps[2:])]
rate = (len(stamps) - 2) / span if span else float("nan")
print(f"progress events during a 32 MiB download at 2 MB/s a connection: {len(stamps) - 1} in {span:.1f} s = {rate:.2f}/s, "
      f"shortest gap {min(gaps) * 1000 if gaps else float('nan'):.0f} ms (target: at most ~4/s)")

# Idle: no download, the event stream still open (a page left in a tab).
time.sleep(2)
before = cpu_seconds(ui_pid)
time.sleep(10)
after = cpu_seconds(ui_pid)
print(f"idle ui, a page's event stream open, 10 s: {after - before:.2f} s of CPU (target: 0)")
PY
