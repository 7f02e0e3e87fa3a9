"""Sample pickles, benign and malicious, raw and inside a ZIP laid out as torch.save lays it out, with the verdicts
of the reference scanners (PyPI picklescan 1.0.5 and fickling 0.1.12) for ModelDepot's own to be checked against.

    pickle_samples.py make DIR           # writes DIR/<sample> files; prints {"<sample>": {...verdicts...}} as JSON
    pickle_samples.py judge DIR NAME...  # the reference scanners' verdicts on files made elsewhere, as JSON

No sample is ever loaded here; torch is not needed (its global names are stand-ins registered for pickling).
"""

import io
import json
import os
import pathlib
import pickle
import sys
import types
import zipfile
from collections import OrderedDict

import fickling
from picklescan.scanner import SafetyLevel, scan_file_path


def stand_in(module, name):
    """A function pickle writes as `module.name` (picklable by reference without importing the real module)."""
    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        name_so_far = ".".join(parts[:depth])
        if name_so_far not in sys.modules:
            sys.modules[name_so_far] = types.ModuleType(name_so_far)
            if depth > 1:
                setattr(sys.modules[".".join(parts[: depth - 1])], parts[depth - 1], sys.modules[name_so_far])
    if hasattr(sys.modules[module], name):
        return getattr(sys.modules[module], name)
    function = lambda *args: None  # noqa: E731 - never called
    function.__module__, function.__qualname__, function.__name__ = module, name, name
    setattr(sys.modules[module], name, function)
    return function


class Reduce:
    def __init__(self, function, *args):
        self.function, self.args = function, args

    def __reduce__(self):
        return self.function, self.args


def tensor(storage_key):
    rebuild = stand_in("torch._utils", "_rebuild_tensor_v2")
    return Reduce(rebuild, storage_key, 0, (2, 2), (2, 1), False, OrderedDict())


def torch_zip(path, payload, protocol=2):
    """The layout torch.save writes: `<stem>/data.pkl` first, stored; tensor data and a version beside it."""
    stem = path.stem
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(f"{stem}/data.pkl", pickle.dumps(payload, protocol=protocol))
        archive.writestr(f"{stem}/byteorder", "little")
        archive.writestr(f"{stem}/data/0", bytes(16))
        archive.writestr(f"{stem}/version", "3\n")


def samples():
    state = OrderedDict([("layer.weight", tensor("0")), ("layer.bias", tensor("1"))])
    system = os.system  # pickled as posix.system
    return {
        "benign-state-dict.pkl": ("raw", state, 2),
        "benign-protocol4.pkl": ("raw", {"step": 10, "names": ["a", "b"], "weights": state}, 4),
        "benign-plain-data.pkl": ("raw", {"epoch": 3, "loss": 0.25, "tags": ("x", "y")}, 5),
        "evil-os-system.pkl": ("raw", Reduce(system, "echo pwned"), 2),
        "evil-eval-protocol4.pkl": ("raw", {"w": state, "x": Reduce(eval, "1+1")}, 4),
        "evil-subprocess.pkl": ("raw", Reduce(stand_in("subprocess", "Popen"), ["id"]), 3),
        "evil-getattr.pkl": ("raw", Reduce(getattr, Reduce(__import__, "os"), "system"), 4),
        "benign-torch.pt": ("zip", state, 2),
        "evil-torch.pt": ("zip", OrderedDict([("w", tensor("0")), ("x", Reduce(system, "echo pwned"))]), 2),
        "evil-torch-runpy.pt": ("zip", Reduce(stand_in("runpy", "_run_code"), "print(1)", {}), 2),
    }


def picklescan_verdict(path):
    result = scan_file_path(str(path))
    return {
        "dangerous": result.issues_count > 0,
        "globals": sorted(
            f"{g.module}.{g.name}" for g in result.globals if g.safety == SafetyLevel.Dangerous
        ),
        "error": bool(result.scan_err),
    }


def fickling_verdict(path):
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            data = next(n for n in archive.namelist() if n.endswith("data.pkl"))
            raw = archive.read(data)
        scratch = path.with_suffix(".data.pkl.tmp")
        scratch.write_bytes(raw)
        try:
            return {"likely_safe": bool(fickling.is_likely_safe(str(scratch)))}
        finally:
            scratch.unlink()
    return {"likely_safe": bool(fickling.is_likely_safe(str(path)))}


def make(folder):
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    verdicts = {}
    for name, (shape, payload, protocol) in samples().items():
        path = folder / name
        if shape == "raw":
            path.write_bytes(pickle.dumps(payload, protocol=protocol))
        else:
            torch_zip(path, payload, protocol)
        verdicts[name] = {"picklescan": picklescan_verdict(path), "fickling": fickling_verdict(path)}
    # Files that are not pickles, whatever their names say.
    (folder / "ctranslate2-model.bin").write_bytes(b"\x06\x00\x00\x00" + bytes(range(256)) * 4)
    (folder / "plain.zip").write_bytes(zip_of({"readme.txt": b"hello"}))
    print(json.dumps(verdicts, indent=1))


def zip_of(files):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def judge(folder, names):
    """Each scanner's verdict, or the error it stopped with (a file it cannot read is no verdict of safety)."""
    verdicts = {}
    for name in names:
        path = pathlib.Path(folder) / name
        verdict = {}
        for scanner, judged in (("picklescan", picklescan_verdict), ("fickling", fickling_verdict)):
            try:
                verdict[scanner] = judged(path)
            except Exception as failure:  # noqa: BLE001 - any failure is reported, not a verdict
                verdict[scanner] = {"failed": f"{type(failure).__name__}: {failure}"}
        verdicts[name] = verdict
    print(json.dumps(verdicts, indent=1))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    elif sys.argv[1] == "judge":
        judge(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(f"unknown command {sys.argv[1]}")
