"""Nested columns in the lake (issue 21, item 3's second step): ARRAY, MAP
and ROW columns of lake tables are Iceberg list, map and struct columns,
tiered by flussd into Parquet with repetition and definition levels.

* The Iceberg schema has the ids Iceberg's own create gives (the table's
  columns and the system columns first, then each nested column's inside
  in Iceberg's order), required where the Fluss type is NOT NULL.
* A log table pyfluss writes (ARROW batches: the column path) and one
  the CLI writes (lists of rows inside a row): pyiceberg and duckdb's
  iceberg_scan read every row back equal to what was written — NULL
  lists, empty lists, NULL elements, NULL struct fields, maps, lists of
  lists, decimals inside lists; nothing inside a list or map has bounds
  in the manifest.
* libfluss's lake scanner assembles the levels back: `fluss scan
  --lake-only` prints exactly what `--log-only` prints, and the union
  read equals the log.
* A primary-key table with nested columns across rounds of upserts and
  deletes, its changelog in ARROW (values from Arrow columns) and in
  COMPACTED (values encoded in rows: the row path's other source):
  pyiceberg's scan (position deletes applied) equals the lookups, and so
  do `scan --lake-only` and the union read.
"""

import json
from decimal import Decimal

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS
from lakeutil import duckdb_scan, lake_session
from logutil import wait_ready
from test_cli_pk import cli, ok

pyiceberg_table = pytest.importorskip("pyiceberg.table")
pytestmark = pytest.mark.skipif(not IS_OURS, reason="starts its own flussd")

SLOW = {"table.datalake.enabled": "true", "table.datalake.freshness": "1h"}
SCHEMA = pa.schema([
    pa.field("id", pa.int32(), nullable=False),
    pa.field("tags", pa.list_(pa.string())),
    pa.field("r", pa.struct([pa.field("x", pa.int32()), pa.field("s", pa.string()),
                             pa.field("d", pa.date32())])),
    pa.field("m", pa.map_(pa.string(), pa.int64())),
    pa.field("nums", pa.list_(pa.list_(pa.int64()))),
    pa.field("dec", pa.list_(pa.decimal128(20, 3))),
])
USER = [f.name for f in SCHEMA]


def value(i):
    """Row i: every shape of nested value in turn."""
    k = i % 4
    if k == 3:
        return {"id": i, "tags": None, "r": None, "m": None, "nums": None, "dec": None}
    if k == 2:
        return {"id": i, "tags": [], "r": {"x": None, "s": None, "d": None}, "m": [],
                "nums": [], "dec": []}
    return {"id": i, "tags": [f"t{i}", None, "a string longer than seven" * (k + 1)][: 1 + i % 3],
            "r": {"x": i, "s": f"s{i}", "d": pa.scalar(19000 + i, pa.date32()).as_py()},
            "m": [(f"k{i}", i), ("other", None)][: 1 + i % 2],
            "nums": [[i, i + 1], [], None, [i * 3]][: 1 + i % 4],
            "dec": [Decimal(f"{i}.125"), None, Decimal("-1.500")][: 1 + i % 3]}


def table_of(lo, hi):
    return pa.Table.from_pylist([value(i) for i in range(lo, hi)], schema=SCHEMA)


def norm(rows):
    """Rows as comparable values: maps as sorted (key, value) lists."""
    out = []
    for r in rows:
        r = {c: r[c] for c in USER}
        if r["m"] is not None:
            r["m"] = sorted(tuple(kv) for kv in (r["m"].items() if isinstance(r["m"], dict)
                                                  else r["m"]))
        out.append(r)
    return sorted(out, key=lambda r: r["id"])


def lake_table(wh, db, name):
    return pyiceberg_table.StaticTable.from_metadata(str(wh / db / name))


@pytest.fixture
async def lake(start_server, tmp_path):
    async with lake_session(start_server, tmp_path, "lakenest") as (srv, state, admin, db, wh):
        yield srv, admin, db, wh, state


