"""CREATE_TABLE validation errors.

pyfluss 1.0.0 already rejects some invalid descriptors client-side (error
code -2, nothing reaches the server): duplicate column names, primary-key
columns missing from the schema, and PK-table bucket keys that are not a
subset of the primary key.  Those cases are sent as raw CREATE_TABLE
requests with a hand-written table_json instead, so the server's own
validation is exercised.
"""

import pyarrow as pa
import pytest

import fluss
import rawwire
from conftest import IS_REFERENCE, expect_error

INVALID_TABLE_NAMES = {
    "empty": "",
    "dot": "a.b",
    "dotdot": "..",
    "reserved-prefix": "__x",
    "too-long-201": "t" * 201,
    "space": "bad name",
    "slash": "a/b",
}


def two_cols(pk=None):
    return fluss.Schema(pa.schema([pa.field("a", pa.int32()), pa.field("b", pa.string())]),
                        primary_keys=pk)


async def assert_no_table(admin, db, name):
    if name:
        try:
            assert await admin.table_exists(fluss.TablePath(db, name)) is False
        except fluss.FlussError:
            pass  # an invalid name may not even be checkable
    assert await admin.list_tables(db) == []


@pytest.mark.parametrize("bad", list(INVALID_TABLE_NAMES.values()), ids=list(INVALID_TABLE_NAMES))
async def test_invalid_table_name(admin, db, bad):
    await expect_error(15, admin.create_table(fluss.TablePath(db, bad),
                                              fluss.TableDescriptor(two_cols())))
    assert await admin.list_tables(db) == []


async def test_table_name_max_length_accepted(admin, db):
    name = "t" * 200
    await admin.create_table(fluss.TablePath(db, name), fluss.TableDescriptor(two_cols()))
    assert await admin.list_tables(db) == [name]


async def test_partition_key_not_in_primary_key(admin, db):
    desc = fluss.TableDescriptor(two_cols(pk=["a"]), partition_keys=["b"])
    await expect_error(15, admin.create_table(fluss.TablePath(db, "t"), desc))
    await assert_no_table(admin, db, "t")


async def test_partition_key_not_a_column(admin, db):
    desc = fluss.TableDescriptor(two_cols(), partition_keys=["zz"])
    await expect_error(15, admin.create_table(fluss.TablePath(db, "t"), desc))
    await assert_no_table(admin, db, "t")


async def test_bucket_key_not_a_column(admin, db):
    desc = fluss.TableDescriptor(two_cols(), bucket_keys=["zz"])
    await expect_error(15, admin.create_table(fluss.TablePath(db, "t"), desc))
    await assert_no_table(admin, db, "t")


@pytest.mark.parametrize("count", [0, -1])
async def test_bucket_count_not_positive(admin, db, count):
    # The reference answers UNKNOWN_SERVER_ERROR (-1), not 15: the check is an
    # unmapped InvalidBucketsException thrown while assigning buckets.
    # Message: "org.apache.fluss.exception.InvalidBucketsException: Number of
    # buckets must be larger than 0." (+ a Java stack trace). fluss-c answers
    # 15 INVALID_TABLE_EXCEPTION with the same text (KNOWN_DIFFERENCES.md).
    desc = fluss.TableDescriptor(two_cols(), bucket_count=count)
    code = -1 if IS_REFERENCE else 15
    err = await expect_error(code, admin.create_table(fluss.TablePath(db, "t"), desc))
    assert "Number of buckets must be larger than 0" in err.message
    await assert_no_table(admin, db, "t")


async def test_unknown_log_format_property(admin, db):
    desc = fluss.TableDescriptor(two_cols(), properties={"table.log.format": "BOGUS"})
    await expect_error(39, admin.create_table(fluss.TablePath(db, "t"), desc))
    await assert_no_table(admin, db, "t")


async def test_replication_factor_above_live_servers(admin, db):
    live = [n for n in await admin.get_server_nodes() if n.server_type == "TabletServer"]
    desc = fluss.TableDescriptor(two_cols(),
                                 properties={"table.replication.factor": str(len(live) + 1)})
    await expect_error(17, admin.create_table(fluss.TablePath(db, "t"), desc))
    await assert_no_table(admin, db, "t")


async def test_kv_format_version_too_high(admin, db):
    desc = fluss.TableDescriptor(two_cols(pk=["a"]), properties={"table.kv.format-version": "3"})
    await expect_error(39, admin.create_table(fluss.TablePath(db, "t"), desc))
    await assert_no_table(admin, db, "t")


# ---------------------------------------------------------------------------
# raw CREATE_TABLE (cases pyfluss refuses to send)
# ---------------------------------------------------------------------------

