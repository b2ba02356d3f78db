"""Database admin API (CREATE/DROP/LIST/EXISTS/GET_DATABASE_INFO) via pyfluss."""

import json

import pyarrow as pa
import pytest

import fluss
import rawwire
from conftest import IS_REFERENCE, assert_recent_ms, expect_error, unique

E = fluss.ErrorCode


def simple_table():
    return fluss.TableDescriptor(fluss.Schema(pa.schema([pa.field("a", pa.int32())])))


async def test_default_database_fluss_exists(admin):
    assert await admin.database_exists("fluss") is True
    assert "fluss" in await admin.list_databases()
    info = await admin.get_database_info("fluss")
    assert info.database_name == "fluss"
    assert info.created_time > 0
    assert info.modified_time >= info.created_time


async def test_create_database_with_comment_and_properties(admin):
    name = unique("dbc")
    props = {"owner": "interop", "k.with.dots": "v=1,2", "unicode": "h\u00e9llo"}
    try:
        assert await admin.database_exists(name) is False
        await admin.create_database(
            name, fluss.DatabaseDescriptor(comment="a test database", custom_properties=props))

        assert await admin.database_exists(name) is True
        assert name in await admin.list_databases()

        info = await admin.get_database_info(name)
        assert info.database_name == name
        desc = info.get_database_descriptor()
        assert desc.comment == "a test database"
        assert desc.get_custom_properties() == props
        assert_recent_ms(info.created_time, "created_time")
        assert_recent_ms(info.modified_time, "modified_time")
        assert info.modified_time >= info.created_time
        assert await admin.list_tables(name) == []
    finally:
        await admin.drop_database(name, ignore_if_not_exists=True, cascade=True)


async def test_create_database_without_descriptor(admin):
    name = unique("dbn")
    try:
        await admin.create_database(name)
        info = await admin.get_database_info(name)
        desc = info.get_database_descriptor()
        assert desc.comment is None
        assert desc.get_custom_properties() == {}
        assert_recent_ms(info.created_time, "created_time")
    finally:
        await admin.drop_database(name, ignore_if_not_exists=True, cascade=True)


async def test_create_existing_database(admin):
    name = unique("dbe")
    try:
        await admin.create_database(name, fluss.DatabaseDescriptor(comment="first"))
        before = await admin.get_database_info(name)

        await expect_error(E.DATABASE_ALREADY_EXIST,
                           admin.create_database(name, fluss.DatabaseDescriptor(comment="second")))
        assert E.DATABASE_ALREADY_EXIST == 6
        # ignore_if_exists: succeeds and leaves the existing database untouched
        await admin.create_database(name, fluss.DatabaseDescriptor(comment="third"),
                                    ignore_if_exists=True)
        after = await admin.get_database_info(name)
        assert after.get_database_descriptor().comment == "first"
        assert after.created_time == before.created_time
        assert after.modified_time == before.modified_time
        assert (await admin.list_databases()).count(name) == 1
    finally:
        await admin.drop_database(name, ignore_if_not_exists=True, cascade=True)


async def test_missing_database_errors(admin):
    name = unique("dbm")
    assert await admin.database_exists(name) is False
    assert name not in await admin.list_databases()
    await expect_error(4, admin.drop_database(name, ignore_if_not_exists=False))
    await expect_error(4, admin.drop_database(name, ignore_if_not_exists=False, cascade=False))
    await admin.drop_database(name, ignore_if_not_exists=True)
    await admin.drop_database(name, ignore_if_not_exists=True, cascade=False)
    await expect_error(4, admin.get_database_info(name))
    await expect_error(4, admin.list_tables(name))
    assert await admin.database_exists(name) is False


async def test_drop_empty_database(admin):
    name = unique("dbd")
    await admin.create_database(name)
    await admin.drop_database(name, ignore_if_not_exists=False, cascade=False)
    assert await admin.database_exists(name) is False
    assert name not in await admin.list_databases()
    await expect_error(4, admin.get_database_info(name))


async def test_drop_non_empty_database_without_cascade(admin):
    name = unique("dbne")
    path = fluss.TablePath(name, "t1")
    try:
        await admin.create_database(name)
        await admin.create_table(path, simple_table())
        await expect_error(5, admin.drop_database(name, ignore_if_not_exists=False, cascade=False))
        # ignore_if_not_exists does not matter: the database exists
        await expect_error(5, admin.drop_database(name, ignore_if_not_exists=True, cascade=False))
        assert await admin.database_exists(name) is True
        assert await admin.table_exists(path) is True
        assert await admin.list_tables(name) == ["t1"]
    finally:
        await admin.drop_database(name, ignore_if_not_exists=True, cascade=True)


