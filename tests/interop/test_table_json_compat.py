"""Table descriptors as other clients write them (issue: an independent Go
client for Fluss 0.9.1 encodes an empty list as JSON null).

The reference reads CREATE_TABLE's table_json with Jackson's lenient
accessors (TableDescriptorJsonSerde and the serdes under it): a null list
or map is empty, a value of another kind is read as text or as an int,
unknown members are ignored. Each descriptor below is sent raw to the
server under test; the same test runs against the reference
(FLUSS_SERVER=reference) and asserts the same answers, then pyfluss uses
the table it made.
"""

import json

import pyarrow as pa
import pytest

import fluss
import rawwire
from conftest import IS_REFERENCE
from logutil import read_all, wait_ready


def go_style(columns, pk=None, **over):
    """A descriptor as the Go client writes one: every empty list null."""
    schema = {"version": 1, "columns": columns}
    if pk is not None:
        schema["primary_key"] = pk
    d = {"version": 1, "schema": schema, "comment": None, "partition_key": None,
         "bucket_key": None, "bucket_count": 2, "properties": None,
         "custom_properties": None}
    d.update(over)
    return d


def col(name, typ, **extra):
    c = {"name": name, "data_type": {"type": typ}}
    c.update(extra)
    return c


def create(server, db, table, tj):
    with rawwire.handshake(server.host, server.coordinator_port) as c:
        return c.create_table_json(db, table, json.dumps(tj))


def assert_ok(result):
    rtype, body = result
    assert rtype == rawwire.RESPONSE_SUCCESS, rawwire.decode_error(body)


def assert_refused(result, code=15):
    rtype, body = result
    assert rtype == rawwire.RESPONSE_ERROR, f"accepted: {body!r}"
    got, msg = rawwire.decode_error(body)
    assert got == code, (got, msg)
    return msg


async def test_go_nulls_log_table_used_by_pyfluss(server, conn, admin, db):
    """partition_key, bucket_key, properties and custom_properties null: a
    log table of 2 buckets with no keys, which pyfluss writes and reads."""
    assert_ok(create(server, db, "go_log", go_style(
        [col("id", "BIGINT", comment=None, agg_function=None), col("name", "STRING")],
        unknown_member={"x": [1, None]})))
    path = fluss.TablePath(db, "go_log")
    info = await admin.get_table_info(path)
    assert info.num_buckets == 2
    assert info.get_partition_keys() == []
    assert info.get_bucket_keys() == []
    assert info.get_custom_properties() == {}
    assert info.get_schema().get_columns() == [("id", "bigint"), ("name", "string")]
    await wait_ready(admin, path, buckets=2)
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
    w = (await conn.get_table(path)).new_append().create_writer()
    w.write_arrow(pa.Table.from_pylist([{"id": i, "name": f"n{i}"} for i in range(50)],
                                       schema=schema))
    await w.flush()
    got = await read_all(conn, admin, path)
    assert sorted(got.column("id").to_pylist()) == list(range(50))


async def test_go_nulls_pk_table(server, conn, admin, db):
    """A primary-key table with null lists and null optional column members
    (auto_increment_column, comment, agg_function): upserts and lookups."""
    tj = go_style([col("k", "INTEGER", comment=None), col("v", "STRING", agg_function=None)],
                  pk=["k"])
    tj["schema"]["auto_increment_column"] = None
    assert_ok(create(server, db, "go_pk", tj))
    path = fluss.TablePath(db, "go_pk")
    info = await admin.get_table_info(path)
    assert info.num_buckets == 2
    assert info.get_bucket_keys() == ["k"]
    await wait_ready(admin, path, buckets=2)
    table = await conn.get_table(path)
    w = table.new_upsert().create_writer()
    for k in range(20):
        w.upsert({"k": k, "v": f"v{k}"})
    await w.flush()
    lookuper = table.new_lookup().create_lookuper()
    for k in (0, 7, 19):
        row = await lookuper.lookup({"k": k})
        assert row is not None and row["v"] == f"v{k}", (k, row)


