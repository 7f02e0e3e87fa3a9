"""Parses subtitles with the reference readers and prints their cues as JSON.

Usage: subtitle_check.py FILE.srt|FILE.vtt
PyPI's srt reads SubRip, webvtt-py reads WebVTT; either raises on a malformed file (non-zero exit).
"""

import json
import sys

import srt
import webvtt


def seconds(stamp):
    hours, minutes, rest = stamp.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(rest)


path = sys.argv[1]
if path.endswith(".srt"):
    with open(path, encoding="utf-8") as handle:
        cues = [{"start": c.start.total_seconds(), "end": c.end.total_seconds(), "text": c.content}
                for c in srt.parse(handle.read(), ignore_errors=False)]
else:
    cues = [{"start": seconds(c.start), "end": seconds(c.end), "text": c.text} for c in webvtt.read(path)]
print(json.dumps(cues))
