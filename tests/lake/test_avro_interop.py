"""Our Avro object container writer and reader (src/lake/lake_avro*)
against fastavro, both ways.

Ours -> fastavro: lake_avro_sample writes its Iceberg v2 manifest-like
file (manifest_entry, data_file r2, partition r102, int-keyed maps as
arrays of k<id>_v<id> records with logicalType map, split_offsets with
its element-id) in several blocks; fastavro reads it: every value as the
sample's formulas give them, the header metadata Iceberg writes, and the
field-id / element-id attributes and null defaults in avro.schema.

fastavro -> ours: fastavro writes every Avro type (logical types as
attributes, a three-branch union, a string-keyed map with key-id and
value-id, nested records and arrays) in many blocks, with user metadata;
our reader (the helper's `read` mode) gives back equal values, the
metadata, and the ids in the schema. A deflate file is refused by name
(codec null only: zlib is not among our dependencies).

Environment: LAKE_AVRO_SAMPLE = path of the helper (default build/).
"""

import json
import math
import os
import struct
import subprocess
from decimal import Decimal

import fastavro
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.environ.get("LAKE_AVRO_SAMPLE", os.path.join(ROOT, "build", "lake_avro_sample"))
RECORDS = 300
BLOCK_RECORDS = 64


def run_sample(*args, check=True):
    assert os.path.exists(SAMPLE), "build the helper first (cmake --build build)"
    return subprocess.run([SAMPLE, *args], check=check, timeout=60, capture_output=True, text=True)


# ---- ours -> fastavro ----


def long_map(n, base):
    return None if n < 0 else [{"key": c + 1, "value": base + c} for c in range(n)]


def bounds(x, letter, k):
    return [{"key": 1, "value": struct.pack("<i", x)},
            {"key": 2, "value": ("%s%d" % (letter, k % 1000)).encode()}]


def sample_record(k):
    """The formulas of avro_sample.c's sample_record."""
    return {
        "status": 1,
        "snapshot_id": None if k % 3 == 0 else 1000 + k,
        "sequence_number": None,
        "file_sequence_number": None if k % 2 else k,
        "data_file": {
            "content": 0,
            "file_path": "file:///wh/db/t/data/__bucket=%d/%05d.parquet" % (k % 4, k),
            "file_format": "PARQUET",
            "partition": {"p_bucket": None if k % 5 == 4 else k % 4,
                          "p_name": None if k % 7 == 0 else "été-%d" % k},
            "record_count": 100 * k + 1,
            "file_size_in_bytes": 4096 + 17 * k,
            "column_sizes": long_map(3, 10 * k),
            "value_counts": long_map(3, 100 * k + 1),
            "null_value_counts": long_map(k % 4, 0),
            "nan_value_counts": None,
            "lower_bounds": bounds(-k, "a", k),
            "upper_bounds": bounds(k + 100000, "z", k),
            "split_offsets": [4, 4 + 1000 * k] if k % 2 else [4],
            "sort_order_id": 0 if k % 2 else None,
        },
    }


# field name -> (field-id, the type's JSON as written, minus nested records)
MANIFEST_IDS = {"status": 0, "snapshot_id": 1, "sequence_number": 3, "file_sequence_number": 4,
                "data_file": 2}
DATA_FILE_IDS = {"content": 134, "file_path": 100, "file_format": 101, "partition": 102,
                 "record_count": 103, "file_size_in_bytes": 104, "column_sizes": 108,
                 "value_counts": 109, "null_value_counts": 110, "nan_value_counts": 137,
                 "lower_bounds": 125, "upper_bounds": 128, "split_offsets": 132,
                 "sort_order_id": 140}
INT_MAPS = {"column_sizes": (117, 118), "value_counts": (119, 120), "null_value_counts": (121, 122),
            "nan_value_counts": (138, 139), "lower_bounds": (126, 127), "upper_bounds": (129, 130)}


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("avro") / "manifest.avro")
    run_sample("write", path, str(RECORDS), str(BLOCK_RECORDS))
    return path


