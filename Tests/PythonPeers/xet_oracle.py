"""The oracles for ModelDepot's Xet primitives: PyPI blake3 (the reference BLAKE3, in C), lz4 (the reference LZ4,
in C) and hf_xet (the Xet client most of the world uses, in Rust). Run by Tests/XetTests with .venv-xet.

Usage: xet_oracle.py MANIFEST.json
The manifest: {"blake3": [paths], "lz4": [paths], "xet": [paths], "key": hex}. Prints one JSON object:
{"blake3": {path: hex}, "blake3_keyed": {path: hex}, "lz4": {path: path of the compressed block},
 "lz4_high": {path: path}, "frame_*": {path: path of an LZ4 frame in one of FRAMES' settings}, "xet": {path: hex}}.
"""
import json, sys

import blake3
import hf_xet
import lz4.block
import lz4.frame

manifest = json.load(open(sys.argv[1]))
key = bytes.fromhex(manifest["key"])
out = {"blake3": {}, "blake3_keyed": {}, "lz4": {}, "lz4_high": {}, "xet": {}}
# LZ4 frames as Xet chunks hold them, in every setting a writer may choose: linked or independent blocks of the
# smallest size (so a chunk spans blocks and matches reach into the block before), checksums, the content size.
FRAMES = {
    "frame_linked": dict(block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=True),
    "frame_independent": dict(block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False),
    "frame_checksums": dict(block_checksum=True, content_checksum=True, store_size=True),
    "frame_high": dict(compression_level=lz4.frame.COMPRESSIONLEVEL_MINHC, block_size=lz4.frame.BLOCKSIZE_MAX256KB),
}
for path in manifest["blake3"]:
    data = open(path, "rb").read()
    out["blake3"][path] = blake3.blake3(data).hexdigest()
    out["blake3_keyed"][path] = blake3.blake3(data, key=key).hexdigest()
for path in manifest["lz4"]:
    data = open(path, "rb").read()
    for label, mode in (("lz4", "default"), ("lz4_high", "high_compression")):
        compressed = path + "." + label
        open(compressed, "wb").write(lz4.block.compress(data, mode=mode, store_size=False))
        out[label][path] = compressed
    for label, settings in FRAMES.items():
        compressed = path + "." + label
        open(compressed, "wb").write(lz4.frame.compress(data, **settings))
        out.setdefault(label, {})[path] = compressed
if manifest["xet"]:
    for path, info in zip(manifest["xet"], hf_xet.hash_files(manifest["xet"])):
        assert info.file_size == len(open(path, "rb").read())
        out["xet"][path] = info.hash
print(json.dumps(out))
