"""Random kill points under continuous produce (issue 21's crash gate):
a writer keeps appending to a log table and upserting/deleting in a PK
table, both tiered every 300 ms, and flussd is killed with SIGKILL at a
random moment (mid-write, mid-round, mid-commit: wherever it falls),
restarted, and the writer goes on, FLUSS_LAKE_KILLS times (4 in `make
test`; `make test-lake-kills` runs 200).

After every kill, before the restart, the lake as the kill left it is
whole: the current snapshot's rows are, per bucket, exactly the offsets
below the lake offset its `fluss-offsets` file names (log table), and no
key is live twice (PK table). At the end, after a last round:

* log table: the lake holds every (bucket, offset) of the log exactly
  once with the log's own row there, every acknowledged row is in it, and
  nothing that was never sent;
* PK table: the lake is the table (pyfluss lookups of every key), and
  each key whose last write was acknowledged (no unanswered write after
  it) has that value;
* no Parquet file is left that the table does not name
  (lake.orphan-file.min-age 0 s).
"""

import asyncio
import json
import os
import random
import time
from pathlib import Path

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, connect
from lakeutil import lake_args
from logutil import read_all, wait_ready
from test_lake_pk import lookups, tier_now

pyiceberg_table = pytest.importorskip("pyiceberg.table")
KILLS = int(os.environ.get("FLUSS_LAKE_KILLS", "4"))
SEED = int(os.environ.get("FLUSS_LAKE_KILL_SEED", "20261207"))
pytestmark = [pytest.mark.skipif(not IS_OURS, reason="kills its own flussd"), pytest.mark.restarts,
              pytest.mark.timeout(120 + 12 * KILLS)]

FAST = {"table.datalake.enabled": "true", "table.datalake.freshness": "300ms"}
LOG_SCHEMA = pa.schema([pa.field("id", pa.int32(), nullable=False), ("name", pa.string())])
PK_SCHEMA = pa.schema([pa.field("id", pa.int32(), nullable=False), ("name", pa.string()),
                       ("v", pa.int64())])
KEYS = 150


def lake_table(wh, db, name):
    try:
        return pyiceberg_table.StaticTable.from_metadata(str(wh / db / name))
    except FileNotFoundError:
        return None


def check_log_snapshot_whole(wh, db):
    """The current snapshot of the log table's lake: per bucket the rows
    at offsets 0..lake offset - 1, each once."""
    tbl = lake_table(wh, db, "log")
    snap = tbl.current_snapshot() if tbl else None
    if snap is None:
        return 0
    got = tbl.scan().to_arrow()
    doc = json.loads(Path(snap.summary["fluss-offsets"][len("file://"):]).read_text())
    by_bucket = {}
    for b, o in zip(got.column("__bucket").to_pylist(), got.column("__offset").to_pylist()):
        by_bucket.setdefault(b, []).append(o)
    for b, end in enumerate(doc["bucket_offsets"]):
        assert sorted(by_bucket.get(b, [])) == list(range(max(end, 0))), \
            f"bucket {b}: the lake's rows are not offsets 0..{end - 1}"
    assert set(by_bucket) <= set(range(len(doc["bucket_offsets"])))
    return got.num_rows


def pk_lake_rows(wh, db):
    tbl = lake_table(wh, db, "pk")
    if tbl is None or tbl.current_snapshot() is None:
        return {}
    got = tbl.scan().to_arrow()
    ids = got.column("id").to_pylist()
    assert len(ids) == len(set(ids)), "a key is live twice in the lake"
    return {r["id"]: (r["id"], r["name"], r["v"]) for r in got.to_pylist()}


class Writer:
    """Appends 20 rows and upserts/deletes a few keys per step, each
    flushed (acks=all). What was sent and what was acknowledged are kept
    apart; the keys of a step that never got its answer (the kill came
    first) are ambiguous for good: a client retry may still land it."""

    def __init__(self):
        self.next_id = 0
        self.gen = 0
        self.sent, self.acked = set(), set()
        self.pk_acked = {}
        self.pending = set()    # keys of the step in flight
        self.ambiguous = set()  # keys of steps never answered

    def killed(self):
        self.ambiguous |= self.pending
        self.pending = set()

    async def run(self, conn, log_path, pk_path, stop):
        log_t = await conn.get_table(log_path)
        pk_t = await conn.get_table(pk_path)
        while not stop.is_set():
            ids = list(range(self.next_id, self.next_id + 20))
            self.next_id += 20
            self.sent.update(ids)
            w = log_t.new_append().create_writer()
            w.write_arrow(pa.Table.from_pydict(
                {"id": ids, "name": [f"r{i}" for i in ids]}, schema=LOG_SCHEMA))
            await w.flush()
            self.acked.update(ids)

            self.gen += 1
            g = self.gen
            ups = sorted({(g * 37 + i * 11) % KEYS for i in range(8)})
            dels = sorted({(g * 53 + i * 17) % KEYS for i in range(2)} - set(ups))
            self.pending = set(ups) | set(dels)
            pw = pk_t.new_upsert().create_writer()
            for k in ups:
                pw.upsert({"id": k, "name": f"k{k}g{g}", "v": k * 100_000 + g})
            for k in dels:
                pw.delete({"id": k})
            await pw.flush()
            for k in ups:
                self.pk_acked[k] = (k, f"k{k}g{g}", k * 100_000 + g)
            for k in dels:
                self.pk_acked[k] = None
            self.pending = set()
            await asyncio.sleep(0.02)


