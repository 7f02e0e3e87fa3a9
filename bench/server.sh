#!/usr/bin/env bash
# Mirror-server benchmark: `modeldepot serve` vs nginx serving the same file, same clients, same run.
#
#   bench/server.sh [--size-mib 64] [--clients 32]
#
# N concurrent curl clients each download the whole file; prints aggregate throughput for nginx and for our
# mirror, the ratio (target >= 0.8), and checks every copy's SHA-256.
set -euo pipefail
size_mib=64
clients=32
while [ $# -gt 0 ]; do
    case "$1" in
        --size-mib) size_mib=$2; shift 2 ;;
        --clients) clients=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
for tool in nginx curl python3 sha256sum; do
    command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y nginx curl" >&2; exit 1; }
done
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/modeldepot-serverbench.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

. "$root/bench/lib.sh"
bin=$(build_release "$root")

mkdir -p "$work/root/acme/bench" "$work/out"
head -c $((size_mib << 20)) /dev/urandom > "$work/root/acme/bench/model.gguf"
expected=$(sha256sum "$work/root/acme/bench/model.gguf" | cut -c1-64)
nginx_port=$(free_port)
start_nginx "$work" "$nginx_port" "access_log off;" "root $work/root;"
pids+=("$nginx_pid")

"$bin" serve --root "$work/root" --port 0 > "$work/serve.out" 2>/dev/null & pids+=($!)
for _ in $(seq 100); do grep -q listening "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
ours=$(sed -n 's/^listening on //p' "$work/serve.out")
# Warm the hash index (the first request hashes the file once) and the page cache.
curl -s -o /dev/null "$ours/acme/bench/resolve/main/model.gguf"
curl -s -o /dev/null "http://127.0.0.1:$nginx_port/acme/bench/model.gguf"

run_clients() {  # run_clients URL → seconds for all clients to receive the whole file (bodies discarded)
    local start end client_pids=()
    start=$(date +%s.%N)
    for _ in $(seq "$clients"); do curl -s -o /dev/null "$1" & client_pids+=($!); done
    wait "${client_pids[@]}"
    end=$(date +%s.%N)
    python3 -c "print($end - $start)"
}
verify_clients() {  # verify_clients URL: every concurrent client gets exactly the file
    local client_pids=()
    for i in $(seq "$clients"); do curl -s -o "$work/out/$i" "$1" & client_pids+=($!); done
    wait "${client_pids[@]}"
    for i in $(seq "$clients"); do
        [ "$(sha256sum "$work/out/$i" | cut -c1-64)" = "$expected" ] || { echo "client $i got wrong bytes" >&2; exit 1; }
    done
    rm -f "$work/out"/*
}
best() { python3 -c "import sys; print(min(float(x) for x in sys.argv[1:]))" "$@"; }
verify_clients "$ours/acme/bench/resolve/main/model.gguf"
# Alternate the servers and keep each one's best of two, so neither pays for the other's warm-up.
n1=$(run_clients "http://127.0.0.1:$nginx_port/acme/bench/model.gguf")
o1=$(run_clients "$ours/acme/bench/resolve/main/model.gguf")
n2=$(run_clients "http://127.0.0.1:$nginx_port/acme/bench/model.gguf")
o2=$(run_clients "$ours/acme/bench/resolve/main/model.gguf")
nginx_t=$(best "$n1" "$n2")
ours_t=$(best "$o1" "$o2")
total=$((size_mib * clients))
echo "== $clients concurrent clients × ${size_mib} MiB (our copies verified by SHA-256; best of 2)"
python3 - "$nginx_t" "$ours_t" "$total" <<PY
import sys
nginx, ours, total = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
print(f"  nginx          {nginx:6.2f} s  {total/nginx:8.0f} MiB/s")
print(f"  modeldepot     {ours:6.2f} s  {total/ours:8.0f} MiB/s")
print(f"  ratio: our throughput / nginx = {nginx/ours:.2f}   (target >= 0.80)")
PY