async def test_values_of_other_kinds(server, admin, db):
    """Jackson's asText / asInt / elements on values of other kinds: a
    bucket count as a string, property values as numbers and booleans, a
    list given as an object of names, a column name as a number."""
    tj = go_style([col("a", "INTEGER"), {"name": 7, "data_type": {"type": "STRING"}}],
                  bucket_count="3", bucket_key={"first": "a"},
                  custom_properties={"n": 5, "b": True, "s": "x"})
    assert_ok(create(server, db, "kinds", tj))
    info = await admin.get_table_info(fluss.TablePath(db, "kinds"))
    assert info.num_buckets == 3
    assert info.get_bucket_keys() == ["a"]
    assert info.get_custom_properties() == {"n": "5", "b": "true", "s": "x"}
    assert [c[0] for c in info.get_schema().get_columns()] == ["a", "7"]


async def test_data_type_members_read_leniently(server, admin, db):
    """A CHAR length as a string, "nullable" as the string "false": the
    column is CHAR(4) NOT NULL on both servers."""
    tj = go_style([{"name": "c", "data_type": {"type": "CHAR", "length": "4",
                                                "nullable": "false"}},
                   col("v", "INTEGER")])
    assert_ok(create(server, db, "dt", tj))
    info = await admin.get_table_info(fluss.TablePath(db, "dt"))
    assert info.get_schema().get_columns()[0] == ("c", "char(4) NOT NULL")


async def test_null_comment(server, admin, db):
    """Accepted by both; the reference keeps the text "null" as the
    comment (JsonNode.asText of null), fluss-c no comment
    (KNOWN_DIFFERENCES)."""
    assert_ok(create(server, db, "nc", go_style([col("a", "INTEGER")])))
    with rawwire.handshake(server.host, server.coordinator_port) as c:
        rtype, info = c.get_table_info(db, "nc")
    assert rtype == rawwire.RESPONSE_SUCCESS
    stored = info["table_json"]
    if IS_REFERENCE:
        assert stored.get("comment") == "null"
    else:
        assert "comment" not in stored


@pytest.mark.parametrize("case", [
    "no_partition_key", "no_properties", "no_custom_properties", "bucket_count_only",
    "null_primary_key", "null_schema", "null_data_type", "unknown_type", "bucket_count_null",
])
async def test_refused_as_the_reference_refuses(server, admin, db, case):
    """What the reference refuses (most of these with a NullPointerException
    text) is refused with the same code, 15 INVALID_TABLE_EXCEPTION."""
    base = go_style([col("a", "INTEGER")], partition_key=[], bucket_key=[],
                    properties={}, custom_properties={})
    if case == "no_partition_key":
        del base["partition_key"]
    elif case == "no_properties":
        del base["properties"]
    elif case == "no_custom_properties":
        del base["custom_properties"]
    elif case == "bucket_count_only":
        del base["bucket_key"]
    elif case == "null_primary_key":
        base["schema"]["primary_key"] = None
    elif case == "null_schema":
        base["schema"] = None
    elif case == "null_data_type":
        base["schema"]["columns"][0]["data_type"] = None
    elif case == "unknown_type":
        base["schema"]["columns"][0]["data_type"] = {"type": "VARCHAR"}
    elif case == "bucket_count_null":
        base["bucket_count"] = None  # asInt: 0 buckets
    result = create(server, db, "r", base)
    if case == "bucket_count_null" and IS_REFERENCE:
        code = -1  # InvalidBucketsException is unmapped there (KNOWN_DIFFERENCES)
    else:
        code = 15
    msg = assert_refused(result, code)
    if case == "null_primary_key":
        assert "Primary key constraint must be defined for at least a single column." in msg
    assert await admin.list_tables(db) == []
