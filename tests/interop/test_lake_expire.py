"""Snapshot expiry of lake tables (`table.datalake.auto-expire-snapshot`):
after each committed round flussd expires the snapshots the Iceberg
table's own retention lets go (`history.expire.max-snapshot-age-ms`,
default 5 days, `history.expire.min-snapshots-to-keep`, default 1; set
here through Fluss's `iceberg.*` table properties) and deletes the files
only they referenced. Fluss 0.9.1 accepts the key but its Iceberg
committer ignores it (tests/interop/KNOWN_DIFFERENCES.md), so these run
against fluss-c only.

Rounds are forced with fluss-c's LAKE_TIER_NOW (`fluss lake tier
--now`) on tables whose freshness is an hour, so every round is one the
test asked for. pyiceberg checks each table as an engine would: the
snapshot count stays bounded, the current snapshot scans every row
written exactly once, the expired manifest lists (and the manifests
merged away) are gone from disk, and every file a kept snapshot
references is there.
"""

from pathlib import Path

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, connect, unique
from logutil import wait_ready
from test_alter_table import alter
from test_cli_pk import cli, ok
from lakeutil import lake_args, lake_session
from test_lake_tiering import SCHEMA, check_exactly_once, lake_table, rows, write

pytest.importorskip("pyiceberg.table")
pytestmark = pytest.mark.skipif(not IS_OURS, reason="starts its own flussd")

SLOW = {"table.datalake.enabled": "true", "table.datalake.freshness": "1h"}
EXPIRE = {**SLOW, "table.datalake.auto-expire-snapshot": "true"}
# every snapshot is old at once; the newest two stay
KEEP_TWO = {"iceberg.history.expire.max-snapshot-age-ms": "1",
            "iceberg.history.expire.min-snapshots-to-keep": "2"}
SET = 0


def uri_path(uri):
    assert uri.startswith("file://"), uri
    return Path(uri[len("file://"):])


def referenced(tbl):
    """Every file the table's snapshots reference: lists, offsets files,
    manifests, data files (of every entry)."""
    files = set()
    for s in tbl.snapshots():
        files.add(uri_path(s.manifest_list))
        files.add(uri_path(s.summary["fluss-offsets"]))
        for m in s.manifests(tbl.io):
            files.add(uri_path(m.manifest_path))
            for e in m.fetch_manifest_entry(tbl.io, discard_deleted=False):
                files.add(uri_path(e.data_file.file_path))
    return files


def on_disk(wh, db, name):
    d = wh / db / name
    meta = {p for p in (d / "metadata").iterdir()
            if not (p.name.endswith(".metadata.json") or p.name == "version-hint.text")}
    return meta | set((d / "data").rglob("*.parquet"))


def check_files(wh, db, name, tbl):
    """Nothing a kept snapshot references is missing, and nothing else of
    ours is left (expired lists, merged-away manifests, offsets files)."""
    refs = referenced(tbl)
    missing = [p for p in refs if not p.exists()]
    assert not missing, missing
    extra = on_disk(wh, db, name) - refs
    assert not extra, sorted(map(str, extra))


async def tier_now(srv, db, name):
    out = ok(cli(srv, "lake", "tier", f"{db}.{name}", "--now"))
    assert out.startswith("tiered "), out


@pytest.fixture
async def lake(start_server, tmp_path):
    async with lake_session(start_server, tmp_path, "expiredb") as (srv, state, admin, db, wh):
        yield srv, state["conn"], admin, db, wh


async def create(admin, db, name, props, custom=None, buckets=2):
    path = fluss.TablePath(db, name)
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA), bucket_count=buckets, properties=props,
        custom_properties=custom or {}))
    await wait_ready(admin, path, buckets)
    return path


async def test_expiry_keeps_the_newest(lake):
    """20 rounds (past 16 manifests, so the list is merged too) with two
    snapshots kept: after every round at most two snapshots, the lists of
    the expired ones gone, the head scans every row once."""
    srv, conn, admin, db, wh = lake
    path = await create(admin, db, "t", EXPIRE, KEEP_TWO)
    lists = []
    rounds, per = 20, 25
    for r in range(rounds):
        await write(conn, path, rows(r * per, (r + 1) * per))
        await tier_now(srv, db, "t")
        tbl = lake_table(wh, db, "t")
        head = tbl.current_snapshot()
        assert head.summary["total-records"] == str((r + 1) * per)
        lists.append(uri_path(head.manifest_list))
        snaps = tbl.snapshots()
        assert len(snaps) == min(r + 1, 2), [s.snapshot_id for s in snaps]
        # the expired lists are gone, the kept ones are there
        assert [p.exists() for p in lists] == [i >= r - 1 for i in range(r + 1)]
        check_files(wh, db, "t", tbl)

    tbl = lake_table(wh, db, "t")
    check_exactly_once(tbl.scan().to_arrow(), range(rounds * per))
    kept = [s.snapshot_id for s in tbl.snapshots()]
    assert kept[-1] == tbl.current_snapshot().snapshot_id
    assert tbl.snapshot_by_id(kept[0]).parent_snapshot_id not in kept  # ancestry ends
    # the snapshot-log names only kept snapshots; refs.main the current one
    assert {e.snapshot_id for e in tbl.metadata.snapshot_log} <= set(kept)
    assert tbl.metadata.refs["main"].snapshot_id == kept[-1]
    # the older snapshot still scans (its files are all there)
    older = tbl.scan(snapshot_id=kept[0]).to_arrow()
    check_exactly_once(older, range((rounds - 1) * per))
    # GET_LAKE_SNAPSHOT answers the newest, whose offsets are the log's
    snap = await admin.get_latest_lake_snapshot(path)
    assert snap.snapshot_id == kept[-1]
    latest = await admin.list_offsets(path, [0, 1], fluss.OffsetSpec.latest())
    got = {tb.bucket_id: o for tb, o in snap.table_buckets_offset.items()}
    assert all(latest[b] == o for b, o in got.items()), (got, latest)
    assert sum(got.values()) == rounds * per


