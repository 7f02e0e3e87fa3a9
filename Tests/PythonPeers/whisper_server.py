"""OpenAI's transcription API over faster-whisper, recording what each request carried.

Usage: whisper_server.py MODEL_DIR RECORD_FILE

Serves POST /v1/audio/transcriptions and /v1/audio/translations on 127.0.0.1 (a free port, printed on the first
line) as OpenAI documents them, with verbose_json's segments and, when timestamp_granularities[] asks, words.
The form is read by Starlette, that is by python-multipart: a real parser reads ModelDepot's request. Each
request's route, text fields and file part (name, type, size) go to RECORD_FILE as a JSON line, so tests can
assert what the server received (tiny.en is English-only: a translation or a language shows only there).
"""

import json
import socket
import sys

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from faster_whisper import WhisperModel

# One thread: the Swift suite runs beside it on two cores, and its servers must stay responsive.
model = WhisperModel(sys.argv[1], device="cpu", compute_type="int8", cpu_threads=1)
record_path = sys.argv[2]
app = FastAPI()


def error(status, message):
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error"}}, status_code=status)


async def handle(request: Request, task: str):
    form = await request.form()
    upload = form.get("file")
    fields = {key: form.getlist(key) for key in form.keys() if key != "file"}
    data = await upload.read() if upload is not None and hasattr(upload, "read") else b""
    with open(record_path, "a") as record:
        record.write(json.dumps({
            "route": request.url.path, "fields": fields,
            "file": None if upload is None else {
                "filename": upload.filename, "content_type": upload.content_type, "size": len(data)},
        }) + "\n")
    if not data:
        return error(400, "No file was uploaded.")
    first = lambda name: fields.get(name, [None])[0]
    if first("response_format") not in (None, "json", "verbose_json"):
        return error(400, "response_format must be json or verbose_json here.")
    words = "word" in fields.get("timestamp_granularities[]", [])
    upload.file.seek(0)
    try:
        segments, info = model.transcribe(
            upload.file, task=task, language=first("language") if task == "transcribe" else None,
            initial_prompt=first("prompt"), word_timestamps=words,
            temperature=float(first("temperature")) if first("temperature") else 0.0)
        segments = list(segments)
    except Exception as exc:  # PyAV cannot decode it
        return error(400, f"The audio could not be decoded: {type(exc).__name__}.")
    body = {"task": task, "language": info.language, "duration": info.duration,
            "text": "".join(s.text for s in segments),
            "segments": [{"id": i, "start": s.start, "end": s.end, "text": s.text, "avg_logprob": s.avg_logprob,
                          "no_speech_prob": s.no_speech_prob} for i, s in enumerate(segments)]}
    if words:
        body["words"] = [{"start": w.start, "end": w.end, "word": w.word} for s in segments for w in s.words]
    if first("response_format") != "verbose_json":
        body = {"text": body["text"]}
    return body


@app.post("/v1/audio/transcriptions")
async def transcriptions(request: Request):
    return await handle(request, "transcribe")


@app.post("/v1/audio/translations")
async def translations(request: Request):
    return await handle(request, "translate")


if __name__ == "__main__":
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    # Listening before the port is printed: a client that connects while uvicorn is still starting waits in the
    # backlog instead of being refused (under a full suite's load, uvicorn took longer than the client's retries).
    listener.listen(128)
    print(listener.getsockname()[1], flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listener])
