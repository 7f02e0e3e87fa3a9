# Helpers shared by the benchmarks; source it: . "$(dirname "$0")/lib.sh"

# A free TCP port on 127.0.0.1.
free_port() { python3 -c "import socket;s=socket.socket();s.bind(('127.0.0.1',0));print(s.getsockname()[1])"; }

# start_nginx WORK PORT LOG_DIRECTIVE SERVER_BODY: nginx in the foreground as a background job of this
# shell, its files under WORK; sets nginx_pid.
start_nginx() {
    local work=$1 port=$2 log=$3 body=$4
    mkdir -p "$work/tmp"
    cat > "$work/nginx.conf" <<CONF
worker_processes 2;
daemon off;
user root;
error_log $work/error.log;
pid $work/nginx.pid;
events { worker_connections 1024; }
http {
    $log
    client_body_temp_path $work/tmp/body; proxy_temp_path $work/tmp/proxy; fastcgi_temp_path $work/tmp/fcgi;
    uwsgi_temp_path $work/tmp/uwsgi; scgi_temp_path $work/tmp/scgi;
    sendfile on;
    keepalive_requests 100000;
    server { listen 127.0.0.1:$port; $body }
}
CONF
    nginx -p "$work" -c "$work/nginx.conf" &
    nginx_pid=$!
}

# build_release ROOT [PRODUCT]: a release build of the CLI (or of PRODUCT, e.g. modeldepot-bench); prints its path.
build_release() {
    local product=${2:-modeldepot}
    echo "building $product (release)…" >&2
    (cd "$1" && swift build -c release --product "$product" >/dev/null)
    echo "$1/.build/release/$product"
}

# now: seconds since the epoch, with nanoseconds. elapsed START END: END - START, to the millisecond.
now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.3f}')"; }
