"""Iceberg v2 manifests and manifest lists written by lake_iceberg_manifest.h
read by other implementations.

The helper (tests/lake/iceberg_manifest_sample.c, `write DIR`) writes a
partitioned data manifest of ENTRIES files (identity __bucket int,
identity dt string, identity day date, bucket[8] of id; stats present and
absent; existing entries with explicit ids and sequence numbers, added ones
inheriting), a delete manifest (a position-delete and an equality-delete
file) and the manifest list of snapshot 1001 naming both.

- fastavro reads every record as the sample's formulas give them, the
  header metadata Iceberg requires, and the field ids in avro.schema
  (field-id, element-id, k<K>_v<V> map records).
- pyiceberg's own manifest reader (read_manifest_list,
  ManifestFile.fetch_manifest_entry) reads the list and both manifests,
  resolving fields by id and inheriting snapshot id and sequence numbers.
- our readers (`read-manifest`, `read-list`) give the same values back.

Environment: LAKE_ICEBERG_MANIFEST_SAMPLE = path of the helper (default
build/).
"""

import datetime
import json
import os
import struct
import subprocess

import fastavro
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.environ.get("LAKE_ICEBERG_MANIFEST_SAMPLE",
                        os.path.join(ROOT, "build", "lake_iceberg_manifest_sample"))
ENTRIES = 50
SNAPSHOT, PARENT, SEQ = 1001, 1000, 2


def run_sample(*args, check=True):
    assert os.path.exists(SAMPLE), "build the helper first (cmake --build build)"
    return subprocess.run([SAMPLE, *args], check=check, timeout=60, capture_output=True, text=True)


# ---- the sample's formulas ----


def partition(k):
    return {"__bucket": k % 4, "dt": None if k % 7 == 0 else "2026-12-%02d" % (k % 28 + 1),
            "day": 20000 + k, "id_bucket": k % 8}


def stats(k):
    """column id -> (size, values, nulls, lower, upper), or None."""
    if k % 3 == 0:
        return None
    rows = 100 * k + 1
    return {1: (10 * k + 1, rows, 0, struct.pack("<q", k), struct.pack("<q", k + 1000)),
            2: (20 * k + 2, rows, k % 5, b"a%d" % k, b"z%d" % k),
            3: (None, rows, 0, struct.pack("<i", k % 4), struct.pack("<i", k % 4))}


def splits(k):
    return None if k % 3 == 0 else ([4, 4 + 1000 * k] if k % 2 else [4])


def existing(k):
    return k % 10 == 9


def data_entries():
    """(k, content, path, equality_ids, sort_order_id) of each manifest's entries."""
    data = [(k, 0, "file:///wh/db/t/data/__bucket=%d/%05d.parquet" % (k % 4, k), None,
             None if k % 2 else 1) for k in range(ENTRIES)]
    deletes = [(1, 1, "file:///wh/db/t/data/delete-0.parquet", None, None),
               (2, 2, "file:///wh/db/t/data/delete-1.parquet", [1], None)]
    return data, deletes


def kv(st, i):
    if st is None:
        return None
    items = [{"key": c, "value": v[i]} for c, v in st.items() if v[i] is not None]
    return items or None


def fastavro_record(k, content, path, eq, sort):
    st = stats(k)
    p = partition(k)
    p["day"] = datetime.date(1970, 1, 1) + datetime.timedelta(days=p["day"])
    ex = existing(k) and content == 0
    return {
        "status": 0 if ex else 1,
        "snapshot_id": 7 if ex else None,
        "sequence_number": 1 if ex else None,
        "file_sequence_number": 1 if ex else None,
        "data_file": {
            "content": content, "file_path": path, "file_format": "PARQUET", "partition": p,
            "record_count": 100 * k + 1, "file_size_in_bytes": 4096 + 17 * k,
            "column_sizes": kv(st, 0), "value_counts": kv(st, 1), "null_value_counts": kv(st, 2),
            "nan_value_counts": None, "lower_bounds": kv(st, 3), "upper_bounds": kv(st, 4),
            "split_offsets": splits(k), "equality_ids": eq, "sort_order_id": sort,
        },
    }


