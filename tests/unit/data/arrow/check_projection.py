#!/usr/bin/env python3
"""Reads a RecordBatch message written by fluss-c with pyarrow and compares it.

usage: check_projection.py SCHEMA_JSON FILE

FILE holds one encapsulated Arrow IPC RecordBatch message (no Schema
message), as our fl_arrow_project / fl_arrow_writer_finish write it.
SCHEMA_JSON is a JSON object:
  "fields":   [[name, type], ...]  the schema to read FILE with; type names
              as in make_fixtures.TYPES ("int32", "list<utf8>", ...)
  "expected": path of a message to read with the same schema and compare
              (pyarrow's own projection), optional
  "select":   column positions of make_fixtures.all_types_batch() the batch
              must equal, optional
  "values":   {name: [python values]} the batch must equal, optional
  "ranges":   {name: [start, stop]} column name must equal range(start, stop)
              (for batches too large to spell out), optional
Exit status 0 when FILE decodes (full validation) and equals every given
expectation; 1 with a diff on stderr otherwise.
"""
import json
import os
import sys

import pyarrow as pa

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures  # noqa: E402


def read_message(path, schema):
    with open(path, "rb") as f:
        data = f.read()
    batch = pa.ipc.read_record_batch(pa.py_buffer(data), schema)
    batch.validate(full=True)
    return batch


def compare(what, got, want):
    if got.equals(want):
        return True
    print(f"{what}: batches differ", file=sys.stderr)
    for i, name in enumerate(want.schema.names):
        a, b = got.column(i), want.column(i)
        if not a.equals(b):
            print(f"  column {name}:\n    got  {a.to_pylist()}\n    want {b.to_pylist()}",
                  file=sys.stderr)
    return False


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    spec = json.loads(sys.argv[1])
    schema = make_fixtures.schema_of(spec["fields"])
    try:
        got = read_message(sys.argv[2], schema)
    except Exception as e:  # pyarrow raises several types; all mean "unreadable"
        print(f"pyarrow cannot read {sys.argv[2]}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    ok = True
    if spec.get("expected"):
        ok &= compare("vs expected file", got, read_message(spec["expected"], schema))
    if spec.get("select") is not None:
        want = make_fixtures.all_types_batch().select(spec["select"])
        ok &= compare("vs all_types selection", got, want)
    if spec.get("values") is not None:
        want = pa.RecordBatch.from_pydict(spec["values"], schema=schema)
        ok &= compare("vs values", got, want)
    for name, (start, stop) in (spec.get("ranges") or {}).items():
        col = got.column(got.schema.get_field_index(name))
        if col.to_pylist() != list(range(start, stop)):
            print(f"column {name} is not range({start}, {stop})", file=sys.stderr)
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
