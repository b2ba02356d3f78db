"""The CLI's lake commands against a flussd with datalake.format=iceberg:
`fluss lake status DB.TABLE` (the lake snapshot; per bucket the lake
offset, the latest offset and the lag, in records and in ms) and `fluss lake tier DB.TABLE
--now` (fluss-c's LAKE_TIER_NOW: a round at once, whatever the table's
freshness, returning when it ended). A table with a freshness of an hour
is tiered only when asked; pyiceberg then reads exactly the rows the CLI
produced, and status shows no lag. A table whose lake is off, and a
server without a lake, refuse `tier --now` by name."""

import time

import pytest

from conftest import IS_OURS, unique
from test_cli_pk import cli, ok

pyiceberg_table = pytest.importorskip("pyiceberg.table")
pytestmark = pytest.mark.skipif(not IS_OURS, reason="the CLI and its server are fluss-c's")

SLOW = ["--property", "table.datalake.enabled=true", "--property",
        "table.datalake.freshness=1h"]


def status_rows(out, ms=None):
    """{(partition, bucket): (lake, latest, lag)} of `lake status`; the
    lag in ms of each into ms (a dict) when given."""
    rows = {}
    for ln in out.splitlines()[2:]:
        p, b, lake, latest, lag, lag_ms = [x.strip() for x in ln.split("|")]
        rows[(p, int(b))] = (int(lake), int(latest), int(lag))
        if ms is not None:
            ms[(p, int(b))] = int(lag_ms)
    return rows


def test_lake_status_and_tier_now(start_server, tmp_path):
    wh = tmp_path / "warehouse"
    srv = start_server("-D", "datalake.format=iceberg", "-D", "datalake.iceberg.type=hadoop",
                       "-D", f"datalake.iceberg.warehouse={wh}")
    db = unique("lakecli")
    ok(cli(srv, "db", "create", db))
    ok(cli(srv, "table", "create", f"{db}.t", "--schema", "id BIGINT, v STRING",
           "--buckets", "2", *SLOW))
    csv = "".join(f"{i},v{i}\n" for i in range(50))
    t0 = time.time()
    ok(cli(srv, "produce", f"{db}.t", "--format", "csv", stdin=csv))
    time.sleep(0.3)
    out = ok(cli(srv, "lake", "status", f"{db}.t"))
    elapsed_ms = (time.time() - t0) * 1000
    assert out.startswith("lake snapshot: none yet"), out
    assert out.splitlines()[1] == "partition | bucket | lake offset | latest offset | lag | lag ms"
    ms = {}
    before = status_rows(out, ms)
    assert sum(latest for _, latest, _ in before.values()) == 50
    assert all(lake == -1 and lag == latest for lake, latest, lag in before.values())
    # the oldest untiered record's age: at least the pause, at most since the produce
    for k, (_, _, lag) in before.items():
        if lag:
            assert 250 <= ms[k] <= elapsed_ms + 1000, (k, ms[k], elapsed_ms)
        else:
            assert ms[k] == 0

    out = ok(cli(srv, "lake", "tier", f"{db}.t", "--now"))
    assert out.startswith("tiered 50 rows; lake snapshot "), out
    snap = int(out.split()[-1])
    tbl = pyiceberg_table.StaticTable.from_metadata(str(wh / db / "t"))
    assert tbl.current_snapshot().snapshot_id == snap
    assert sorted(tbl.scan().to_arrow().column("id").to_pylist()) == list(range(50))
    out = ok(cli(srv, "lake", "status", f"{db}.t"))
    assert out.startswith(f"lake snapshot: {snap}"), out
    ms = {}
    after = status_rows(out, ms)
    assert all(lake == latest and lag == 0 for lake, latest, lag in after.values()), after
    assert set(ms.values()) == {0}

    # nothing new: a round commits nothing, the snapshot stays
    out = ok(cli(srv, "lake", "tier", f"{db}.t", "--now"))
    assert out == f"tiered 0 rows; lake snapshot {snap}\n", out

    # a partitioned table: one status line per partition and bucket
    ok(cli(srv, "table", "create", f"{db}.p", "--schema", "dt STRING, id BIGINT",
           "--partition-key", "dt", "--buckets", "1", *SLOW))
    for dt in ("a", "b"):
        ok(cli(srv, "partition", "add", f"{db}.p", f"dt={dt}"))
    ok(cli(srv, "produce", f"{db}.p", "--format", "csv",
           stdin="".join(f"{'ab'[i % 2]},{i}\n" for i in range(10))))
    ok(cli(srv, "lake", "tier", f"{db}.p", "--now"))
    rows = status_rows(ok(cli(srv, "lake", "status", f"{db}.p")))
    assert rows == {("a", 0): (5, 5, 0), ("b", 0): (5, 5, 0)}, rows

    # refusals
    ok(cli(srv, "table", "create", f"{db}.plain", "--schema", "id BIGINT", "--buckets", "1"))
    r = cli(srv, "lake", "tier", f"{db}.plain", "--now")
    assert r.returncode == 1 and "is not a lake table" in r.stderr, r.stderr
    r = cli(srv, "lake", "tier", f"{db}.t")
    assert r.returncode == 2


def test_tier_now_without_a_lake(server):
    db = unique("nolake")
    ok(cli(server, "db", "create", db))
    ok(cli(server, "table", "create", f"{db}.t", "--schema", "id BIGINT", "--buckets", "1"))
    r = cli(server, "lake", "tier", f"{db}.t", "--now")
    assert r.returncode == 1 and "no datalake.format" in r.stderr, r.stderr
    ok(cli(server, "db", "drop", db))


def test_manifests_merged(start_server, tmp_path):
    """A snapshot's manifest list never names more than 16 manifests: past
    that, the older ones' entries are rewritten into one manifest as
    EXISTING entries that keep the snapshot and sequence number they were
    added with. pyiceberg reads every row, and each file's data sequence
    number is still its round's."""
    wh = tmp_path / "warehouse"
    srv = start_server("-D", "datalake.format=iceberg", "-D", "datalake.iceberg.type=hadoop",
                       "-D", f"datalake.iceberg.warehouse={wh}")
    db = unique("merge")
    ok(cli(srv, "db", "create", db))
    ok(cli(srv, "table", "create", f"{db}.t", "--schema", "id BIGINT", "--buckets", "1", *SLOW))
    rounds = 20
    for r in range(rounds):
        ok(cli(srv, "produce", f"{db}.t", "--format", "csv",
               stdin="".join(f"{r * 10 + i}\n" for i in range(10))))
        ok(cli(srv, "lake", "tier", f"{db}.t", "--now"))
    tbl = pyiceberg_table.StaticTable.from_metadata(str(wh / db / "t"))
    snaps = tbl.snapshots()
    assert len(snaps) == rounds
    assert all(len(s.manifests(tbl.io)) <= 16 for s in snaps)
    head = tbl.current_snapshot()
    assert len(head.manifests(tbl.io)) < rounds  # merged
    assert sorted(tbl.scan().to_arrow().column("id").to_pylist()) == list(range(rounds * 10))
    entries = tbl.inspect.entries().to_pylist()
    assert len(entries) == rounds
    seq_of = {s.snapshot_id: s.sequence_number for s in snaps}
    assert {e["status"] for e in entries} == {0, 1}  # EXISTING (merged) and ADDED (the last)
    for e in entries:
        assert e["sequence_number"] == seq_of[e["snapshot_id"]], e
    assert head.summary["total-records"] == str(rounds * 10)
    assert head.summary["total-data-files"] == str(rounds)
