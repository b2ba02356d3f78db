"""Shared pieces of the storage-fault tests (test_storage_faults.py):
raw idempotent writers that record every answer, the server's fault log,
reading everything back, and the JSON figures and their ledger.

A writer owns one bucket of one table (a log table through PRODUCE_LOG or
a primary-key table through PUT_KV), its own connection and an idempotent
writer id, and sends one request at a time with acks=all: the answers for
its bucket are therefore totally ordered, which is what
acks_after_io_error is counted on (an ack for a request sent after the
bucket answered a storage error). Every id a writer sends is unique, so
what comes back after a restart can be checked exactly once against what
was acknowledged.
"""

import json
import os
import re
import socket
import subprocess
import threading
import time
from pathlib import Path

import pyarrow as pa

import fluss
from logutil import build_batch, init_writer, produce_log, read_batches
from rawwire import ConnectionClosed, as_int32, as_int64, decode, decode_error, f_bytes, f_varint, handshake
from test_pk_raw import compacted_row, key, kv_batch

PUT_KV = 1016
LOG_STORAGE = 10   # LOG_STORAGE_EXCEPTION: the bucket's log is offline
KV_STORAGE = 11    # KV_STORAGE_EXCEPTION
STORAGE = 26       # STORAGE_EXCEPTION: the data-disk watermark
IO_ERRORS = {LOG_STORAGE, KV_STORAGE}
STORAGE_ERRORS = IO_ERRORS | {STORAGE}

LOG_SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("payload", pa.string())])

FAULT_LINE = re.compile(r"vfs fault #(\d+) \(test hook FLUSS_TEST_IO_FAULTS\): (\w+) on (\w+) of "
                        r"(.*), mono_us=(\d+)")
OFFLINE_LINE = re.compile(r"bucket (\d+) of table (\d+) \(partition -?\d+\) is offline after "
                          r"(a failed write or fsync|its log failed to open)")


def log_payload(i: int, size: int) -> str:
    return f"p{i}-" + "x" * size


def kv_name(i: int, size: int) -> str:
    return f"n{i}-" + "y" * size


class BucketWriter(threading.Thread):
    """One bucket, one connection, one idempotent writer; see the module
    docstring. kind: "log" or "kv". After a storage error the same batch
    is sent again (as the clients do) every retry_s, at most max_retries
    times in a row (None: until stopped). A lost connection is opened
    again (a restart of the server) and the batch sent again."""

    def __init__(self, addr, kind, table_id, schema_id, bucket, writer_id, id_base, rows,
                 payload, pace_s=0.0, retry_s=0.05, max_retries=3, deadline=None):
        super().__init__(daemon=True)
        self.addr, self.kind, self.table_id, self.schema_id = addr, kind, table_id, schema_id
        self.bucket, self.writer_id, self.next_id = bucket, writer_id, id_base
        self.rows, self.payload, self.pace_s, self.retry_s = rows, payload, pace_s, retry_s
        self.max_retries, self.deadline = max_retries, deadline
        self.stop_event = threading.Event()
        self.lock = threading.Lock()
        self.attempted = []          # [(seq, ids)] in order
        self.acked = {}              # seq -> (ids, t_send, t_recv)
        self.events = []             # (t_send, t_recv, seq, code)
        self.first_error = {}        # code -> t_recv of its first answer
        self.io_error_seen = False   # a 10/11 answer since the last (re)connect
        self.acks_after_io_error = 0
        self.other_errors = []       # (code, message): anything but ok / storage errors
        self.transport_errors = 0
        self.failure = None          # an exception that ended the thread

    # -- requests --
    def _batch(self, seq):
        ids = list(range(self.next_id, self.next_id + self.rows))
        self.next_id += self.rows
        if self.kind == "log":
            rows = pa.record_batch([pa.array(ids, pa.int64()),
                                    pa.array([log_payload(i, self.payload) for i in ids])],
                                   schema=LOG_SCHEMA)
            data = build_batch(rows, self.schema_id, writer_id=self.writer_id, seq=seq)
        else:
            data = kv_batch([(key(i), compacted_row(i, kv_name(i, self.payload), i * 7))
                             for i in ids], schema_id=self.schema_id, writer_id=self.writer_id,
                            seq=seq)
        return ids, data

    def _send(self, rc, data):
        """-> (code, message). A top-level error answer counts as the
        bucket's code."""
        if self.kind == "log":
            rtype, resp = produce_log(rc, self.table_id, {self.bucket: data}, acks=-1,
                                      timeout_ms=15000)
            if rtype != 0:
                return resp
            (b,) = resp
            return b["error_code"], b["error_message"]
        body = (f_varint(1, -1) + f_varint(2, self.table_id) + f_varint(3, 15000)
                + f_bytes(5, f_varint(2, self.bucket) + f_bytes(3, data)))
        rtype, resp = rc.call(PUT_KV, body, api_version=1)
        if rtype != 0:
            return decode_error(resp)
        (raw,) = decode(resp)[1]
        f = decode(raw)
        return (as_int32(f[3][0]) if 3 in f else 0), (f[4][0].decode() if 4 in f else None)

    def _connect(self):
        while not self.stop_event.is_set():
            try:
                return handshake(*self.addr, timeout=20.0)
            except OSError:
                self.transport_errors += 1
                time.sleep(0.1)
        return None

    def run(self):
        try:
            self._run()
        except BaseException as e:  # reported by the test
            self.failure = e

    def _run(self):
        rc = self._connect()
        seq, current, retries = 0, None, 0
        while rc and not self.stop_event.is_set():
            if self.deadline and time.monotonic() > self.deadline:
                break
            if current is None:
                current = self._batch(seq)
                with self.lock:
                    self.attempted.append((seq, current[0]))
            t0 = time.monotonic()
            try:
                code, msg = self._send(rc, current[1])
            except (OSError, ConnectionClosed, socket.timeout, AssertionError):
                self.transport_errors += 1
                rc.close()
                time.sleep(0.1)
                rc = self._connect()
                self.io_error_seen = False  # perhaps a new server process
                continue
            t1 = time.monotonic()
            with self.lock:
                self.events.append((t0, t1, seq, code))
                if code == 0:
                    self.acked[seq] = (current[0], t0, t1)
                    if self.io_error_seen:
                        self.acks_after_io_error += 1
                elif code in STORAGE_ERRORS:
                    self.first_error.setdefault(code, t1)
                    if code in IO_ERRORS:
                        self.io_error_seen = True
                else:
                    self.other_errors.append((code, msg))
            if code == 0:
                seq, current, retries = seq + 1, None, 0
                if self.pace_s:
                    time.sleep(self.pace_s)
            elif code in STORAGE_ERRORS:
                retries += 1
                if self.max_retries is not None and retries > self.max_retries:
                    break
                time.sleep(self.retry_s)
            else:
                break
        if rc:
            rc.close()

    def stop(self, timeout=30.0):
        self.stop_event.set()
        self.join(timeout)
        assert not self.is_alive(), f"writer of bucket {self.bucket} did not stop"

    # -- figures --
    def acked_ids(self):
        with self.lock:
            return [i for ids, _, _ in self.acked.values() for i in ids]

    def attempted_ids(self):
        with self.lock:
            return [i for _, ids in self.attempted for i in ids]


