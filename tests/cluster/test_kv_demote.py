"""A primary-key leader demoted while it runs, then leading again in the
same process, serves what the other leader wrote meanwhile.

Three tablet servers, a one-bucket primary-key table with replication
factor 3. Its leader L takes upserts of KEYS keys (score 1), then its
ZooKeeper session expires while the process lives on (SIGSTOP past the
session timeout, then SIGCONT, as D7's phase C): the coordinator elects
another leader, and L, registered again, is told it follows. The new
leader takes upserts of the same keys (score 2); L fetches them as a
follower and rejoins the ISR. Then the servers that lead in L's place
are stopped with SIGTERM one by one (controlled shutdown moves their
leaderships to an in-sync replica) until L leads again, in the same
process it had all along: a LOOKUP of every key there must answer score
2, and an upsert there (score 3) must be read back. A demoted leader that
kept its store open (the limitation before) answers score 1: every
upsert of the other leader missing."""

import asyncio
import os
import signal
import time

import fluss
import pytest

from logutil import init_writer, kv_batch, wait_ready
from rawwire import as_int32, decode, enc_varint, f_bytes, f_varint, handshake
from test_cluster import bucket_leaders, connect, wait_log
from test_fault_f5 import PUT_KV, SCHEMA, compacted_row, raw_lookup

SESSION_S = 4.0
KEYS = 50
DB, TABLE = "fluss", "kvdemote"


def put_scores(c, server, table_id, schema_id, writer_id, seq, score):
    """PUT_KV (acks=all) of every key with score at server's client
    listener -> the bucket's error code (0: acknowledged)."""
    batch = kv_batch([(enc_varint(i), compacted_row(i, score)) for i in range(KEYS)], schema_id,
                     writer_id, seq)
    body = (f_varint(1, -1) + f_varint(2, table_id) + f_varint(3, 10000)
            + f_bytes(5, f_varint(2, 0) + f_bytes(3, batch)))
    rc = handshake(c.host, c.tablet_port + server, timeout=15.0)
    try:
        rtype, resp = rc.call(PUT_KV, body, api_version=1)
    finally:
        rc.close()
    assert rtype == 0, resp
    f = decode(decode(resp)[1][0])
    return as_int32(f[3][0]) if 3 in f else 0


def lookup_scores(c, server, table_id):
    """LOOKUP of every key at server -> (error code, [score or None])."""
    rc = handshake(c.host, c.tablet_port + server, timeout=15.0)
    try:
        return raw_lookup(rc, table_id, 0, list(range(KEYS)))
    finally:
        rc.close()


async def until(what, timeout, message):
    """Calls what() (in a thread) until it returns something true."""
    deadline = time.monotonic() + timeout
    while True:
        got = await asyncio.to_thread(what)
        if got:
            return got
        assert time.monotonic() < deadline, message()
        await asyncio.sleep(0.1)


def leader_of(c):
    try:
        return bucket_leaders(c, DB, TABLE).get(0, -1)
    except Exception:  # the coordinator between answers
        return -1


@pytest.mark.timeout(300)
async def test_demoted_pk_leader_leads_again_with_the_new_values(cluster):
    c = cluster(tablets=3, rf=3, session=f"{int(SESSION_S)}s")
    conn = await connect(c.bootstrap)
    admin = conn.get_admin()
    await admin.create_database(DB, ignore_if_exists=True)
    path = fluss.TablePath(DB, TABLE)
    await admin.create_table(path, fluss.TableDescriptor(
        fluss.Schema(SCHEMA, primary_keys=["id"]), bucket_count=1))
    await wait_ready(admin, path, 1)
    info = await admin.get_table_info(path)
    await conn.close()
    table_id = info.table_id
    isr3 = f"bucket 0 of table {table_id}: ISR of 3 replica(s)"  # the coordinator's, on a rejoin

    def put_at_leader(writer_id, seq, score):
        leader = leader_of(c)
        return leader >= 0 and put_scores(c, leader, table_id, info.schema_id, writer_id, seq,
                                          score) == 0

    rc = handshake(c.host, c.tablet_port)
    try:
        wids = [init_writer(rc, DB, TABLE) for _ in range(3)]
    finally:
        rc.close()
    # L leads and takes score 1 for every key (its kv store open)
    x = leader_of(c)
    assert x >= 0
    assert put_scores(c, x, table_id, info.schema_id, wids[0], 0, 1) == 0
    assert lookup_scores(c, x, table_id) == (0, [1] * KEYS)

    # L's session expires while the process lives on
    gone = c.log("coordinator").count(f"tablet server {x} is gone")
    registered = c.log(f"tablet-{x}").count("registered (incarnation")
    os.kill(c.pid(f"tablet-{x}"), signal.SIGSTOP)
    try:
        await wait_log(c, "coordinator", f"tablet server {x} is gone", gone + 1,
                       timeout=SESSION_S + 20)
        y = await until(lambda: (lambda lead: lead if lead not in (-1, x) else None)(leader_of(c)),
                        20, lambda: "no new leader of bucket 0")
    finally:
        os.kill(c.pid(f"tablet-{x}"), signal.SIGCONT)
    mark = len(c.log("coordinator"))
    await wait_log(c, f"tablet-{x}", "registered (incarnation", registered + 1)

    # the new leader takes score 2 for every key; L follows it into the ISR
    await until(lambda: put_at_leader(wids[1], 0, 2), 30, lambda: "score 2 not acknowledged")
    await until(lambda: isr3 in c.log("coordinator")[mark:], 60,
                lambda: c.log("coordinator")[mark:][-3000:])

    # leadership back to L: the servers leading in its place stop
    # (controlled shutdown) until it leads, in the same process
    pid = c.pid(f"tablet-{x}")
    stopped = []
    while (lead := leader_of(c)) != x:
        assert lead >= 0 and len(stopped) < 2, (lead, stopped)
        c.terminate(f"tablet-{lead}")
        stopped.append(lead)
        await until(lambda: leader_of(c) not in (-1, lead), 30,
                    lambda: f"leadership did not move from {lead}")
    assert c.pid(f"tablet-{x}") == pid and c.alive(f"tablet-{x}")
    assert y in stopped

    got = await until(lambda: (lambda r: r if r[0] == 0 else None)(lookup_scores(c, x, table_id)),
                      30, lambda: "no lookup answered at the returned leader")
    assert got == (0, [2] * KEYS), (
        "the returned leader serves the store it had before its demotion", got)
    # and it writes on from there
    assert put_scores(c, x, table_id, info.schema_id, wids[2], 0, 3) == 0
    assert lookup_scores(c, x, table_id) == (0, [3] * KEYS)
    assert "demoted while running" not in c.log(f"tablet-{x}")
