#!/usr/bin/env bash
# Mirror-server benchmark: `modeldepot serve` vs nginx serving the same file, same clients, same run.
#
#   bench/server.sh [--size-mib 64] [--clients 32] [--tls]
#
# N concurrent curl clients each download the whole file, measured two ways: discarding the bytes, and writing
# each copy to disk as real clients do. Prints, for nginx, `serve` (files by sendfile) and `serve --no-sendfile`
# (files read through the server, as before sendfile), the time, throughput, ratio to nginx and the server's own
# CPU time, and checks every copy's SHA-256. --tls adds what TLS costs: nginx with TLS and `serve --tls-cert` (which
# never uses sendfile: TLS encrypts every byte in the process), with a CA and certificate made by openssl.
set -euo pipefail
size_mib=64
clients=32
tls=0
while [ $# -gt 0 ]; do
    case "$1" in
        --size-mib) size_mib=$2; shift 2 ;;
        --clients) clients=$2; shift 2 ;;
        --tls) tls=1; shift ;;
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
bin=${MODELDEPOT_BIN:-$(build_release "$root")}

mkdir -p "$work/root/acme/bench" "$work/out"
head -c $((size_mib << 20)) /dev/urandom > "$work/root/acme/bench/model.gguf"
expected=$(sha256sum "$work/root/acme/bench/model.gguf" | cut -c1-64)
nginx_port=$(free_port)
start_nginx "$work" "$nginx_port" "access_log off;" "root $work/root;"
pids+=("$nginx_pid")

"$bin" serve --root "$work/root" --port 0 > "$work/serve.out" 2>/dev/null & ours_pid=$!; pids+=("$ours_pid")
"$bin" serve --root "$work/root" --port 0 --no-sendfile > "$work/streamed.out" 2>/dev/null & streamed_pid=$!
pids+=("$streamed_pid")
for _ in $(seq 100); do
    grep -q listening "$work/serve.out" 2>/dev/null && grep -q listening "$work/streamed.out" 2>/dev/null && break
    sleep 0.1
done
ours=$(sed -n 's/^listening on //p' "$work/serve.out")/acme/bench/resolve/main/model.gguf
streamed=$(sed -n 's/^listening on //p' "$work/streamed.out")/acme/bench/resolve/main/model.gguf
nginx_url="http://127.0.0.1:$nginx_port/acme/bench/model.gguf"
# Warm the hash index (the first request hashes the file once) and the page cache.
for url in "$ours" "$streamed" "$nginx_url"; do curl -s -o /dev/null "$url"; done

