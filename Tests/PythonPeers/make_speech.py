"""Speaks known sentences to audio files in every format the transcription tests sniff.

Usage: make_speech.py OUT_DIR TEXT

espeak-ng (Debian) speaks TEXT to OUT_DIR/speech.wav (16-bit PCM, 22.05 kHz); sox makes speech.flac and
speech.ogg (Vorbis); PyAV, which bundles FFmpeg's encoders, makes speech.mp3, speech.m4a (AAC) and
speech.webm (Opus). Prints the files' paths as JSON.
"""

import json
import os
import subprocess
import sys

import av


def encode(source, target, container, codec, rate):
    """Re-encodes SOURCE's first audio stream as CODEC in CONTAINER, mono at RATE Hz."""
    with av.open(source) as inp, av.open(target, "w", format=container) as out:
        stream = out.add_stream(codec, rate=rate)
        stream.layout = "mono"
        resampler = av.AudioResampler(format=stream.format, layout="mono", rate=rate)
        for frame in inp.decode(audio=0):
            for piece in resampler.resample(frame):
                out.mux(stream.encode(piece))
        for piece in resampler.resample(None):
            out.mux(stream.encode(piece))
        out.mux(stream.encode(None))


def main():
    out_dir, text = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    path = lambda ext: os.path.join(out_dir, "speech." + ext)
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-g", "8", "-w", path("wav"), text], check=True)
    subprocess.run(["sox", path("wav"), path("flac")], check=True)
    subprocess.run(["sox", path("wav"), path("ogg")], check=True)
    encode(path("wav"), path("mp3"), "mp3", "libmp3lame", 22050)
    encode(path("wav"), path("m4a"), "ipod", "aac", 22050)
    encode(path("wav"), path("webm"), "webm", "libopus", 48000)
    print(json.dumps({ext: path(ext) for ext in ["wav", "flac", "ogg", "mp3", "m4a", "webm"]}))


if __name__ == "__main__":
    main()