async def test_drop_database_cascade_removes_tables(admin):
    name = unique("dbcas")
    try:
        await admin.create_database(name)
        for t in ("t1", "t2"):
            await admin.create_table(fluss.TablePath(name, t), simple_table())
        assert sorted(await admin.list_tables(name)) == ["t1", "t2"]

        await admin.drop_database(name, ignore_if_not_exists=False, cascade=True)
        assert await admin.database_exists(name) is False
        await expect_error(7, admin.get_table_info(fluss.TablePath(name, "t1")))

        # re-creating the database gives an empty one
        await admin.create_database(name)
        assert await admin.list_tables(name) == []
        assert await admin.table_exists(fluss.TablePath(name, "t1")) is False
    finally:
        await admin.drop_database(name, ignore_if_not_exists=True, cascade=True)


INVALID_DB_NAMES = {
    "empty": "",
    "dot": "a.b",
    "dot-only": ".",
    "dotdot": "..",
    "reserved-prefix": "__x",
    "too-long-201": "x" * 201,
    "space": "bad name",
    "slash": "a/b",
    "non-ascii": "d\u00e9j\u00e0",
}


@pytest.mark.parametrize("bad", list(INVALID_DB_NAMES.values()), ids=list(INVALID_DB_NAMES))
async def test_invalid_database_name(admin, bad):
    await expect_error(16, admin.create_database(bad))
    await expect_error(16, admin.create_database(bad, ignore_if_exists=True))
    assert bad not in await admin.list_databases()


async def test_database_name_limits_accepted(admin):
    # 200 chars is the maximum; '-' and '_' (not leading '__') are allowed.
    for name in ("d" * 190 + unique("")[-10:], unique("Mixed-Case_9")):
        assert len(name) <= 200
        try:
            await admin.create_database(name)
            assert await admin.database_exists(name) is True
            assert name in await admin.list_databases()
        finally:
            await admin.drop_database(name, ignore_if_not_exists=True, cascade=True)


async def test_raw_invalid_database_json(server, admin):
    """CREATE_DATABASE with unparseable database_json: the reference answers
    UNKNOWN_SERVER_ERROR (-1), message "java.io.UncheckedIOException: ...
    JsonParseException ..." (unlike CREATE_TABLE, which answers 15). fluss-c
    answers 16 INVALID_DATABASE_EXCEPTION (tests/interop/KNOWN_DIFFERENCES.md)."""
    name = unique("dbjson")
    body = rawwire.f_bytes(1, name) + rawwire.f_varint(2, 0) + rawwire.f_bytes(3, b"{nope")
    with rawwire.handshake(server.host, server.coordinator_port) as c:
        rtype, resp = c.call(rawwire.CREATE_DATABASE, body)
    assert rtype == rawwire.RESPONSE_ERROR
    code, msg = rawwire.decode_error(resp)
    if IS_REFERENCE:
        assert code == -1, msg
        assert "JsonParseException" in msg
    else:
        assert code == 16, msg
        assert "database descriptor" in msg
    assert await admin.database_exists(name) is False


async def test_raw_create_database_without_json(server, admin):
    """database_json is optional: no comment, no custom properties."""
    name = unique("dbraw")
    body = rawwire.f_bytes(1, name) + rawwire.f_varint(2, 0)
    try:
        with rawwire.handshake(server.host, server.coordinator_port) as c:
            rtype, resp = c.call(rawwire.CREATE_DATABASE, body)
            assert rtype == rawwire.RESPONSE_SUCCESS, rawwire.decode_error(resp)
            assert resp == b""
            rtype, resp = c.call(rawwire.GET_DATABASE_INFO, rawwire.f_bytes(1, name))
        assert rtype == rawwire.RESPONSE_SUCCESS
        f = rawwire.decode(resp)
        assert set(f) == {3, 4, 5}, f  # database_json, created_time, modified_time
        dj = json.loads(f[3][0])
        assert dj.get("version") == 1
        assert dj.get("custom_properties") == {}
        assert "comment" not in dj
        info = await admin.get_database_info(name)
        assert info.get_database_descriptor().comment is None
        assert info.created_time == rawwire.as_int64(f[4][0])
    finally:
        await admin.drop_database(name, ignore_if_not_exists=True, cascade=True)