def summary(entries):
    """The manifest_file fields the writer derives from a manifest's entries."""
    added = [e for e in entries if not (existing(e[0]) and e[1] == 0)]
    old = [e for e in entries if existing(e[0]) and e[1] == 0]
    parts = []
    for name in ("__bucket", "dt", "day", "id_bucket"):
        vals = [partition(e[0])[name] for e in entries]
        live = [v for v in vals if v is not None]
        enc = (lambda v: v.encode()) if name == "dt" else (lambda v: struct.pack("<i", v))
        parts.append({"contains_null": None in vals, "contains_nan": False,
                      "lower_bound": enc(min(live)), "upper_bound": enc(max(live))})
    return {
        "added_files_count": len(added), "existing_files_count": len(old),
        "deleted_files_count": 0,
        "added_rows_count": sum(100 * e[0] + 1 for e in added),
        "existing_rows_count": sum(100 * e[0] + 1 for e in old), "deleted_rows_count": 0,
        "min_sequence_number": 1 if old else SEQ, "partitions": parts,
    }


DATA_FILE_IDS = {"content": 134, "file_path": 100, "file_format": 101, "partition": 102,
                 "record_count": 103, "file_size_in_bytes": 104, "column_sizes": 108,
                 "value_counts": 109, "null_value_counts": 110, "nan_value_counts": 137,
                 "lower_bounds": 125, "upper_bounds": 128, "split_offsets": 132,
                 "equality_ids": 135, "sort_order_id": 140}
INT_MAPS = {"column_sizes": (117, 118), "value_counts": (119, 120),
            "null_value_counts": (121, 122), "nan_value_counts": (138, 139),
            "lower_bounds": (126, 127), "upper_bounds": (129, 130)}
MANIFEST_FILE_IDS = {"manifest_path": 500, "manifest_length": 501, "partition_spec_id": 502,
                     "content": 517, "sequence_number": 515, "min_sequence_number": 516,
                     "added_snapshot_id": 503, "added_files_count": 504,
                     "existing_files_count": 505, "deleted_files_count": 506,
                     "added_rows_count": 512, "existing_rows_count": 513,
                     "deleted_rows_count": 514, "partitions": 507, "key_metadata": 519}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    d = tmp_path_factory.mktemp("manifests")
    run_sample("write", str(d), str(ENTRIES))
    return os.path.realpath(str(d))


def read_all(path):
    with open(path, "rb") as f:
        r = fastavro.reader(f)
        return r.metadata, list(r)


# ---- fastavro ----


def test_fastavro_reads_our_manifests(written):
    data, deletes = data_entries()
    for name, entries, content in (("data.avro", data, "data"), ("deletes.avro", deletes,
                                                                   "deletes")):
        meta, records = read_all(os.path.join(written, name))
        assert len(records) == len(entries)
        for rec, e in zip(records, entries):
            assert rec == fastavro_record(*e), "%s entry %d" % (name, e[0])
        assert meta["avro.codec"] == "null"
        assert meta["format-version"] == "2"
        assert meta["content"] == content
        assert meta["schema-id"] == "0" and meta["partition-spec-id"] == "0"
        schema = json.loads(meta["schema"])
        assert [f["name"] for f in schema["fields"]] == ["id", "name", "__bucket", "day", "dt"]
        assert json.loads(meta["partition-spec"]) == [
            {"name": "__bucket", "transform": "identity", "source-id": 3, "field-id": 1000},
            {"name": "dt", "transform": "identity", "source-id": 5, "field-id": 1001},
            {"name": "day", "transform": "identity", "source-id": 4, "field-id": 1002},
            {"name": "id_bucket", "transform": "bucket[8]", "source-id": 1, "field-id": 1003}]