async def test_without_the_key_every_snapshot_stays(lake):
    """The same retention properties without auto-expire-snapshot (its
    default is false): nothing expires."""
    srv, conn, admin, db, wh = lake
    path = await create(admin, db, "keep", SLOW, KEEP_TWO)
    for r in range(5):
        await write(conn, path, rows(r * 10, (r + 1) * 10))
        await tier_now(srv, db, "keep")
    tbl = lake_table(wh, db, "keep")
    snaps = tbl.snapshots()
    assert len(snaps) == 5
    assert all(uri_path(s.manifest_list).exists() for s in snaps)
    assert len(tbl.metadata.snapshot_log) == 5
    check_exactly_once(tbl.scan().to_arrow(), range(50))
    check_files(wh, db, "keep", tbl)


async def test_default_retention_and_altered_properties(lake):
    """With the key and Iceberg's default retention (5 days, keep 1)
    nothing is old enough to go. The retention is the lake table's own,
    read at every expiry: `iceberg.*` properties changed while the lake is
    off (0.9.1 refuses them while it is on) reach the lake table, and the
    next round expires by them. The key itself is refused by ALTER, as
    0.9.1 refuses it."""
    srv, conn, admin, db, wh = lake
    path = await create(admin, db, "d", EXPIRE, buckets=1)
    for r in range(3):
        await write(conn, path, rows(r * 10, (r + 1) * 10))
        await tier_now(srv, db, "d")
    assert len(lake_table(wh, db, "d").snapshots()) == 3

    assert alter(srv, db, "d", configs=[("table.datalake.auto-expire-snapshot", "false", SET)]) \
        == (56, "The option 'table.datalake.auto-expire-snapshot' is not supported to alter "
                "yet.")
    assert alter(srv, db, "d", configs=[("table.datalake.enabled", "false", SET)]) == (0, None)
    assert alter(srv, db, "d", configs=[
        ("iceberg.history.expire.max-snapshot-age-ms", "1", SET)]) == (0, None)
    assert alter(srv, db, "d", configs=[("table.datalake.enabled", "true", SET)]) == (0, None)
    tbl = lake_table(wh, db, "d")
    assert tbl.properties["history.expire.max-snapshot-age-ms"] == "1"
    await write(conn, path, rows(30, 40))
    await tier_now(srv, db, "d")
    tbl = lake_table(wh, db, "d")
    assert len(tbl.snapshots()) == 1  # min-snapshots-to-keep's default: 1
    check_exactly_once(tbl.scan().to_arrow(), range(40))
    check_files(wh, db, "d", tbl)


async def test_killed_between_expiry_and_deletion(start_server, tmp_path):
    """kill -9 after the expiry's version is committed, before its
    deletions (test hook FLUSS_TEST_LAKE_KILL=expired): the head is whole
    without the expired snapshots, their files are orphans, and the sweep
    after the restart removes them (lake.orphan-file.min-age 0 s here)."""
    wh = tmp_path / "warehouse"
    args = (*lake_args(wh), "-D", "lake.orphan-file.min-age=0s")
    srv = start_server(*args, env={"FLUSS_TEST_LAKE_KILL": "expired"})
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("expkill")
    await admin.create_database(db)
    path = await create(admin, db, "t", EXPIRE, KEEP_TWO)
    for r in range(2):  # two snapshots: nothing to expire yet
        await write(conn, path, rows(r * 30, (r + 1) * 30))
        await tier_now(srv, db, "t")
    first = uri_path(lake_table(wh, db, "t").snapshots()[0].manifest_list)
    await write(conn, path, rows(60, 90))
    await conn.close()
    r = cli(srv, "lake", "tier", f"{db}.t", "--now")
    assert r.returncode != 0
    assert srv.proc.wait(timeout=30) == -9  # the hook fired
    tbl = lake_table(wh, db, "t")
    assert len(tbl.snapshots()) == 2  # the expiry's version is the head
    assert first.exists()  # ... and its files were not deleted yet
    check_exactly_once(tbl.scan().to_arrow(), range(90))

    srv.env = None
    srv.start()
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    await wait_ready(admin, path, 2)
    await write(conn, path, rows(90, 120))
    await tier_now(srv, db, "t")
    tbl = lake_table(wh, db, "t")
    assert not first.exists()
    assert len(tbl.snapshots()) == 2
    check_exactly_once(tbl.scan().to_arrow(), range(120))
    check_files(wh, db, "t", tbl)
    await conn.close()


async def test_server_key_expires_every_table(start_server, tmp_path):
    """The tiering service's `lake.tiering.auto-expire-snapshot` (0.9.1's
    server-side key, "even if table.datalake.auto-expire-snapshot is
    false") expires a table that does not ask for it itself."""
    wh = tmp_path / "warehouse"
    srv = start_server(*lake_args(wh), "-D", "lake.tiering.auto-expire-snapshot=true")
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique("expsrv")
    await admin.create_database(db)
    path = await create(admin, db, "t", SLOW, KEEP_TWO, buckets=1)
    for r in range(4):
        await write(conn, path, rows(r * 10, (r + 1) * 10))
        await tier_now(srv, db, "t")
    tbl = lake_table(wh, db, "t")
    assert len(tbl.snapshots()) == 2
    check_exactly_once(tbl.scan().to_arrow(), range(40))
    check_files(wh, db, "t", tbl)
    await conn.close()