def start_writers(addr, kind, table_id, schema_id, buckets, writer_ids, id_base, **kw):
    ws = [BucketWriter(addr, kind, table_id, schema_id, b, writer_ids[b],
                       id_base + b * 10_000_000, **kw) for b in range(buckets)]
    for w in ws:
        w.start()
    return ws


def new_writer_ids(addr, db, table, n):
    rc = handshake(*addr)
    try:
        return [init_writer(rc, db, table) for _ in range(n)]
    finally:
        rc.close()


def server_faults(err_path: Path):
    """[(kind, errno name, path, mono_s)] from the server's fault lines,
    and {(table_id, bucket)} that logged going offline."""
    text = Path(err_path).read_text(errors="replace") if Path(err_path).exists() else ""
    faults = [(m.group(3), m.group(2), m.group(4), int(m.group(5)) / 1e6)
              for m in FAULT_LINE.finditer(text)]
    offline = {(int(m.group(2)), int(m.group(1))) for m in OFFLINE_LINE.finditer(text)}
    return faults, offline, text


async def read_log_table(conn, admin, path, buckets):
    """bucket -> ids in offset order (checked: offsets from 0 without holes,
    each row's payload intact)."""
    latest = await admin.list_offsets(path, list(range(buckets)), fluss.OffsetSpec.latest())
    total = sum(latest.values())
    rbs = await read_batches(conn, admin, path, total, timeout=30)
    per = {b: [] for b in range(buckets)}
    for rb in sorted(rbs, key=lambda r: (r.bucket.bucket_id, r.base_offset)):
        per[rb.bucket.bucket_id].append(rb)
    out = {}
    for b, batches in per.items():
        expect, ids = 0, []
        for rb in batches:
            assert rb.base_offset == expect, f"bucket {b}: hole or overlap at offset {expect}"
            expect = rb.last_offset + 1
            for r in rb.batch.to_pylist():
                pre = f"p{r['id']}-"
                assert r["payload"].startswith(pre) and not r["payload"][len(pre):].strip("x"), r
                ids.append(r["id"])
        assert expect == latest[b], f"bucket {b}: read {expect} of {latest[b]} offsets"
        out[b] = ids
    return out


def check_log_writers(writers, present):
    """Figures of log writers against what a bucket holds after recovery."""
    lost = dup = phantom = prefix_violations = 0
    seen = {}
    for ids in present.values():
        for i in ids:
            seen[i] = seen.get(i, 0) + 1
    dup = sum(n - 1 for n in seen.values() if n > 1)
    for w in writers:
        got = present[w.bucket]
        attempted = w.attempted_ids()
        lost += len(set(w.acked_ids()) - set(got))
        phantom += len(set(got) - set(attempted))
        if got != attempted[:len(got)]:
            prefix_violations += 1
    return {"lost_acked": lost, "duplicates": dup, "phantoms": phantom,
            "prefix_violations": prefix_violations}


def git_commit():
    """HEAD's short hash, "-dirty" when the tree has changes."""
    here = str(Path(__file__).parent)
    try:
        head = subprocess.run(["git", "-C", here, "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        # the ledger itself changes as the lines are appended
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--untracked-files=no",
                                "--", ":(top)", ":(top,exclude)tests/fault/RESULTS.jsonl"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except OSError:
        return "?"


def report(figures: dict):
    """Prints the JSON summary line; appends it to the ledger named by
    FLUSS_FAULT_LEDGER (make test-faults) with the commit and date."""
    line = json.dumps(figures, sort_keys=False)
    print("\n" + line)
    ledger = os.environ.get("FLUSS_FAULT_LEDGER")
    if ledger:
        entry = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": git_commit(),
                 **figures}
        with open(ledger, "a") as f:
            f.write(json.dumps(entry) + "\n")