def test_fastavro_reads_our_values(ours):
    with open(ours, "rb") as f:
        got = list(fastavro.reader(f))
    assert len(got) == RECORDS
    for k in range(RECORDS):
        assert got[k] == sample_record(k), "record %d" % k
    with open(ours, "rb") as f:
        blocks = [b.num_records for b in fastavro.block_reader(f)]
    want = [BLOCK_RECORDS] * (RECORDS // BLOCK_RECORDS)
    if RECORDS % BLOCK_RECORDS:
        want.append(RECORDS % BLOCK_RECORDS)
    assert blocks == want


def test_fastavro_reads_our_metadata(ours):
    with open(ours, "rb") as f:
        r = fastavro.reader(f)
        meta = r.metadata
    assert meta["avro.codec"] == "null"
    assert meta["format-version"] == "2"
    assert meta["partition-spec-id"] == "0"
    assert meta["schema-id"] == "0"
    assert meta["content"] == "data"
    assert json.loads(meta["schema"])["fields"][1]["name"] == "__bucket"
    spec = json.loads(meta["partition-spec"])
    assert [p["field-id"] for p in spec] == [1000, 1001]


def test_our_schema_carries_iceberg_ids(ours):
    with open(ours, "rb") as f:
        raw = json.loads(fastavro.reader(f).metadata["avro.schema"])
    assert raw["name"] == "manifest_entry"
    fields = {fl["name"]: fl for fl in raw["fields"]}
    assert list(fields) == list(MANIFEST_IDS)
    for name, fid in MANIFEST_IDS.items():
        assert fields[name]["field-id"] == fid, name
    for name in ("snapshot_id", "sequence_number", "file_sequence_number"):
        assert fields[name]["type"] == ["null", "long"] and "default" in fields[name]
        assert fields[name]["default"] is None
    df = fields["data_file"]["type"]
    assert df["name"] == "r2"
    dff = {fl["name"]: fl for fl in df["fields"]}
    assert list(dff) == list(DATA_FILE_IDS)
    for name, fid in DATA_FILE_IDS.items():
        assert dff[name]["field-id"] == fid, name
    assert dff["file_path"]["doc"] == "Location URI with FS scheme"
    part = dff["partition"]["type"]
    assert part["name"] == "r102"
    assert [(p["name"], p["field-id"]) for p in part["fields"]] == [("p_bucket", 1000),
                                                                    ("p_name", 1001)]
    for name, (kid, vid) in INT_MAPS.items():
        null, arr = dff[name]["type"]
        assert null == "null" and dff[name]["default"] is None
        assert arr["type"] == "array" and arr["logicalType"] == "map", name
        kv = arr["items"]
        assert kv["name"] == "k%d_v%d" % (kid, vid)
        assert [(x["name"], x["field-id"]) for x in kv["fields"]] == [("key", kid), ("value", vid)]
    splits = dff["split_offsets"]["type"][1]
    assert splits == {"type": "array", "items": "long", "element-id": 133}
    # fastavro keeps the attributes in its parsed schema too
    parsed = fastavro.parse_schema(raw)
    assert parsed["fields"][4]["type"]["fields"][12]["type"][1]["element-id"] == 133


def test_our_reader_reads_our_file(ours):
    lines = run_sample("read", ours).stdout.splitlines()
    assert len(lines) == 2 + RECORDS
    meta = json.loads(lines[0])["meta"]
    assert meta["format-version"] == "2" and meta["content"] == "data"
    for k in range(RECORDS):
        rec = json.loads(lines[2 + k])
        want = sample_record(k)
        for name in ("lower_bounds", "upper_bounds"):
            for e in want["data_file"][name]:
                e["value"] = e["value"].hex()
        assert rec == want, "record %d" % k


def test_empty_file(tmp_path):
    path = str(tmp_path / "empty.avro")
    run_sample("write", path, "0")
    with open(path, "rb") as f:
        assert list(fastavro.reader(f)) == []
    assert len(run_sample("read", path).stdout.splitlines()) == 2


# ---- fastavro -> ours ----

EVERY = {
    "type": "record", "name": "every", "fields": [
        {"name": "n", "type": "null", "field-id": 1},
        {"name": "b", "type": "boolean", "field-id": 2},
        {"name": "i", "type": "int", "field-id": 3},
        {"name": "l", "type": "long", "field-id": 4},
        {"name": "f", "type": "float", "field-id": 5},
        {"name": "d", "type": "double", "field-id": 6},
        {"name": "y", "type": "bytes", "field-id": 7},
        {"name": "s", "type": "string", "field-id": 8},
        {"name": "e", "type": {"type": "enum", "name": "E",
                               "symbols": ["DATA", "POSITION_DELETES", "EQUALITY_DELETES"]},
         "field-id": 9},
        {"name": "x", "type": {"type": "fixed", "name": "uuid16", "size": 16}, "field-id": 10},
        {"name": "a", "type": {"type": "array", "items": "long", "element-id": 12}, "field-id": 11},
        {"name": "m", "type": {"type": "map", "values": "string", "key-id": 14, "value-id": 15},
         "field-id": 13},
        {"name": "o", "type": ["null", "string"], "default": None, "field-id": 16},
        {"name": "u", "type": ["null", "long", "string"], "field-id": 17},
        {"name": "r", "type": {"type": "record", "name": "inner", "fields": [
            {"name": "x", "type": "int", "field-id": 19},
            {"name": "tags", "type": {"type": "array", "items": "string", "element-id": 21},
             "field-id": 20}]}, "field-id": 18},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}, "field-id": 22},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}, "field-id": 23},
        {"name": "dec", "type": {"type": "fixed", "name": "dec9", "size": 5,
                                 "logicalType": "decimal", "precision": 9, "scale": 2},
         "field-id": 24},
        {"name": "kv", "type": {"type": "array", "logicalType": "map", "items": {
            "type": "record", "name": "k26_v27", "fields": [
                {"name": "key", "type": "int", "field-id": 26},
                {"name": "value", "type": "bytes", "field-id": 27}]}}, "field-id": 25},
        {"name": "ol", "type": ["null", {"type": "array", "items": "double", "element-id": 29}],
         "default": None, "field-id": 28},
    ]}

