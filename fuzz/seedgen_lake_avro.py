"""Seeds for fuzz_lake_avro (fuzz/corpus/fuzz_lake_avro/): object container
files from our writer (the lake_avro_sample helper: Iceberg manifest-like,
several blocks, and an empty one) and from fastavro (every type, small
blocks), a file written by hand with negative block counts (the metadata
map's and an array's, each with its byte size), a few truncations, and one
datum of the harness's raw-decoder schema written by fastavro.

Run with the project's virtualenv after a build:
    .venv/bin/python fuzz/seedgen_lake_avro.py [path/to/lake_avro_sample]
"""

import io
import os
import subprocess
import sys
import tempfile

import fastavro

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "lake"))

from test_avro_interop import EVERY, every_record  # noqa: E402

OUT = os.path.join(HERE, "corpus", "fuzz_lake_avro")
SYNC = bytes(range(0x40, 0x50))


def zz(v):
    """An Avro long: zigzag, then ULEB128."""
    u = (v << 1) ^ (v >> 63)
    u &= (1 << 64) - 1
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def avro_bytes(b):
    return zz(len(b)) + b


def negative_blocks():
    """Metadata map in one negative-count block; records of array<long>,
    the first in two blocks (one negative, with its byte size)."""
    entries = avro_bytes(b"avro.schema") + avro_bytes(b'{"type":"array","items":"long","element-id":7}')
    entries += avro_bytes(b"avro.codec") + avro_bytes(b"null")
    header = b"Obj\x01" + zz(-2) + zz(len(entries)) + entries + zz(0) + SYNC
    items = zz(3) + zz(-4)
    rec1 = zz(1) + zz(1) + zz(-2) + zz(len(items)) + items + zz(0)
    rec2 = zz(0)
    data = rec1 + rec2
    return header + zz(2) + zz(len(data)) + data + SYNC


def datum():
    """One datum of fuzz_lake_avro.c's datum_schema."""
    schema = {"type": "record", "name": "all", "fields": [
        {"name": "n", "type": "null"}, {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"}, {"name": "l", "type": "long"},
        {"name": "f", "type": "float"}, {"name": "d", "type": "double"},
        {"name": "y", "type": "bytes"}, {"name": "s", "type": "string"},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}},
        {"name": "x", "type": {"type": "fixed", "name": "F", "size": 3}},
        {"name": "a", "type": {"type": "array", "items": "long"}},
        {"name": "m", "type": {"type": "map", "values": ["null", "string"]}},
        {"name": "kv", "type": {"type": "array", "items": {"type": "record", "name": "kv", "fields": [
            {"name": "key", "type": "int"}, {"name": "value", "type": "long"}]}}},
    ]}
    rec = {"n": None, "b": True, "i": -7, "l": 1 << 40, "f": 1.5, "d": -2.25, "y": b"\x00\xff",
           "s": "été", "e": "C", "x": b"abc", "a": [1, -2, 3], "m": {"k": None, "v": "w"},
           "kv": [{"key": 1, "value": 10}, {"key": 2, "value": -20}]}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), rec)
    return buf.getvalue()


def main():
    sample = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "build", "lake_avro_sample")
    os.makedirs(OUT, exist_ok=True)
    seeds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in [("ours-manifest-3", ["3", "2"]), ("ours-manifest-1", ["1"]),
                           ("ours-empty", ["0"])]:
            path = os.path.join(tmp, name)
            subprocess.run([sample, "write", path, *args], check=True)
            with open(path, "rb") as f:
                seeds[name] = f.read()
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(EVERY), [every_record(k) for k in range(8)],
                    codec="null", sync_interval=300, metadata={"format-version": "2"})
    seeds["fastavro-every-8"] = buf.getvalue()
    seeds["hand-negative-blocks"] = negative_blocks()
    seeds["datum-all"] = datum()
    m = seeds["ours-manifest-3"]
    for cut in (len(m) // 3, len(m) // 2, len(m) - 3):
        seeds["trunc-manifest-3-at-%d" % cut] = m[:cut]
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print("wrote %d seeds to %s" % (len(seeds), os.path.relpath(OUT, REPO)))


if __name__ == "__main__":
    main()