def col(name, typ, nullable=True, cid=None, **extra):
    dt = {"type": typ}
    dt.update(extra)
    if not nullable:
        dt["nullable"] = False
    c = {"name": name, "data_type": dt}
    if cid is not None:
        c["id"] = cid
    return c


def table_json(columns, pk=None, partition_key=(), bucket_key=None, bucket_count=1,
               properties=None, custom=None):
    schema = {"version": 1, "columns": columns}
    if pk is not None:
        schema["primary_key"] = list(pk)
    d = {"version": 1, "schema": schema, "partition_key": list(partition_key)}
    # Fluss 0.9.1 parses "bucket_key" whenever "bucket_count" is present
    # (see test_raw_bucket_count_without_bucket_key), so always send both.
    if bucket_key is not None or bucket_count is not None:
        d["bucket_key"] = list(bucket_key or [])
    if bucket_count is not None:
        d["bucket_count"] = bucket_count
    d["properties"] = properties or {}
    d["custom_properties"] = custom or {}
    return d


def raw_create(server, db, table, tj):
    with rawwire.handshake(server.host, server.coordinator_port) as c:
        return c.create_table_json(db, table, tj)


def assert_raw_error(result, code):
    rtype, body = result
    assert rtype == rawwire.RESPONSE_ERROR, f"expected ERROR_RESPONSE, got type {rtype}: {body!r}"
    got, msg = rawwire.decode_error(body)
    assert got == code, f"expected error code {code}, got {got}: {msg}"
    assert msg, "error message is empty"
    return msg


async def test_raw_valid_table_json_accepted(server, admin, db):
    """Sanity check of the hand-written JSON used by the negative cases."""
    tj = table_json([col("a", "INTEGER"), col("b", "STRING")], pk=["a"], bucket_count=2)
    rtype, body = raw_create(server, db, "ok", tj)
    assert rtype == rawwire.RESPONSE_SUCCESS, rawwire.decode_error(body)
    info = await admin.get_table_info(fluss.TablePath(db, "ok"))
    assert info.get_schema().get_columns() == [("a", "int NOT NULL"), ("b", "string")]
    assert info.get_bucket_keys() == ["a"]
    assert info.num_buckets == 2


async def test_raw_primary_key_column_missing(server, admin, db):
    tj = table_json([col("a", "INTEGER"), col("b", "STRING")], pk=["zz"])
    assert_raw_error(raw_create(server, db, "t", tj), 15)
    await assert_no_table(admin, db, "t")


async def test_raw_bucket_key_not_subset_of_primary_key(server, admin, db):
    tj = table_json([col("a", "INTEGER"), col("b", "STRING")], pk=["a"], bucket_key=["b"])
    assert_raw_error(raw_create(server, db, "t", tj), 15)
    await assert_no_table(admin, db, "t")


async def test_raw_bucket_key_contains_partition_key(server, admin, db):
    tj = table_json([col("a", "INTEGER"), col("p", "STRING")], pk=["a", "p"],
                    partition_key=["p"], bucket_key=["a", "p"])
    assert_raw_error(raw_create(server, db, "t", tj), 15)
    await assert_no_table(admin, db, "t")


async def test_raw_duplicate_column_names(server, admin, db):
    tj = table_json([col("a", "INTEGER"), col("a", "STRING")])
    assert_raw_error(raw_create(server, db, "t", tj), 15)
    await assert_no_table(admin, db, "t")


async def test_raw_bucket_count_without_bucket_key(server, admin, db):
    """The reference requires "bucket_key" when "bucket_count" is present and
    answers INVALID_TABLE_EXCEPTION (its message is a Java NPE text)."""
    tj = table_json([col("a", "INTEGER")], bucket_count=2)
    del tj["bucket_key"]
    assert_raw_error(raw_create(server, db, "t", tj), 15)
    await assert_no_table(admin, db, "t")


async def test_raw_invalid_json(server, admin, db):
    """Unparseable table_json: INVALID_TABLE_EXCEPTION; the reference's message
    is "Failed to parse table descriptor: <Jackson JsonParseException text>"."""
    msg = assert_raw_error(raw_create(server, db, "t", b"{nope"), 15)
    assert msg.startswith("Failed to parse table descriptor")
    await assert_no_table(admin, db, "t")


async def test_raw_unknown_data_type(server, admin, db):
    tj = table_json([col("a", "INTEGER"), col("b", "NO_SUCH_TYPE")])
    res = raw_create(server, db, "t", tj)
    assert_raw_error(res, 15)
    await assert_no_table(admin, db, "t")