def test_manifest_schema_field_ids(written):
    meta, _ = read_all(os.path.join(written, "data.avro"))
    raw = json.loads(meta["avro.schema"])
    assert raw["name"] == "manifest_entry"
    assert [(f["name"], f["field-id"]) for f in raw["fields"]] == [
        ("status", 0), ("snapshot_id", 1), ("sequence_number", 3), ("file_sequence_number", 4),
        ("data_file", 2)]
    for f in raw["fields"][1:4]:
        assert f["type"] == ["null", "long"] and f["default"] is None
    df = raw["fields"][4]["type"]
    assert df["name"] == "r2"
    assert {f["name"]: f["field-id"] for f in df["fields"]} == DATA_FILE_IDS
    dff = {f["name"]: f for f in df["fields"]}
    for name, (kid, vid) in INT_MAPS.items():
        arr = dff[name]["type"][1]
        assert arr["logicalType"] == "map" and arr["items"]["name"] == "k%d_v%d" % (kid, vid)
        assert [(x["name"], x["field-id"]) for x in arr["items"]["fields"]] == [("key", kid),
                                                                               ("value", vid)]
    assert dff["split_offsets"]["type"][1] == {"type": "array", "items": "long", "element-id": 133}
    assert dff["equality_ids"]["type"][1] == {"type": "array", "items": "int", "element-id": 136}
    part = dff["partition"]["type"]
    assert part["name"] == "r102"
    assert [(f["name"], f["field-id"], f["type"]) for f in part["fields"]] == [
        ("__bucket", 1000, ["null", "int"]), ("dt", 1001, ["null", "string"]),
        ("day", 1002, ["null", {"type": "int", "logicalType": "date"}]),
        ("id_bucket", 1003, ["null", "int"])]


def test_fastavro_reads_our_manifest_list(written):
    meta, records = read_all(os.path.join(written, "snap.avro"))
    assert meta["snapshot-id"] == str(SNAPSHOT)
    assert meta["parent-snapshot-id"] == str(PARENT)
    assert meta["sequence-number"] == str(SEQ)
    assert meta["format-version"] == "2"
    raw = json.loads(meta["avro.schema"])
    assert raw["name"] == "manifest_file"
    assert {f["name"]: f["field-id"] for f in raw["fields"]} == MANIFEST_FILE_IDS
    parts = {f["name"]: f for f in raw["fields"]}["partitions"]["type"][1]
    assert parts["element-id"] == 508 and parts["items"]["name"] == "r508"
    assert [(f["name"], f["field-id"]) for f in parts["items"]["fields"]] == [
        ("contains_null", 509), ("contains_nan", 518), ("lower_bound", 510), ("upper_bound", 511)]
    data, deletes = data_entries()
    assert len(records) == 2
    for rec, name, entries, content in ((records[0], "data.avro", data, 0),
                                        (records[1], "deletes.avro", deletes, 1)):
        path = os.path.join(written, name)
        want = {"manifest_path": "file://" + path, "manifest_length": os.path.getsize(path),
                "partition_spec_id": 0, "content": content, "sequence_number": SEQ,
                "added_snapshot_id": SNAPSHOT, "key_metadata": None}
        want.update(summary(entries))
        assert rec == want


# ---- pyiceberg ----


def test_pyiceberg_reads_our_manifests(written):
    manifest = pytest.importorskip("pyiceberg.manifest")
    from pyiceberg.io.fsspec import FsspecFileIO

    io = FsspecFileIO(properties={})
    files = list(manifest.read_manifest_list(io.new_input("file://%s/snap.avro" % written)))
    assert [f.content for f in files] == [manifest.ManifestContent.DATA,
                                          manifest.ManifestContent.DELETES]
    data, deletes = data_entries()
    for mf, entries in zip(files, (data, deletes)):
        want = summary(entries)
        assert mf.sequence_number == SEQ and mf.added_snapshot_id == SNAPSHOT
        assert mf.min_sequence_number == want["min_sequence_number"]
        assert mf.added_files_count == want["added_files_count"]
        assert mf.existing_files_count == want["existing_files_count"]
        assert mf.added_rows_count == want["added_rows_count"]
        assert mf.existing_rows_count == want["existing_rows_count"]
        assert mf.partition_spec_id == 0
        for got, w in zip(mf.partitions, want["partitions"]):
            assert got.contains_null == w["contains_null"]
            assert got.lower_bound == w["lower_bound"] and got.upper_bound == w["upper_bound"]
        got = mf.fetch_manifest_entry(io, discard_deleted=False)
        assert len(got) == len(entries)
        for e, (k, content, path, eq, sort) in zip(got, entries):
            ex = existing(k) and content == 0
            assert e.status == (manifest.ManifestEntryStatus.EXISTING if ex
                                else manifest.ManifestEntryStatus.ADDED)
            # null ids and sequence numbers inherited from the list entry
            assert e.snapshot_id == (7 if ex else SNAPSHOT)
            assert e.sequence_number == (1 if ex else SEQ)
            assert e.file_sequence_number == (1 if ex else SEQ)
            f = e.data_file
            assert f.content == manifest.DataFileContent(content)
            assert f.file_path == path
            assert f.file_format == manifest.FileFormat.PARQUET
            p = partition(k)
            day = f.partition[2]
            if isinstance(day, datetime.date):
                day = (day - datetime.date(1970, 1, 1)).days
            assert (f.partition[0], f.partition[1], day, f.partition[3]) == (
                p["__bucket"], p["dt"], p["day"], p["id_bucket"])
            assert f.record_count == 100 * k + 1
            assert f.file_size_in_bytes == 4096 + 17 * k
            st = stats(k)
            as_dict = lambda i: ({c: v[i] for c, v in st.items() if v[i] is not None}
                                 if st else None)
            for attr, i in (("column_sizes", 0), ("value_counts", 1), ("null_value_counts", 2),
                            ("lower_bounds", 3), ("upper_bounds", 4)):
                assert (getattr(f, attr) or None) == as_dict(i), (k, attr)
            assert f.split_offsets == splits(k)
            assert f.equality_ids == eq
            assert f.sort_order_id == sort


