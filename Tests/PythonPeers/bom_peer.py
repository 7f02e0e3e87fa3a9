"""The references a bill of materials is held to (issue 66), from the trust venv:

    bom_peer.py validate FILE      # cyclonedx-python-lib's strict JSON validator for CycloneDX 1.6; exit 1 naming
                                   # the error. Prints the model component's purl as packageurl-python parses it.
    bom_peer.py validate-spdx FILE # spdx-python-model (the SPDX project's bindings of the 3.0.1 model, generated from
                                   # its SHACL): read strictly (unknown types and properties refused, values typed),
                                   # then written back (required properties and counts checked). Prints the
                                   # packages' names and purls and the files' SHA-256s.
    bom_peer.py fingerprint PEM    # SHA-256 of a PEM public key's DER SubjectPublicKeyInfo (Python's cryptography)
    bom_peer.py spdx-ids           # the SPDX licence ids the validator accepts, one per line
"""

import hashlib
import json
import pathlib
import sys

from cryptography.hazmat.primitives import serialization
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from packageurl import PackageURL


def validate(path):
    text = pathlib.Path(path).read_text()
    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    if error is not None:
        sys.exit(f"invalid: {str(error)[:600]}")
    model = json.loads(text)["components"][0]
    parsed = None
    if "purl" in model:
        purl = PackageURL.from_string(model["purl"])
        parsed = {"type": purl.type, "namespace": purl.namespace, "name": purl.name, "version": purl.version,
                  "qualifiers": purl.qualifiers}
    print(json.dumps({"valid": True, "purl": parsed}))


def validate_spdx(path):
    import io

    import spdx_python_model

    model, objects = spdx_python_model.load_data(json.loads(pathlib.Path(path).read_text()))
    model.JSONLDSerializer().write(objects, io.BytesIO())
    packages, files = [], {}
    for element in objects.objects:
        kind = type(element).__name__
        if kind == "ai_AIPackage" and element.software_packageVersion:
            packages.append({"name": element.name, "purl": element.software_packageUrl})
        if kind == "software_File":
            files[element.name] = [h.hashValue for h in element.verifiedUsing]
    print(json.dumps({"valid": True, "model": model.__name__, "packages": packages, "files": files}))


def fingerprint(pem):
    key = serialization.load_pem_public_key(pathlib.Path(pem).read_bytes())
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    print(hashlib.sha256(der).hexdigest())


def spdx_ids():
    import cyclonedx.schema._res as resources

    schema = json.loads((pathlib.Path(resources.__file__).parent / "spdx.SNAPSHOT.schema.json").read_text())
    print("\n".join(schema["enum"]))


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    {"validate": validate, "validate-spdx": validate_spdx, "fingerprint": fingerprint, "spdx-ids": spdx_ids}[command](*arguments)
