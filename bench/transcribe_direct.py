"""faster-whisper called directly, as bench/transcribe.sh's reference: the model loaded once (as the server
loads it, WhisperModel(path) with its defaults), then each run transcribes FILE to its end and prints the seconds
it took, one a line.

Usage: transcribe_direct.py MODEL_DIR FILE RUNS
"""

import sys
import time

from faster_whisper import WhisperModel

model = WhisperModel(sys.argv[1])
for _ in range(int(sys.argv[3])):
    started = time.perf_counter()
    segments, _ = model.transcribe(sys.argv[2])
    text = "".join(segment.text for segment in segments)
    print(f"{time.perf_counter() - started:.4f}", flush=True)