def tier_now(srv, path):
    out = ok(cli(srv, "lake", "tier", path, "--now"))
    assert out.startswith("tiered "), out
    return out


def json_scan(srv, path, *args):
    out = ok(cli(srv, "scan", path, "--format", "json", *args))
    return sorted(ln for ln in out.splitlines() if ln.startswith("{"))


def field_ids(field):
    """{dotted name: (id, required)} of an Iceberg field and its inside."""
    from pyiceberg.types import ListType, MapType, StructType
    out = {}

    def walk(name, fid, required, t):
        out[name] = (fid, required)
        if isinstance(t, StructType):
            for f in t.fields:
                walk(f"{name}.{f.name}", f.field_id, f.required, f.field_type)
        elif isinstance(t, ListType):
            walk(f"{name}.element", t.element_id, t.element_required, t.element_type)
        elif isinstance(t, MapType):
            walk(f"{name}.key", t.key_id, True, t.key_type)
            walk(f"{name}.value", t.value_id, t.value_required, t.value_type)

    walk(field.name, field.field_id, field.required, field.field_type)
    return out


async def test_log_table_nested_columns(lake):
    srv, admin, db, wh, state = lake
    conn = state["conn"]
    path = fluss.TablePath(db, "events")
    await admin.create_table(path, fluss.TableDescriptor(fluss.Schema(SCHEMA), bucket_count=2,
                                                         properties=SLOW))
    await wait_ready(admin, path, 2)
    tbl_path = f"{db}.events"

    # the ids of Iceberg's create: columns, system columns, then the insides
    ice = lake_table(wh, db, "events")
    ids = {}
    for f in ice.schema().fields:
        ids.update(field_ids(f))
    assert ids == {
        "id": (1, True), "tags": (2, False), "r": (3, False), "m": (4, False),
        "nums": (5, False), "dec": (6, False), "__bucket": (7, True), "__offset": (8, True),
        "__timestamp": (9, True), "tags.element": (10, False), "r.x": (11, False),
        "r.s": (12, False), "r.d": (13, False), "m.key": (14, True), "m.value": (15, False),
        "nums.element": (16, False), "nums.element.element": (17, False),
        "dec.element": (18, False)}

    w = (await conn.get_table(path)).new_append().create_writer()
    w.write_arrow(table_of(0, 200))
    await w.flush()
    tier_now(srv, tbl_path)
    w.write_arrow(table_of(200, 300))
    await w.flush()
    tier_now(srv, tbl_path)

    want = norm(value(i) for i in range(300))
    ice = lake_table(wh, db, "events")
    got = ice.scan().to_arrow()
    assert norm(got.to_pylist()) == want
    pairs = list(zip(got.column("__bucket").to_pylist(), got.column("__offset").to_pylist()))
    assert len(set(pairs)) == 300
    assert norm(duckdb_scan(str(wh / db / "events")).to_pylist()) == want

    # no bounds inside a list or map, bounds for a struct's fields
    for task in ice.scan().plan_files():
        df = task.file
        for fid in (10, 14, 15, 17, 18):  # the leaves inside lists and maps
            assert fid not in (df.lower_bounds or {}) and fid not in (df.upper_bounds or {})
            assert fid in df.value_counts
        assert 11 in df.lower_bounds and 11 in df.upper_bounds

    # libfluss assembles the levels back: lake rows print as the log's
    log_only = json_scan(srv, tbl_path, "--log-only")
    assert len(log_only) == 300
    assert json_scan(srv, tbl_path, "--lake-only") == log_only
    assert json_scan(srv, tbl_path) == log_only


