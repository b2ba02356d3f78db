"""F5: primary-key tables under leader kill -9 (reliability.md §4.1).

Three tablet servers, a three-bucket primary-key table (id INT, name
STRING, score BIGINT) with replication factor 3. One idempotent raw
writer per bucket (faultutil.LeaderWriter with PUT_KV batches, acks=all)
upserts and deletes keys of its own: every batch touches 10 of the
bucket's 40 keys, giving each a score that only grows (the batch's
number) or, one time in ten, deleting it. Each round kills the tablet
server that leads bucket 0 with SIGKILL, measures the time until a LOOKUP
on bucket 0 is answered again by the new leader, and starts it again.

At the end:
* final_value_violations: keys whose looked-up value is neither what
  their last acknowledged batch left nor what the batch in flight at the
  stop would have left (must be 0);
* changelog_violations: changelog records, read with pyfluss bucket by
  bucket, that do not follow from the one before for their key (+I of a
  present key, -U/-D that is not the current image, +U without -U,
  a score that does not grow), or a folded changelog that is not the
  looked-up table (must be 0);
* lookup_recovery p50/p99: kill to the first answered lookup.

One JSON line of these counters is printed (and appended to the ledger
FLUSS_FAULT_LEDGER names). FLUSS_F5_KILLS sets the number of kills (5).
"""

import asyncio
import os
import random
import socket
import time

import pyarrow as pa
import pytest

import fluss
from faultutil import LeaderWriter, percentile, report
from logutil import OFFSET_LATEST, init_writer, kv_batch, list_offsets_raw, wait_ready
from logutil import raw_lookup as lookup_raw
from rawwire import (ConnectionClosed, as_int32, as_int64, decode, dec_varint, enc_varint,
                     f_bytes, f_varint, handshake)
from test_cluster import bucket_leaders, connect, wait_log

KILLS = int(os.environ.get("FLUSS_F5_KILLS", "5"))
KEYS = 40
PUT_KV, LOOKUP = 1016, 1017
SCHEMA = pa.schema([pa.field("id", pa.int32()), pa.field("name", pa.string()),
                    pa.field("score", pa.int64(), nullable=False)])


def compacted_row(id_, score):
    """CompactedRow of (id, f"s{score}", score): no NULLs."""
    name = f"s{score}".encode()
    return b"\x00" + enc_varint(id_) + enc_varint(len(name)) + name + enc_varint(score)


def decode_value(value):
    """A LOOKUP value (2-byte schema id + CompactedRow) -> score."""
    pos = 3  # schema id, null bits
    _, pos = dec_varint(value, pos)
    n, pos = dec_varint(value, pos)
    score, _ = dec_varint(value, pos + n)
    assert value[pos:pos + n] == f"s{score}".encode(), value
    return score


def raw_lookup(rc, table_id, bucket, ids):
    """-> (error code, [score, or None when absent])."""
    return lookup_raw(rc, table_id, bucket, [enc_varint(i) for i in ids], decode_value)