N_EVERY = 1000
INTS = [0, -1, 1, 2**31 - 1, -2**31, 63, -64, 64]
LONGS = [0, -1, 2**63 - 1, -2**63, 2**31, -2**31 - 1, 1 << 40]
FLOATS = [0.0, -0.0, 1.5, float("nan"), float("inf"), -float("inf"), 3.4028234663852886e38,
          1e-45]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def every_record(k):
    """What fastavro writes (Python values)."""
    f = FLOATS[k % len(FLOATS)] if k < 40 else k / 3.0
    return {
        "n": None,
        "b": k % 3 == 0,
        "i": INTS[k % len(INTS)] if k < 40 else k * 7919 - 500000,
        "l": LONGS[k % len(LONGS)] if k < 40 else k * 1000000007 - (1 << 50),
        "f": f,
        "d": -f if k < 40 else k / 7.0 - 1e10,
        "y": bytes((k + j) % 256 for j in range(k % 9)),
        "s": "" if k % 5 == 0 else "ß-%d-€" % k,
        "e": ["DATA", "POSITION_DELETES", "EQUALITY_DELETES"][k % 3],
        "x": bytes((k * 16 + j) % 256 for j in range(16)),
        "a": [k - j for j in range(k % 6)],
        "m": {"k%d" % j: "v%d" % (k * j) for j in range(k % 4)},
        "o": None if k % 2 else "o%d" % k,
        "u": [None, k * -3, "u%d" % k][k % 3],
        "r": {"x": -k, "tags": ["t%d" % j for j in range(k % 3)]},
        "ts": 1700000000000000 + k * 1000003,
        "day": 19000 + k,
        "dec": Decimal(k * 13 - 5000).scaleb(-2),
        "kv": [{"key": j, "value": bytes([j, k % 256])} for j in range(k % 3)],
        "ol": None if k % 4 == 0 else [k / 2.0, -0.5],
    }