async def test_deeper_nesting_written_by_the_cli(lake):
    """A list of rows inside a row, written by libfluss (its own Arrow
    nested builders)."""
    srv, admin, db, wh, state = lake
    tbl_path = f"{db}.rows"
    ok(cli(srv, "table", "create", tbl_path, "--schema",
           "id INT NOT NULL, tags ARRAY<STRING>, m MAP<STRING, BIGINT>, "
           "r ROW<x INT, s STRING, inner ARRAY<ROW<q BIGINT, w STRING>>>",
           "--buckets", "1", "--property", "table.datalake.enabled=true",
           "--property", "table.datalake.freshness=1h"))
    lines = []
    for i in range(120):
        k = i % 3
        if k == 0:
            lines.append({"id": i, "tags": [f"a{i}", None], "m": {f"k{i}": i, "z": None},
                          "r": {"x": i, "s": None, "inner": [{"q": i, "w": f"w{i}"}, None,
                                                             {"q": None, "w": None}]}})
        elif k == 1:
            lines.append({"id": i, "tags": [], "m": {}, "r": {"x": None, "s": "s", "inner": []}})
        else:
            lines.append({"id": i, "tags": None, "m": None, "r": None})
    ok(cli(srv, "produce", tbl_path, "--format", "json",
           stdin="".join(json.dumps(r) + "\n" for r in lines)))
    tier_now(srv, tbl_path)
    log_only = json_scan(srv, tbl_path, "--log-only")
    assert len(log_only) == 120
    assert json_scan(srv, tbl_path, "--lake-only") == log_only

    got = lake_table(wh, db, "rows").scan().to_arrow().to_pylist()
    by_id = {r["id"]: r for r in got}
    assert len(by_id) == 120
    for want in lines:
        r = by_id[want["id"]]
        assert r["tags"] == want["tags"]
        assert (dict(r["m"]) if r["m"] is not None else None) == want["m"]
        if want["r"] is None:
            assert r["r"] is None
        else:
            assert r["r"]["x"] == want["r"]["x"] and r["r"]["s"] == want["r"]["s"]
            assert r["r"]["inner"] == want["r"]["inner"]


PK_SCHEMA = ("id INT NOT NULL, tags ARRAY<STRING>, m MAP<STRING, BIGINT>, r ROW<x INT, s STRING>, "
             "dec ARRAY<DECIMAL(20, 3)>, ar ARRAY<ROW<q BIGINT, w STRING>>")


def pk_row(i, gen):
    if (i + gen) % 4 == 0:
        return {"id": i, "tags": None, "m": None, "r": None, "dec": None, "ar": None}
    return {"id": i, "tags": [f"g{gen}", None][: 1 + i % 2], "m": {f"k{i}": gen},
            "r": {"x": i * 10 + gen, "s": None if i % 3 else f"s{i}"},
            "dec": [f"{i}.{gen:03d}"], "ar": [{"q": gen, "w": f"w{i}"}, None][: 1 + gen % 2]}