# ---- our readers ----


def test_our_readers_read_our_files(written):
    got = json.loads(run_sample("read-list", os.path.join(written, "snap.avro")).stdout)
    assert (got["snapshot_id"], got["parent"], got["seq"]) == (SNAPSHOT, PARENT, SEQ)
    assert [m["path"] for m in got["manifests"]] == [
        "file://%s/%s" % (written, n) for n in ("data.avro", "deletes.avro")]
    data, deletes = data_entries()
    for name, entries, content in (("data.avro", data, 0), ("deletes.avro", deletes, 1)):
        m = json.loads(run_sample("read-manifest", os.path.join(written, name)).stdout)
        assert m["content"] == content and m["spec_id"] == 0 and m["schema_id"] == 0
        assert [f["name"] for f in m["fields"]] == ["__bucket", "dt", "day", "id_bucket"]
        assert m["fields"][3]["buckets"] == 8
        for e, (k, c, path, eq, sort) in zip(m["entries"], entries):
            want = fastavro_record(k, c, path, eq, sort)
            f = e["data_file"]
            assert e["snapshot_id"] == want["snapshot_id"]
            assert e["sequence_number"] == want["sequence_number"]
            assert (f["content"], f["path"], f["records"], f["size"]) == (
                c, path, 100 * k + 1, 4096 + 17 * k)
            p = partition(k)
            assert f["partition"] == [p["__bucket"], p["dt"], p["day"], p["id_bucket"]]
            st = stats(k) or {}
            assert [c["id"] for c in f["columns"]] == list(st)
            for col in f["columns"]:
                size, values, nulls, lower, upper = st[col["id"]]
                assert (col["size"], col["values"], col["nulls"], col["nans"]) == (
                    size, values, nulls, None)
                assert (col["lower"], col["upper"]) == (lower.hex(), upper.hex())
            assert f["splits"] == (splits(k) or [])
            assert f["equality_ids"] == (eq or [])
            assert f["sort_order_id"] == sort


def test_truncated_manifest_is_refused(written, tmp_path):
    with open(os.path.join(written, "data.avro"), "rb") as f:
        raw = f.read()
    cut = tmp_path / "cut.avro"
    cut.write_bytes(raw[:-7])
    r = run_sample("read-manifest", str(cut), check=False)
    assert r.returncode == 1 and "lake_iceberg_manifest_sample:" in r.stderr


# ---- pyiceberg -> ours ----