# cpu_seconds PID…: user + system CPU time the processes (and, for nginx, its workers) have used so far.
cpu_seconds() {
    local ticks=0 pid
    for pid in "$@" $(pgrep -P "$1" || true); do
        ticks=$((ticks + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    python3 -c "print($ticks / $(getconf CLK_TCK))"
}
# run_clients URL MODE PID → "seconds cpu": all clients receive the whole file at once; MODE discard sends the
# bodies to /dev/null (the old measure), disk writes each copy to a file as a real client does.
run_clients() {
    local url=$1 mode=$2 pid=$3 start end cpu0 cpu1 client_pids=() i
    cpu0=$(cpu_seconds "$pid")
    start=$(now)
    for i in $(seq "$clients"); do
        if [ "$mode" = disk ]; then curl -s "${curl_tls[@]}" -o "$work/out/$i" "$url" &
        else curl -s "${curl_tls[@]}" -o /dev/null "$url" & fi
        client_pids+=($!)
    done
    wait "${client_pids[@]}"
    end=$(now)
    cpu1=$(cpu_seconds "$pid")
    rm -f "$work/out"/*
    python3 -c "print($end - $start, $cpu1 - $cpu0)"
}
curl_tls=()  # curl's options for the TLS servers (--cacert); empty for plain http
verify_clients() {  # verify_clients URL: every concurrent client gets exactly the file
    local client_pids=() i
    for i in $(seq "$clients"); do curl -s "${curl_tls[@]}" -o "$work/out/$i" "$1" & client_pids+=($!); done
    wait "${client_pids[@]}"
    for i in $(seq "$clients"); do
        [ "$(sha256sum "$work/out/$i" | cut -c1-64)" = "$expected" ] || { echo "client $i got wrong bytes" >&2; exit 1; }
    done
    rm -f "$work/out"/*
}
verify_clients "$ours"
verify_clients "$streamed"

# Alternate the servers and keep each one's best of two, so none pays for another's warm-up.
declare -A result
for mode in discard disk; do
    for round in 1 2; do
        for server in nginx sendfile streamed; do
            case $server in
                nginx) r=$(run_clients "$nginx_url" "$mode" "$nginx_pid") ;;
                sendfile) r=$(run_clients "$ours" "$mode" "$ours_pid") ;;
                streamed) r=$(run_clients "$streamed" "$mode" "$streamed_pid") ;;
            esac
            result[$mode,$server,$round]=$r
        done
    done
done
echo "== $clients concurrent clients × ${size_mib} MiB, $(nproc) cores (copies verified by SHA-256; best of 2)"
args=()
for mode in discard disk; do for server in nginx sendfile streamed; do
    args+=("$mode" "$server" "${result[$mode,$server,1]}" "${result[$mode,$server,2]}")
done; done
python3 - "$((size_mib * clients))" "${args[@]}" <<'PY'
import sys
total = int(sys.argv[1])
rows = {}
rest = sys.argv[2:]
while rest:
    mode, server, first, second, rest = rest[0], rest[1], rest[2], rest[3], rest[4:]
    runs = [tuple(float(x) for x in run.split()) for run in (first, second)]
    rows[(mode, server)] = min(runs)
names = {"nginx": "nginx (sendfile)", "sendfile": "modeldepot serve", "streamed": "  --no-sendfile"}
titles = {"discard": "clients discard the bytes (the old measure)",
          "disk": "clients write their copies to disk (what clients do)"}
for mode in ("discard", "disk"):
    print(f"-- {titles[mode]}")
    nginx = rows[(mode, "nginx")][0]
    for server in ("nginx", "sendfile", "streamed"):
        seconds, cpu = rows[(mode, server)]
        print(f"  {names[server]:18} {seconds:6.2f} s {total / seconds:7.0f} MiB/s   ratio {nginx / seconds:4.2f}"
              f"   server CPU {cpu:5.2f} s")
print("target: modeldepot serve / nginx >= 1.00 in both measures")
PY

[ "$tls" = 1 ] || exit 0
# What TLS costs: the same file over https from nginx and from `serve --tls-cert`, both with a test CA's certificate.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/ca.key" -out "$work/ca.pem" \
    -days 2 -subj "/CN=bench CA" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/server.key" -out "$work/server.csr" \
    -subj "/CN=127.0.0.1" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' > "$work/server.ext"
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
    -out "$work/server.pem" -days 2 -extfile "$work/server.ext" 2>/dev/null
curl_tls=(--cacert "$work/ca.pem")
mkdir -p "$work/tls"
nginx_tls_port=$(free_port)
start_nginx "$work/tls" "$nginx_tls_port" "access_log off;" \
    "root $work/root; ssl_certificate $work/server.pem; ssl_certificate_key $work/server.key;"
sed -i "s|listen 127.0.0.1:$nginx_tls_port;|listen 127.0.0.1:$nginx_tls_port ssl;|" "$work/tls/nginx.conf"
kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true
nginx -p "$work/tls" -c "$work/tls/nginx.conf" & nginx_tls_pid=$!; pids+=("$nginx_tls_pid")
"$bin" serve --root "$work/root" --port 0 --tls-cert "$work/server.pem" --tls-key "$work/server.key" \
    > "$work/tls.out" 2>/dev/null & tls_pid=$!; pids+=("$tls_pid")
for _ in $(seq 100); do grep -q listening "$work/tls.out" 2>/dev/null && break; sleep 0.1; done
ours_tls=$(sed -n 's/^listening on //p' "$work/tls.out")/acme/bench/resolve/main/model.gguf
nginx_tls_url="https://127.0.0.1:$nginx_tls_port/acme/bench/model.gguf"
for _ in $(seq 50); do curl -s "${curl_tls[@]}" -o /dev/null "$nginx_tls_url" && break; sleep 0.1; done
curl -s "${curl_tls[@]}" -o /dev/null "$ours_tls"
verify_clients "$ours_tls"
verify_clients "$nginx_tls_url"
declare -A secure
for mode in discard disk; do
    for round in 1 2; do
        secure[$mode,nginx,$round]=$(run_clients "$nginx_tls_url" "$mode" "$nginx_tls_pid")
        secure[$mode,ours,$round]=$(run_clients "$ours_tls" "$mode" "$tls_pid")
    done
done
echo "== over TLS (https, ECDSA P-256 certificate; best of 2)"
args=()
for mode in discard disk; do for server in nginx ours; do
    args+=("$mode" "$server" "${secure[$mode,$server,1]}" "${secure[$mode,$server,2]}" "${result[$mode,$([ $server = nginx ] && echo nginx || echo sendfile),1]}")
done; done
python3 - "$((size_mib * clients))" "${args[@]}" <<'PY'
import sys
total = int(sys.argv[1])
rest = sys.argv[2:]
rows = {}
while rest:
    mode, server, first, second, plain, rest = rest[0], rest[1], rest[2], rest[3], rest[4], rest[5:]
    rows[(mode, server)] = (min(tuple(float(x) for x in run.split()) for run in (first, second)), float(plain.split()[0]))
for mode in ("discard", "disk"):
    print(f"-- {mode}")
    nginx = rows[(mode, "nginx")][0][0]
    for server, name in (("nginx", "nginx (TLS)"), ("ours", "modeldepot serve (TLS)")):
        (seconds, cpu), plain = rows[(mode, server)]
        print(f"  {name:24} {seconds:6.2f} s {total / seconds:7.0f} MiB/s   ratio {nginx / seconds:4.2f}"
              f"   server CPU {cpu:5.2f} s   TLS costs {seconds / plain:4.2f}x its plain-http time")
PY