@pytest.mark.parametrize("log_format", ["ARROW", "COMPACTED"])
async def test_pk_table_nested_columns(lake, log_format):
    srv, admin, db, wh, state = lake
    name = f"pk_{log_format.lower()}"
    tbl_path = f"{db}.{name}"
    ok(cli(srv, "table", "create", tbl_path, "--schema", PK_SCHEMA, "--primary-key", "id",
           "--buckets", "2", "--property", f"table.log.format={log_format}",
           "--property", "table.datalake.enabled=true",
           "--property", "table.datalake.freshness=1h"))
    await wait_ready(admin, fluss.TablePath(db, name), 2)
    ids = list(range(60))
    for gen, (upserts, deletes) in enumerate([(ids, []), (ids[::3], ids[1::7]),
                                              (ids[5:20], ids[::11])]):
        ok(cli(srv, "upsert", tbl_path, "--format", "json",
               stdin="".join(json.dumps(pk_row(i, gen)) + "\n" for i in upserts)))
        if deletes:
            ok(cli(srv, "delete", tbl_path, *[str(i) for i in deletes]))
        tier_now(srv, tbl_path)
        looked = ok(cli(srv, "lookup", tbl_path, *[str(i) for i in ids], "--format", "json"))
        truth = sorted(ln for ln in looked.splitlines() if ln.startswith("{"))
        assert json_scan(srv, tbl_path, "--lake-only") == truth, gen
        assert json_scan(srv, tbl_path) == truth, gen
        got = lake_table(wh, db, name).scan().to_arrow().to_pylist()
        keys = [r["id"] for r in got]
        assert len(keys) == len(set(keys)) == len(truth), gen
        want = {r["id"]: r for r in (json.loads(ln, parse_float=Decimal) for ln in truth)}
        for r in got:
            w = want[r["id"]]
            assert r["tags"] == w["tags"]
            assert (dict(r["m"]) if r["m"] is not None else None) == w["m"]
            assert r["r"] == w["r"]
            assert r["dec"] == w["dec"]
            # pyiceberg reads a NULL list of structs as [] (apache/iceberg-python#3833)
            assert r["ar"] == (w["ar"] if w["ar"] is not None else [])
        # duckdb tells them apart (and applies the same position deletes)
        dk = {r["id"]: r for r in duckdb_scan(str(wh / db / name), "id, ar, tags").to_pylist()}
        assert len(dk) == len(truth), gen
        for i, w in want.items():
            assert (dk[i]["ar"], dk[i]["tags"]) == (w["ar"], w["tags"]), (gen, i)


async def test_nested_column_added_later(lake):
    """ADD COLUMN of nested types to a lake table: the lake schema numbers
    them after last-column-id; rows tiered before read them as NULL, rows
    after as written — in pyiceberg, duckdb and the union read."""
    srv, admin, db, wh, state = lake
    tbl_path = f"{db}.evo"
    ok(cli(srv, "table", "create", tbl_path, "--schema", "id INT NOT NULL, v STRING",
           "--buckets", "1", "--property", "table.datalake.enabled=true",
           "--property", "table.datalake.freshness=1h"))
    ok(cli(srv, "produce", tbl_path, "--format", "json",
           stdin="".join(json.dumps({"id": i, "v": f"v{i}"}) + "\n" for i in range(10))))
    tier_now(srv, tbl_path)
    ok(cli(srv, "table", "alter", tbl_path, "--add-column", "m MAP<STRING, INT>",
           "--add-column", "r ROW<a INT, b ARRAY<STRING>>"))
    later = [{"id": i, "v": None, "m": {f"k{i}": i}, "r": {"a": i, "b": [f"b{i}", None]}}
             for i in range(10, 20)] + [{"id": 20, "v": "x", "m": None, "r": None}]
    ok(cli(srv, "produce", tbl_path, "--format", "json",
           stdin="".join(json.dumps(r) + "\n" for r in later)))
    tier_now(srv, tbl_path)

    ice = lake_table(wh, db, "evo")
    ids = {}
    for f in ice.schema().fields:
        ids.update(field_ids(f))
    assert [f.name for f in ice.schema().fields] == ["id", "v", "m", "r", "__bucket",
                                                     "__offset", "__timestamp"]
    assert ids["m"][0] == 6 and ids["m.key"][0] == 7 and ids["m.value"][0] == 8
    assert ids["r"][0] == 9 and ids["r.a"][0] == 10 and ids["r.b"][0] == 11
    assert ids["r.b.element"][0] == 12
    want = {i: (None, None) for i in range(10)}
    want.update({r["id"]: (r["m"], r["r"]) for r in later})
    got = ice.scan().to_arrow().to_pylist()
    assert {r["id"]: (dict(r["m"]) if r["m"] is not None else None, r["r"]) for r in got} == want
    dk = duckdb_scan(str(wh / db / "evo"), "id, m, r").to_pylist()
    assert {r["id"]: (dict(r["m"]) if r["m"] is not None else None, r["r"]) for r in dk} == want
    log_only = json_scan(srv, tbl_path, "--log-only")
    assert len(log_only) == 21
    assert json_scan(srv, tbl_path, "--lake-only") == log_only
