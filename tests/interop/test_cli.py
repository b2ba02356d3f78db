"""The `fluss` command-line tool (libfluss) against our server, checked
through pyfluss: what the CLI creates, the official client reads back."""

import subprocess

import pytest

import fluss
from conftest import IS_OURS, REPO, unique

pytestmark = pytest.mark.skipif(not IS_OURS, reason="the CLI ships with fluss-c's build")

CLI = REPO / "build" / "fluss"


def cli(server, *args):
    return subprocess.run([str(CLI), "--bootstrap-server", server.bootstrap, *args],
                          capture_output=True, text=True, timeout=30)


async def test_cli_database_and_table_roundtrip(server, admin):
    db = unique("cli")
    r = cli(server, "db", "create", db, "--comment", "from the cli", "--property", "team=x")
    assert r.returncode == 0, r.stderr
    info = await admin.get_database_info(db)
    assert info.get_database_descriptor().comment == "from the cli"
    assert info.get_database_descriptor().get_custom_properties() == {"team": "x"}

    r = cli(server, "table", "create", f"{db}.orders",
            "--schema", "id BIGINT NOT NULL, item STRING COMMENT 'what', price DECIMAL(10, 2), "
                        "ts TIMESTAMP(3), tags ARRAY<STRING>, dt STRING",
            "--primary-key", "id,dt", "--partition-key", "dt", "--buckets", "3",
            "--comment", "orders", "--property", "table.log.arrow.compression.type=LZ4_FRAME")
    assert r.returncode == 0, r.stderr
    ti = await admin.get_table_info(fluss.TablePath(db, "orders"))
    assert ti.num_buckets == 3
    assert ti.get_primary_keys() == ["id", "dt"]
    assert ti.get_bucket_keys() == ["id"]
    assert ti.get_partition_keys() == ["dt"]
    assert ti.comment == "orders"
    assert ti.get_properties()["table.log.arrow.compression.type"] == "LZ4_FRAME"
    assert ti.get_column_names() == ["id", "item", "price", "ts", "tags", "dt"]

    r = cli(server, "table", "list", db)
    assert r.returncode == 0 and r.stdout.split() == ["orders"]
    r = cli(server, "table", "describe", f"{db}.orders")
    assert r.returncode == 0
    assert "DECIMAL(10, 2)" in r.stdout and "id, dt" in r.stdout
    r = cli(server, "db", "list")
    assert db in r.stdout.split()

    r = cli(server, "table", "drop", f"{db}.orders")
    assert r.returncode == 0
    assert await admin.table_exists(fluss.TablePath(db, "orders")) is False
    r = cli(server, "db", "drop", db)
    assert r.returncode == 0
    assert await admin.database_exists(db) is False


def test_cli_errors_have_codes_and_exit_status(server):
    r = cli(server, "table", "describe", "fluss." + unique("absent"))
    assert r.returncode == 1
    assert "TABLE_NOT_EXIST" in r.stderr and "code 7" in r.stderr
    r = cli(server, "db", "create", "bad.name")
    assert r.returncode == 1 and "code 16" in r.stderr
    r = cli(server, "table", "create", "fluss.t", "--schema", "id NOPE")
    assert r.returncode == 2 and "unknown type" in r.stderr
    r = cli(server, "table", "create", "fluss.t")
    assert r.returncode == 2 and "--schema" in r.stderr
    r = cli(server, "frobnicate")
    assert r.returncode == 2


def test_cli_help_on_every_command(server):
    for args in (["--help"], ["db", "--help"], ["table", "--help"], ["table", "create", "--help"]):
        r = subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=10)
        assert r.returncode == 0 and "usage:" in r.stdout, args


def test_cli_unreachable_server():
    r = subprocess.run([str(CLI), "--bootstrap-server", "127.0.0.1:1", "db", "list"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "cannot connect" in r.stderr