def test_our_readers_read_pyiceberg_files(tmp_path):
    """pyiceberg's writers (codec null: we read no other) produce a v2 data
    manifest and manifest list; our readers find every field by id."""
    manifest = pytest.importorskip("pyiceberg.manifest")
    from pyiceberg.io.fsspec import FsspecFileIO
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import BucketTransform, IdentityTransform
    from pyiceberg.typedef import Record
    from pyiceberg.types import DateType, IntegerType, LongType, NestedField, StringType

    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "name", StringType(), required=False),
                    NestedField(3, "__bucket", IntegerType(), required=True),
                    NestedField(4, "day", DateType(), required=False), schema_id=0)
    spec = PartitionSpec(PartitionField(3, 1000, IdentityTransform(), "__bucket"),
                         PartitionField(2, 1001, IdentityTransform(), "name"),
                         PartitionField(4, 1002, IdentityTransform(), "day"),
                         PartitionField(1, 1003, BucketTransform(8), "id_bucket"), spec_id=0)
    io = FsspecFileIO(properties={})
    mpath = str(tmp_path / "theirs-m.avro")
    files = []
    with manifest.write_manifest(format_version=2, spec=spec, schema=schema,
                                 output_file=io.new_output("file://" + mpath), snapshot_id=77,
                                 avro_compression="null") as w:
        for k in range(5):
            df = manifest.DataFile.from_args(
                content=manifest.DataFileContent.DATA,
                file_path="file:///wh/t/data/%d.parquet" % k,
                file_format=manifest.FileFormat.PARQUET,
                partition=Record(k % 4, None if k == 3 else "n%d" % k, 19000 + k, k % 8),
                record_count=10 * k + 1, file_size_in_bytes=2000 + k,
                column_sizes={1: 100 + k, 2: 200 + k}, value_counts={1: 10 * k + 1},
                null_value_counts={1: 0, 2: k}, nan_value_counts={},
                lower_bounds={1: struct.pack("<q", -k)}, upper_bounds={1: struct.pack("<q", k)},
                split_offsets=[4], sort_order_id=0, spec_id=0)
            files.append(df)
            w.add(manifest.ManifestEntry.from_args(status=manifest.ManifestEntryStatus.ADDED,
                                                   snapshot_id=77, data_file=df))
    mf = w.to_manifest_file()  # after close: the length of the whole file
    lpath = str(tmp_path / "theirs-snap.avro")
    with manifest.write_manifest_list(format_version=2,
                                      output_file=io.new_output("file://" + lpath),
                                      snapshot_id=77, parent_snapshot_id=None, sequence_number=3,
                                      avro_compression="null") as lw:
        lw.add_manifests([mf])

    got = json.loads(run_sample("read-manifest", mpath).stdout)
    assert got["content"] == 0 and got["spec_id"] == 0 and got["schema_id"] == 0
    assert [(f["name"], f["field_id"], f["transform"], f["buckets"]) for f in got["fields"]] == [
        ("__bucket", 1000, 0, 0), ("name", 1001, 0, 0), ("day", 1002, 0, 0),
        ("id_bucket", 1003, 1, 8)]
    assert [f["type"] for f in got["fields"]] == [0, 2, 3, 0]  # int, string, date, int
    assert json.loads(got["schema"])["fields"][2]["name"] == "__bucket"
    assert len(got["entries"]) == 5
    for k, e in enumerate(got["entries"]):
        assert e["status"] == 1 and e["snapshot_id"] == 77
        f = e["data_file"]
        assert (f["path"], f["format"].upper(), f["records"], f["size"]) == (
            "file:///wh/t/data/%d.parquet" % k, "PARQUET", 10 * k + 1, 2000 + k)
        assert f["partition"] == [k % 4, None if k == 3 else "n%d" % k, 19000 + k, k % 8]
        assert f["columns"] == [
            {"id": 1, "size": 100 + k, "values": 10 * k + 1, "nulls": 0, "nans": None,
             "lower": struct.pack("<q", -k).hex(), "upper": struct.pack("<q", k).hex()},
            {"id": 2, "size": 200 + k, "values": None, "nulls": k, "nans": None,
             "lower": None, "upper": None}]
        assert f["splits"] == [4] and f["sort_order_id"] == 0

    lst = json.loads(run_sample("read-list", lpath).stdout)
    assert (lst["snapshot_id"], lst["parent"], lst["seq"]) == (77, None, 3)
    (m,) = lst["manifests"]
    assert m["path"] == "file://" + mpath and m["length"] == os.path.getsize(mpath)
    assert (m["content"], m["seq"], m["min_seq"], m["snapshot"]) == (0, 3, 3, 77)
    assert (m["added_files"], m["added_rows"]) == (5, sum(10 * k + 1 for k in range(5)))
    assert m["partitions"][1]["contains_null"] is True
    assert m["partitions"][0]["lower"] == "00000000" and m["partitions"][0]["upper"] == "03000000"
