"""Partitions of log tables through pyfluss: create/list/drop partitions with
the reference's error codes, writes routed to partitions, per-partition
scans and offsets, and partition data dropped with its partition."""

import pyarrow as pa
import pytest

import fluss
from conftest import expect_error

SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("v", pa.string()),
                    pa.field("dt", pa.string())])


async def partitioned(admin, db, name="p", buckets=2):
    path = fluss.TablePath(db, name)
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA), partition_keys=["dt"], bucket_count=buckets))
    return path


async def read_partition(conn, path, partition_id, buckets):
    table = await conn.get_table(path)
    sc = await table.new_scan().create_record_batch_log_scanner()
    sc.subscribe_partition_buckets({(partition_id, b): fluss.EARLIEST_OFFSET
                                    for b in range(buckets)})
    rows = []
    for _ in range(40):
        t = await sc.poll_arrow(250)
        rows.extend(t.to_pylist())
        if not t.num_rows and rows:
            break
    return sorted(rows, key=lambda r: r["id"])


async def test_create_list_drop_partitions(admin, db):
    path = await partitioned(admin, db)
    await admin.create_partition(path, {"dt": "2026-12-01"})
    await admin.create_partition(path, {"dt": "2026-12-02"})
    infos = await admin.list_partition_infos(path)
    names = sorted(i.partition_name for i in infos)
    assert names == ["2026-12-01", "2026-12-02"]
    ids = [i.partition_id for i in infos]
    assert len(set(ids)) == 2 and all(i >= 0 for i in ids)
    # filtered by a partial spec
    only = await admin.list_partition_infos(path, {"dt": "2026-12-02"})
    assert [i.partition_name for i in only] == ["2026-12-02"]
    # errors
    await expect_error(42, admin.create_partition(path, {"dt": "2026-12-01"}))
    await admin.create_partition(path, {"dt": "2026-12-01"}, ignore_if_exists=True)
    await expect_error(43, admin.create_partition(path, {"nope": "x"}))
    await expect_error(43, admin.create_partition(path, {"dt": "bad value!"}))
    await admin.drop_partition(path, {"dt": "2026-12-01"})
    assert [i.partition_name for i in await admin.list_partition_infos(path)] == ["2026-12-02"]
    await expect_error(36, admin.drop_partition(path, {"dt": "2026-12-01"}))
    await admin.drop_partition(path, {"dt": "2026-12-01"}, ignore_if_not_exists=True)


async def test_partition_on_unpartitioned_table(admin, db):
    path = fluss.TablePath(db, "flat")
    await admin.create_table(path, fluss.TableDescriptor(fluss.Schema(SCHEMA)))
    await expect_error(37, admin.create_partition(path, {"dt": "x"}))


async def test_write_and_scan_partitions(conn, admin, db):
    path = await partitioned(admin, db, buckets=2)
    days = ["2026-01-01", "2026-01-02", "2026-01-03"]
    for d in days:  # pyfluss waits for partitions, it does not create them
        await admin.create_partition(path, {"dt": d})
    table = await conn.get_table(path)
    w = table.new_append().create_writer()
    for i in range(30):
        w.append({"id": i, "v": f"v{i}", "dt": days[i % 3]})
    await w.flush()
    infos = {i.partition_name: i.partition_id for i in await admin.list_partition_infos(path)}
    assert sorted(infos) == ["2026-01-01", "2026-01-02", "2026-01-03"]
    for k, name in enumerate(sorted(infos)):
        rows = await read_partition(conn, path, infos[name], 2)
        assert [r["id"] for r in rows] == list(range(k, 30, 3))
        assert all(r["dt"] == name and r["v"] == f"v{r['id']}" for r in rows)
        offs = await admin.list_partition_offsets(path, name, [0, 1], fluss.OffsetSpec.latest())
        assert sum(offs.values()) == 10
    # a dropped partition takes its data; a new one of the same name starts empty
    await admin.drop_partition(path, {"dt": "2026-01-01"})
    await admin.create_partition(path, {"dt": "2026-01-01"})
    infos2 = {i.partition_name: i.partition_id for i in await admin.list_partition_infos(path)}
    assert infos2["2026-01-01"] != infos["2026-01-01"]
    offs = await admin.list_partition_offsets(path, "2026-01-01", [0, 1], fluss.OffsetSpec.latest())
    assert offs == {0: 0, 1: 0}