def expected_json(k):
    """What our helper prints for every_record(k)."""
    r = every_record(k)
    f = f32(r["f"])
    r["f"] = "NaN" if math.isnan(f) else ("Infinity" if f == math.inf else
                                          "-Infinity" if f == -math.inf else f)
    d = r["d"]
    r["d"] = "NaN" if math.isnan(d) else ("Infinity" if d == math.inf else
                                          "-Infinity" if d == -math.inf else d)
    r["y"] = r["y"].hex()
    r["x"] = r["x"].hex()
    unscaled = k * 13 - 5000
    r["dec"] = unscaled.to_bytes(5, "big", signed=True).hex()
    r["kv"] = [{"key": e["key"], "value": e["value"].hex()} for e in r["kv"]]
    return r


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[x], b[x]) for x in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return a == b and not isinstance(b, bool)
    return a == b and type(a) is type(b)


@pytest.fixture(scope="module")
def theirs(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("avro") / "every.avro")
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(EVERY), (every_record(k) for k in range(N_EVERY)),
                        codec="null", sync_interval=2000,
                        metadata={"format-version": "2", "k": "v", "empty": ""})
    return path


def test_our_reader_reads_fastavro(theirs):
    with open(theirs, "rb") as f:
        blocks = [b.num_records for b in fastavro.block_reader(f)]
    assert len(blocks) > 10 and sum(blocks) == N_EVERY
    lines = run_sample("read", theirs).stdout.splitlines()
    assert len(lines) == 2 + N_EVERY
    for k in range(N_EVERY):
        got = json.loads(lines[2 + k])
        want = expected_json(k)
        assert list(got) == list(want), k
        for name in want:
            assert same(got[name], want[name]), "record %d field %s: %r != %r" % (
                k, name, got[name], want[name])


def test_our_reader_reads_fastavro_metadata_and_ids(theirs):
    lines = run_sample("read", theirs).stdout.splitlines()
    meta = json.loads(lines[0])["meta"]
    assert meta["avro.codec"] == "null"
    assert meta["format-version"] == "2" and meta["k"] == "v" and meta["empty"] == ""
    schema = json.loads(lines[1])["schema"]
    fields = {f["name"]: f for f in schema["fields"]}
    for f in EVERY["fields"]:
        assert fields[f["name"]]["field-id"] == f["field-id"], f["name"]
    assert fields["a"]["type"]["element-id"] == 12
    assert fields["m"]["type"]["key-id"] == 14 and fields["m"]["type"]["value-id"] == 15
    assert fields["o"]["default"] is None
    assert fields["ts"]["type"] == {"type": "long", "logicalType": "timestamp-micros"}
    assert fields["dec"]["type"] == {"type": "fixed", "name": "dec9", "size": 5,
                                     "logicalType": "decimal", "precision": 9, "scale": 2}
    assert fields["kv"]["type"]["logicalType"] == "map"
    inner = fields["r"]["type"]["fields"]
    assert inner[1]["type"]["element-id"] == 21 and inner[1]["field-id"] == 20
    assert fields["ol"]["type"][1]["element-id"] == 29


def test_our_reader_reads_fastavro_deflate(tmp_path):
    """deflate blocks (what Iceberg's Java writers use for manifests):
    every record equal to the null-codec reading, over many blocks."""
    path = str(tmp_path / "deflate.avro")
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(EVERY), (every_record(k) for k in range(N_EVERY)),
                        codec="deflate", sync_interval=2000)
    with open(path, "rb") as f:
        assert len([b for b in fastavro.block_reader(f)]) > 10
    lines = run_sample("read", path).stdout.splitlines()
    assert json.loads(lines[0])["meta"]["avro.codec"] == "deflate"
    assert len(lines) == 2 + N_EVERY
    for k in range(N_EVERY):
        got, want = json.loads(lines[2 + k]), expected_json(k)
        for name in want:
            assert same(got[name], want[name]), "record %d field %s" % (k, name)


def test_other_codecs_are_refused_by_name(tmp_path):
    path = str(tmp_path / "snappy.avro")
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(EVERY), [every_record(k) for k in range(5)],
                        codec="bzip2")
    r = run_sample("read", path, check=False)
    assert r.returncode == 1
    assert 'codec "bzip2" not supported' in r.stderr