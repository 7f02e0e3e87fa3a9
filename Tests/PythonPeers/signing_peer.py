"""Signed model repositories made by the reference signer, PyPI's model-signing 1.1.1 (key method), for
ModelDepot's signature checks: one good repository and one per way a signature can fail.

    signing_peer.py prepare ROOT    # writes ROOT/keys/*.pem and ROOT/repos/acme/<case>/, prints the cases as JSON
    signing_peer.py verify MODEL PUBLIC_KEY SIGNATURE   # model-signing's own verdict: exit 0 when it verifies

Each case's repository is a plain folder our mirror serves; the expected refusal is what the Swift test checks.
"""

import base64
import hashlib
import json
import os
import pathlib
import shutil
import sys
import tempfile

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from model_signing import hashing, signing, verifying


def write_key(folder, name, private_key):
    (folder / f"{name}.pem").write_bytes(
        private_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    public = folder / f"{name}.pub.pem"
    public.write_bytes(
        private_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return public


def make_model(folder, weights_size):
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "signed"}\n')
    (folder / "sub").mkdir()
    (folder / "sub" / "notes.txt").write_text("hello\n")
    (folder / ".gitattributes").write_text("*.bin filter=lfs\n")
    # Above the mirror's LFS threshold (10 MiB): served as an LFS file, so its SHA-256 is the download's own.
    (folder / "weights.bin").write_bytes(hashlib.shake_256(b"weights").digest(weights_size))


def sign(folder, private_key):
    config = hashing.Config().set_ignored_paths(paths=["model.sig"])
    signing.Config().use_elliptic_key_signer(private_key=private_key).set_hashing_config(config).sign(
        folder, folder / "model.sig"
    )


def sign_statement(statement, private_key_path, public_key_path):
    """A bundle over an arbitrary statement, signed as model-signing signs (ECDSA over DSSE's PAE)."""
    key = serialization.load_pem_private_key(pathlib.Path(private_key_path).read_bytes(), None)
    payload = json.dumps(statement).encode()
    payload_type = "application/vnd.in-toto+json"
    pae = b"DSSEv1 %d %s %d %s" % (len(payload_type), payload_type.encode(), len(payload), payload)
    signature = key.sign(pae, ec.ECDSA(hashes.SHA256()))
    hint = hashlib.sha256(pathlib.Path(public_key_path).read_bytes()).hexdigest()
    return {
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": {"publicKey": {"hint": hint}, "tlogEntries": []},
        "dsseEnvelope": {
            "payload": base64.b64encode(payload).decode(),
            "payloadType": payload_type,
            "signatures": [{"sig": base64.b64encode(signature).decode(), "keyid": ""}],
        },
    }


def statement_of(folder):
    bundle = json.loads((folder / "model.sig").read_text())
    return bundle, json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))


def prepare(root):
    root = pathlib.Path(root)
    keys = root / "keys"
    keys.mkdir(parents=True)
    trusted = write_key(keys, "trusted", ec.generate_private_key(ec.SECP256R1()))
    write_key(keys, "other", ec.generate_private_key(ec.SECP256R1()))
    p384 = write_key(keys, "p384", ec.generate_private_key(ec.SECP384R1()))
    rsa_public = write_key(keys, "rsa", rsa.generate_private_key(public_exponent=65537, key_size=2048))
    repos = root / "repos" / "acme"
    size = 12 << 20

    def signed(name, key="trusted"):
        folder = repos / name
        make_model(folder, size)
        sign(folder, keys / f"{key}.pem")
        return folder

    signed("good")
    signed("p384", key="p384")
    # Changed after signing: one byte of a small file; a file added; a file removed.
    tampered = signed("tampered")
    (tampered / "config.json").write_text('{"model_type": "signeD"}\n')
    extra = signed("extra")
    (extra / "extra.txt").write_text("not signed\n")
    removed = signed("removed")
    (removed / "sub" / "notes.txt").unlink()
    signed("otherkey", key="other")
    # The statement altered (a digest replaced) without signing again.
    altered = signed("altered")
    bundle, statement = statement_of(altered)
    statement["predicate"]["resources"][0]["digest"] = "0" * 64
    bundle["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    (altered / "model.sig").write_text(json.dumps(bundle))
    # Another key's signature under the trusted key's hint: the ECDSA check itself must refuse it.
    forged = signed("forged", key="other")
    bundle, _ = statement_of(forged)
    bundle["verificationMaterial"]["publicKey"]["hint"] = hashlib.sha256(trusted.read_bytes()).hexdigest()
    (forged / "model.sig").write_text(json.dumps(bundle))
    # No signature at all; a truncated one.
    make_model(repos / "unsigned", size)
    truncated = signed("truncated")
    (truncated / "model.sig").write_bytes((truncated / "model.sig").read_bytes()[:200])
    # Validly signed by the trusted key, but naming a path that leaves the model folder.
    climbing = signed("climbing")
    _, statement = statement_of(climbing)
    statement["predicate"]["resources"][0]["name"] = "../outside.json"
    digests = b"".join(bytes.fromhex(r["digest"]) for r in statement["predicate"]["resources"])
    statement["subject"][0]["digest"]["sha256"] = hashlib.sha256(digests).hexdigest()
    (climbing / "model.sig").write_text(json.dumps(sign_statement(statement, keys / "trusted.pem", trusted)))
    # Sharded serialization, which we do not check (yet): refused by name, not misread.
    sharded = signed("sharded")
    _, statement = statement_of(sharded)
    statement["predicate"]["serialization"]["method"] = "shards"
    (sharded / "model.sig").write_text(json.dumps(sign_statement(statement, keys / "trusted.pem", trusted)))
    print(json.dumps({"trusted": str(trusted), "p384": str(p384), "rsa": str(rsa_public)}))


def verify(model, public_key, signature):
    # A Hub cache snapshot is links into blobs/, which model-signing 1.1.1 refuses (its allow_symlinks setting does
    # not reach the serializer): check a copy with the links followed, the files as the cache serves them.
    with tempfile.TemporaryDirectory() as scratch:
        plain = pathlib.Path(scratch) / pathlib.Path(model).name
        shutil.copytree(model, plain, symlinks=False)
        config = hashing.Config().set_ignored_paths(paths=["model.sig"])
        verifying.Config().use_elliptic_key_verifier(public_key=public_key).set_hashing_config(config).verify(
            plain, signature
        )


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "prepare":
        prepare(*arguments)
    elif command == "verify":
        try:
            verify(*arguments)
        except Exception as error:  # noqa: BLE001 - the verdict is the point
            print(f"refused: {error}", file=sys.stderr)
            sys.exit(1)
    else:
        sys.exit(f"unknown command {command}")
