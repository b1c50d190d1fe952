# SPDX-License-Identifier: LGPL-2.1-or-later
"""cli/lcloudctl.schema.json, loaded once, and a validator per document
kind with messages that point at the key; used by test_schema and the VM
tests that validate what lcloudctl printed in a guest."""
import json
import os

try:
    import jsonschema
except ImportError:
    # Debian's python3-jsonschema, when this python3 is not Debian's own
    import sys
    sys.path.append("/usr/lib/python3/dist-packages")
    import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_FILE = os.path.join(HERE, "..", "..", "cli", "lcloudctl.schema.json")
DOCS = ("probe", "list", "check", "advise", "torture_verify", "write")

with open(SCHEMA_FILE) as f:
    SCHEMA = json.load(f)
VALIDATOR = jsonschema.validators.validator_for(SCHEMA)
VALIDATOR.check_schema(SCHEMA)
WHOLE = VALIDATOR(SCHEMA)
PART = {d: VALIDATOR({"$schema": SCHEMA["$schema"], "$defs": SCHEMA["$defs"], "$ref": "#/$defs/" + d})
        for d in DOCS + ("probe_result", "probe_failure")}


def first_error(validator, doc):
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    return "%s at %s" % (errors[0].message, list(errors[0].absolute_path)) if errors else None


def validate(kind, doc, where):
    """Raises AssertionError unless DOC is a valid KIND document (and exactly one of the schema's)."""
    if kind == "probe":
        # each path on its own first: a precise message rather than "not valid under any of oneOf"
        for p in doc.get("probes", []):
            err = first_error(PART["probe_failure" if "error" in p else "probe_result"], p)
            assert not err, "probe %s (%s): %s" % (p.get("path"), where, err)
    err = first_error(PART[kind], doc)
    assert not err, "%s (%s): %s" % (kind, where, err)
    assert WHOLE.is_valid(doc), "%s (%s) matches not exactly one document of the schema" % (kind, where)
    assert doc["schema"] == 1
