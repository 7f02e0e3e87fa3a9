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

import datetime

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID
from model_signing import hashing, signing, verifying


SHARD_SIZE = 1 << 20


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


def certificate(subject, key, issuer=None, issuer_key=None, ca=False, signing=True, email=None):
    """An X.509 certificate for `key`, signed by the issuer (self-signed without one), valid from yesterday; with
    `email`, a subject alternative name."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer.subject if issuer else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=signing, content_commitment=False, key_encipherment=not signing,
                data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
    )
    if email:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.RFC822Name(email)]), critical=False)
    return builder.sign(issuer_key or key, hashes.SHA256())


def write_certificates(folder):
    """A root, a publisher's leaf it issued (digital signatures), a leaf that may not sign, and a stranger's root."""
    root_key = ec.generate_private_key(ec.SECP256R1())
    root = certificate("ModelDepot Test Root", root_key, ca=True)
    publisher_key = ec.generate_private_key(ec.SECP256R1())
    publisher = certificate("Publisher", publisher_key, root, root_key, email="publisher@example.com")
    # Another holder of a signing certificate from the same root: a chain to the root is not the publisher.
    intruder_key = ec.generate_private_key(ec.SECP256R1())
    intruder = certificate("Intruder", intruder_key, root, root_key, email="intruder@example.com")
    encipher_key = ec.generate_private_key(ec.SECP256R1())
    encipher_only = certificate("Encipherer", encipher_key, root, root_key, signing=False)
    stranger_key = ec.generate_private_key(ec.SECP256R1())
    stranger = certificate("Stranger Root", stranger_key, ca=True)
    stranger_leaf_key = ec.generate_private_key(ec.SECP256R1())
    stranger_leaf = certificate("Stranger", stranger_leaf_key, stranger, stranger_key)
    for name, cert in [("root", root), ("publisher", publisher), ("intruder", intruder), ("encipherer", encipher_only),
                       ("stranger-root", stranger), ("stranger", stranger_leaf)]:
        (folder / f"{name}.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    for name, key in [("publisher", publisher_key), ("intruder", intruder_key), ("encipherer", encipher_key),
                      ("stranger", stranger_leaf_key)]:
        write_key(folder, f"{name}-cert", key)


def sign_with_certificate(folder, keys, name, chain):
    config = hashing.Config().set_ignored_paths(paths=["model.sig"])
    signing.Config().use_certificate_signer(
        private_key=keys / f"{name}-cert.pem", signing_certificate=keys / f"{name}.crt",
        certificate_chain=[keys / f"{c}.crt" for c in chain],
    ).set_hashing_config(config).sign(folder, folder / "model.sig")


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
    return statement_of_bundle(folder / "model.sig")


def statement_of_bundle(path):
    bundle = json.loads(path.read_text())
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
    # A serialization nobody defined: refused by name, not misread.
    other_method = signed("othermethod")
    _, statement = statement_of(other_method)
    statement["predicate"]["serialization"]["method"] = "merkle"
    (other_method / "model.sig").write_text(json.dumps(sign_statement(statement, keys / "trusted.pem", trusted)))
    # Signed in 1 MiB shards (3 MiB of weights: three pieces; an empty file: none): good; a byte of the second
    # piece changed; the second piece left out of the statement and the rest signed again.
    def sharded(name):
        folder = repos / name
        make_model(folder, 3 << 20)
        (folder / "empty.txt").write_bytes(b"")
        config = hashing.Config().use_shard_serialization(shard_size=SHARD_SIZE).set_ignored_paths(paths=["model.sig"])
        signing.Config().use_elliptic_key_signer(private_key=keys / "trusted.pem").set_hashing_config(config).sign(
            folder, folder / "model.sig"
        )
        return folder

    sharded("sharded")
    flipped = sharded("sharded-tampered")
    with open(flipped / "weights.bin", "r+b") as weights:
        weights.seek(SHARD_SIZE + 10)
        byte = weights.read(1)
        weights.seek(SHARD_SIZE + 10)
        weights.write(bytes([byte[0] ^ 1]))
    gap = sharded("sharded-gap")
    _, statement = statement_of(gap)
    resources = statement["predicate"]["resources"]
    resources[:] = [r for r in resources if r["name"] != f"weights.bin:{SHARD_SIZE}:{2 * SHARD_SIZE}"]
    digests = b"".join(bytes.fromhex(r["digest"]) for r in resources)
    statement["subject"][0]["digest"]["sha256"] = hashlib.sha256(digests).hexdigest()
    (gap / "model.sig").write_text(json.dumps(sign_statement(statement, keys / "trusted.pem", trusted)))
    # Signed with certificates: the publisher's leaf under the test root; a stranger's chain; a leaf that may not
    # sign (key usage without digital signatures).
    write_certificates(keys)
    for name, signer, chain in [("cert-good", "publisher", ["root"]), ("cert-stranger", "stranger", ["stranger-root"]),
                                ("cert-encipherer", "encipherer", ["root"]), ("cert-intruder", "intruder", ["root"])]:
        folder = repos / name
        make_model(folder, size)
        sign_with_certificate(folder, keys, signer, chain)
    print(json.dumps({"trusted": str(trusted), "p384": str(p384), "rsa": str(rsa_public),
                      "root": str(keys / "root.crt")}))


def verify(model, public_key, signature):
    """model-signing's verdict; `public_key` ending in .crt is a trusted root certificate instead."""
    # A Hub cache snapshot is links into blobs/, which model-signing 1.1.1 refuses (its allow_symlinks setting does
    # not reach the serializer): check a copy with the links followed, the files as the cache serves them.
    with tempfile.TemporaryDirectory() as scratch:
        plain = pathlib.Path(scratch) / pathlib.Path(model).name
        shutil.copytree(model, plain, symlinks=False)
        config = hashing.Config()
        # model-signing 1.1.1 cannot guess a shards configuration from its own signatures (the shard size comes
        # back from the protobuf Struct as a float, which range() refuses): say it.
        _, statement = statement_of_bundle(pathlib.Path(signature))
        serialization = statement["predicate"]["serialization"]
        if serialization["method"] == "shards":
            config = config.use_shard_serialization(shard_size=int(serialization["shard_size"]))
        config = config.set_ignored_paths(paths=["model.sig"])
        verifier = verifying.Config()
        if public_key.endswith(".crt"):
            verifier = verifier.use_certificate_verifier(certificate_chain=[public_key])
        else:
            verifier = verifier.use_elliptic_key_verifier(public_key=public_key)
        verifier.set_hashing_config(config).verify(plain, signature)


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