async def create_tables(admin, db):
    log_path, pk_path = fluss.TablePath(db, "log"), fluss.TablePath(db, "pk")
    await admin.create_table(log_path, fluss.TableDescriptor(
        fluss.Schema(LOG_SCHEMA), bucket_count=3, properties=FAST), ignore_if_exists=True)
    await admin.create_table(pk_path, fluss.TableDescriptor(
        fluss.Schema(PK_SCHEMA, primary_keys=["id"]), bucket_count=3, properties=FAST),
        ignore_if_exists=True)
    await wait_ready(admin, log_path, 3)
    await wait_ready(admin, pk_path, 3)
    return log_path, pk_path


async def test_random_kills_under_continuous_produce(start_server, tmp_path):
    rng = random.Random(SEED)
    wh = tmp_path / "warehouse"
    srv = start_server(*lake_args(wh), "-D", "lake.orphan-file.min-age=0s")
    db = "kills"
    conn = await connect(srv.bootstrap)
    await conn.get_admin().create_database(db, ignore_if_exists=True)
    wr = Writer()
    seen_rows = []
    for k in range(KILLS):
        admin = conn.get_admin()
        log_path, pk_path = await create_tables(admin, db)
        stop = asyncio.Event()
        task = asyncio.create_task(wr.run(conn, log_path, pk_path, stop))
        await asyncio.sleep(rng.uniform(0.05, 1.5))
        srv.kill9()
        stop.set()
        task.cancel()
        try:
            await asyncio.wait_for(task, 10)
        except BaseException:  # noqa: BLE001 - cancelled or failed mid-write: either way unknown
            pass
        wr.killed()
        try:
            await asyncio.wait_for(conn.close(), 10)
        except BaseException:  # noqa: BLE001
            pass
        seen_rows.append(check_log_snapshot_whole(wh, db))
        pk_lake_rows(wh, db)
        srv.start()
        conn = await connect(srv.bootstrap)

    admin = conn.get_admin()
    log_path, pk_path = await create_tables(admin, db)
    # one last step answered after the last restart, then a round
    stop = asyncio.Event()
    stop_soon = asyncio.get_running_loop().call_later(0.3, stop.set)
    await wr.run(conn, log_path, pk_path, stop)
    stop_soon.cancel()
    tier_now(srv, db, "log")
    tier_now(srv, db, "pk")

    lake = lake_table(wh, db, "log").scan().to_arrow()
    log = await read_all(conn, admin, log_path)
    pairs = list(zip(lake.column("__bucket").to_pylist(), lake.column("__offset").to_pylist()))
    assert len(pairs) == len(set(pairs)), "a (bucket, offset) is in the lake twice"
    assert sorted(lake.column("id").to_pylist()) == sorted(log.column("id").to_pylist()), \
        "the lake's rows are not the log's"
    lake_ids = set(lake.column("id").to_pylist())
    assert wr.acked <= lake_ids, f"acknowledged rows lost: {sorted(wr.acked - lake_ids)[:10]}"
    assert lake_ids <= wr.sent, "rows in the lake that were never sent"
    check_log_snapshot_whole(wh, db)

    truth = await lookups(conn, pk_path, range(KEYS))
    assert pk_lake_rows(wh, db) == truth
    for key, value in wr.pk_acked.items():
        if key in wr.ambiguous:
            continue
        assert truth.get(key) == value, f"key {key}: acknowledged {value}, the table has " \
                                        f"{truth.get(key)}"
    for name in ("log", "pk"):
        tbl = lake_table(wh, db, name)
        files = sorted(str(p) for p in (wh / db / name / "data").rglob("*.parquet"))
        named = set()
        for snap in tbl.snapshots():
            for m in snap.manifests(tbl.io):
                for e in m.fetch_manifest_entry(tbl.io, discard_deleted=False):
                    named.add(e.data_file.file_path[len("file://"):])
        orphans = [f for f in files if f not in named]
        assert not orphans, f"{name}: files no snapshot names: {orphans[:5]}"
    await conn.close()
    print(json.dumps({"kills": KILLS, "seed": SEED, "acked_rows": len(wr.acked),
                      "sent_rows": len(wr.sent), "lake_rows": len(lake_ids),
                      "pk_keys": len(truth), "ambiguous_keys": len(wr.ambiguous),
                      "lake_rows_at_kills": seen_rows}))