class KvWriter(LeaderWriter):
    """Upserts and deletes of the bucket's keys; carries {id: score or
    None (deleted)}."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.rng = random.Random(self.bucket)
        self.ids = [self.bucket * 1000 + k for k in range(KEYS)]

    def make_batch(self, seq):
        ops = {}
        for i in self.rng.sample(self.ids, 10):
            ops[i] = None if self.rng.random() < 0.1 else seq + 1
        records = [(enc_varint(i), None if s is None else compacted_row(i, s))
                   for i, s in ops.items()]
        return kv_batch(records, self.schema_id, self.writer_id, seq), ops

    def send(self, rc, data):
        body = (f_varint(1, -1) + f_varint(2, self.table_id) + f_varint(3, self.timeout_ms)
                + f_bytes(5, f_varint(2, self.bucket) + f_bytes(3, data)))
        rtype, resp = rc.call(PUT_KV, body, api_version=1)
        if rtype != 0:
            return 1, "error response", None
        f = decode(decode(resp)[1][0])
        code = as_int32(f[3][0]) if 3 in f else 0
        return code, f[4][0].decode() if 4 in f else None, \
            as_int64(f[5][0]) if 5 in f else None


def check_changelog(records):
    """[(change type, id, score)] of one bucket in offset order -> (folded
    {id: score}, violations)."""
    image, bad = {}, 0
    before = None  # the -U waiting for its +U
    for ct, i, score in records:
        if before is not None and (ct != "+U" or before != i):
            bad += 1
            before = None
        if ct == "+I":
            bad += i in image
            image[i] = score
        elif ct == "-U":
            bad += image.get(i) != score
            before = i
        elif ct == "+U":
            if before != i or score <= image.get(i, -1):
                bad += 1
            image[i] = score
            before = None
        elif ct == "-D":
            bad += image.get(i) != score
            image.pop(i, None)
        else:
            bad += 1
    return image, bad + (before is not None)


async def read_changelog(conn, path, bucket, want_end, timeout=60):
    table = await conn.get_table(path)
    scanner = await table.new_scan().create_log_scanner()
    scanner.subscribe_buckets({bucket: fluss.EARLIEST_OFFSET})
    out, last = [], -1
    deadline = time.monotonic() + timeout
    while last + 1 < want_end and time.monotonic() < deadline:
        for r in await scanner.poll(500):
            out.append((r.change_type.short_string(), r.row["id"], r.row["score"]))
            last = max(last, r.offset)
    return out


def lookup_at_leader(c, table_id, bucket, ids):
    leader = bucket_leaders(c, "fluss", "f5").get(bucket, -1)
    if leader < 0:
        return 1, None
    try:
        rc = handshake(c.host, c.tablet_port + leader, timeout=5.0)
    except (OSError, ConnectionClosed, socket.timeout):
        return 1, None
    try:
        return raw_lookup(rc, table_id, bucket, ids)
    except (OSError, ConnectionClosed, socket.timeout, AssertionError):
        return 1, None
    finally:
        rc.close()


def high_watermark(c, table_id, bucket):
    leader = bucket_leaders(c, "fluss", "f5")[bucket]
    rc = handshake(c.host, c.tablet_port + leader)
    try:
        rtype, resp = list_offsets_raw(rc, table_id, [bucket], OFFSET_LATEST)
    finally:
        rc.close()
    assert rtype == 0 and resp[0]["error_code"] == 0, resp
    return resp[0]["offset"]


@pytest.mark.timeout(900)
async def test_f5_pk_leader_kill(cluster):
    c = cluster(tablets=3, rf=3)
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database("fluss", ignore_if_exists=True)
    path = fluss.TablePath("fluss", "f5")
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA, primary_keys=["id"]), bucket_count=3))
    await wait_ready(admin, path, 3)
    info = await admin.get_table_info(path)
    rc = handshake(c.host, c.tablet_port)
    try:
        wids = [init_writer(rc, "fluss", "f5") for _ in range(3)]
    finally:
        rc.close()
    writers = [KvWriter(c, "fluss", "f5", info.table_id, info.schema_id, b, wids[b])
               for b in range(3)]
    recovery = []
    try:
        for w in writers:
            w.start()
        for _ in range(KILLS):
            await asyncio.sleep(1.0)
            assert not any(w.other_errors for w in writers), [w.other_errors for w in writers]
            leader = bucket_leaders(c, "fluss", "f5").get(0, -1)
            assert leader >= 0, "bucket 0 has no leader"
            gone = c.log("coordinator").count(f"tablet server {leader} is gone")
            t_kill = time.monotonic()
            c.kill9(f"tablet-{leader}")
            deadline = t_kill + 60
            while True:
                code, _ = await asyncio.to_thread(lookup_at_leader, c, info.table_id, 0, [0])
                if code == 0 and bucket_leaders(c, "fluss", "f5").get(0) != leader:
                    break
                assert time.monotonic() < deadline, "no lookup answered after the kill"
                await asyncio.sleep(0.05)
            recovery.append(time.monotonic() - t_kill)
            await wait_log(c, "coordinator", f"tablet server {leader} is gone", gone + 1)
            c.start_tablet(leader)
    finally:
        for w in writers:
            w.stop_event.set()
        for w in writers:
            w.join(60)
    final_bad = changelog_bad = changelog_records = 0
    for w in writers:
        last = {}
        for a in w.acks:
            last.update(a[3])
        code, got = await asyncio.to_thread(lookup_at_leader, c, info.table_id, w.bucket, w.ids)
        assert code == 0, code
        looked = dict(zip(w.ids, got))
        for i in w.ids:
            allowed = {last.get(i)}
            if w.pending and i in w.pending:
                allowed.add(w.pending[i])
            final_bad += looked[i] not in allowed
        end = await asyncio.to_thread(high_watermark, c, info.table_id, w.bucket)
        records = await read_changelog(conn, path, w.bucket, end)
        changelog_records += len(records)
        image, bad = check_changelog(records)
        changelog_bad += bad + (image != {i: s for i, s in looked.items() if s is not None})
    figures = {
        "suite": "F5", "kills": KILLS,
        "acked_batches": sum(len(w.acks) for w in writers),
        "retries": sum(w.retries for w in writers),
        "other_errors": sum(len(w.other_errors) for w in writers),
        "final_value_violations": final_bad,
        "changelog_violations": changelog_bad, "changelog_records": changelog_records,
        "lookup_recovery_p50_s": round(percentile(recovery, 50), 3),
        "lookup_recovery_p99_s": round(percentile(recovery, 99), 3),
    }
    report(figures)
    assert figures["final_value_violations"] == 0, figures
    assert figures["changelog_violations"] == 0, figures
    assert figures["acked_batches"] > 0 and figures["other_errors"] == 0, figures
    await conn.close()


def test_changelog_checker_catches_each_violation():
    """The checker itself: a clean history folds with no violation, and
    each kind of broken history is counted."""
    good = [("+I", 1, 1), ("-U", 1, 1), ("+U", 1, 2), ("-D", 1, 2), ("+I", 1, 3)]
    assert check_changelog(good) == ({1: 3}, 0)
    for broken in ([("+I", 1, 1), ("+I", 1, 2)],                 # insert of a present key
                   [("+I", 1, 1), ("-U", 1, 9), ("+U", 1, 2)],   # -U not the image
                   [("+I", 1, 1), ("+U", 1, 2)],                 # +U without -U
                   [("+I", 1, 2), ("-U", 1, 2), ("+U", 1, 1)],   # score going back
                   [("+I", 1, 1), ("-D", 1, 5)],                 # -D not the image
                   [("+I", 1, 1), ("-U", 1, 1)]):                # -U with no +U
        assert check_changelog(broken)[1] > 0, broken
