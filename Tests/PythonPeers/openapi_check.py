"""Validates the web app's OpenAPI document and real answers against its schemas.

Usage: python openapi_check.py DOCUMENT [SCHEMA_NAME ANSWER_FILE]...
Prints {"document": "valid", "answers": {file: "valid" or the first error}}. Run by
Tests/ScreensTests/WebAppTests.swift with the venv scripts/test creates (openapi-spec-validator 0.9.0, which
brings jsonschema).
"""
import json, sys
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

document = json.load(open(sys.argv[1]))
validate(document)
result = {"document": "valid", "answers": {}}
pairs = sys.argv[2:]
for name, path in zip(pairs[0::2], pairs[1::2]):
    # The document is the root, so the schema's $refs (#/components/schemas/…) resolve inside it.
    schema = dict(document)
    schema["$ref"] = "#/components/schemas/" + name
    errors = sorted(Draft202012Validator(schema).iter_errors(json.load(open(path))), key=lambda e: list(e.path))
    result["answers"][path] = "valid" if not errors else f"{list(errors[0].path)}: {errors[0].message}"
print(json.dumps(result))
