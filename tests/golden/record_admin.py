#!/usr/bin/env python3
"""Record the golden admin frames from the reference Fluss server.

    .venv/bin/python tests/golden/record_admin.py      (needs pyfluss + pyarrow)

1. starts recording proxies on 127.0.0.1:39123 (coordinator) and :39124
   (tablet server), forwarding to 127.0.0.1:39223 / :39224 (GOLDEN_COORD_PORT /
   GOLDEN_TABLET_PORT move them; the default 19123/19124 are avoided so other
   test runs on the machine neither hit nor disturb the recording);
2. starts a reference cluster (tests/reference/start, own state dir
   tests/reference/.run-golden, ZooKeeper on 32181) with its CLIENT
   listeners bound to 39223/39224 but *advertising* the proxy ports, so every
   connection a client opens after bootstrap also goes through a proxy
   (server-internal traffic uses the INTERNAL listeners and is not recorded);
3. records, each into its own directory under tests/golden/admin/:
     probe/    stdlib API_VERSIONS + GET_METADATA on both servers (probe.py)
     raw/      hand-made requests for edge cases (see raw_probes)
     pyfluss/  the pyfluss admin scenario below (outcomes in scenario.json)
     java/     tests/java/run (Java client 0.9.1 smoke test)
4. stops the cluster and writes index.json + decoded .txt per frame pair.

Set GOLDEN_OUT to record elsewhere; FLUSS_GOLDEN_SKIP_JAVA=1 skips java/.
"""
import asyncio
import json
import os
import subprocess
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import record  # noqa: E402

# Ports deliberately differ from the default reference/fluss-c ports (19123/19124)
# so that a recording does not pick up, or disturb, other test runs on the machine.
PROXY_COORD = int(os.environ.get("GOLDEN_COORD_PORT", "39123"))
PROXY_TABLET = int(os.environ.get("GOLDEN_TABLET_PORT", "39124"))
REAL_COORD, REAL_TABLET = PROXY_COORD + 100, PROXY_TABLET + 100
RUN_DIR = os.path.join(ROOT, "tests/reference/.run-golden")
BOOTSTRAP = "127.0.0.1:%d" % PROXY_COORD
OUT = os.environ.get("GOLDEN_OUT", os.path.join(HERE, "admin"))


class Scenario:
    def __init__(self, recorder):
        self.rec = recorder
        self.outcomes = []

    async def step(self, name, coro_fn, expect_error=None):
        """Run one client call labelled `name`; record its outcome."""
        self.rec.set_step(name)
        out = {"step": name, "expect_error": expect_error}
        try:
            result = await coro_fn()
            out["ok"] = True
            out["result"] = describe(result)
        except Exception as e:  # pyfluss raises FlussError
            out["ok"] = False
            out["error_type"] = type(e).__name__
            out["error_code"] = getattr(e, "error_code", None)
            out["error_message"] = getattr(e, "message", str(e))
        self.outcomes.append(out)
        status = "ok" if out["ok"] else "error %s" % out.get("error_code")
        print("[golden] %-40s %s" % (name, status))
        if expect_error is None and not out["ok"]:
            print("         unexpected: %s" % out["error_message"])
        if expect_error is not None and out["ok"]:
            print("         expected an error (%s) but the call succeeded" % expect_error)
        return out


def describe(v):
    """JSON-friendly description of a pyfluss result."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [describe(x) for x in v]
    if isinstance(v, dict):
        return {str(k): describe(x) for k, x in v.items()}
    cls = type(v).__name__
    if cls == "TableInfo":
        return {
            "table_id": v.table_id, "schema_id": v.schema_id,
            "created_time": v.created_time, "modified_time": v.modified_time,
            "num_buckets": v.num_buckets, "comment": v.comment,
            "primary_keys": v.get_primary_keys(), "bucket_keys": v.get_bucket_keys(),
            "partition_keys": v.get_partition_keys(),
            "properties": v.get_properties(), "custom_properties": v.get_custom_properties(),
            "columns": v.get_schema().get_columns(),
        }
    if cls == "DatabaseInfo":
        d = v.get_database_descriptor()
        return {"database_name": v.database_name, "comment": d.comment,
                "custom_properties": d.get_custom_properties(),
                "created_time": v.created_time, "modified_time": v.modified_time}
    return repr(v)


async def pyfluss_scenario(rec):
    import fluss
    import pyarrow as pa

    sc = Scenario(rec)
    TP = fluss.TablePath
    db, db2 = "golden_db", "golden_db_plain"

    rec.set_step("connect")
    conn = await fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": BOOTSTRAP}))
    admin = conn.get_admin()

    await sc.step("list_databases_initial", lambda: admin.list_databases())
    await sc.step("get_server_nodes", lambda: admin.get_server_nodes())

    desc = fluss.DatabaseDescriptor(comment="golden database",
                                    custom_properties={"owner": "golden", "k2": "v2"})
    await sc.step("create_database", lambda: admin.create_database(db, desc))
    await sc.step("create_database_exists", lambda: admin.create_database(db, desc),
                  expect_error="DATABASE_ALREADY_EXIST")
    await sc.step("create_database_ignore_if_exists",
                  lambda: admin.create_database(db, desc, ignore_if_exists=True))
    await sc.step("create_database_no_descriptor", lambda: admin.create_database(db2))
    await sc.step("create_database_invalid_name", lambda: admin.create_database("bad name!"),
                  expect_error="INVALID_DATABASE_EXCEPTION")
    await sc.step("database_exists_true", lambda: admin.database_exists(db))
    await sc.step("database_exists_false", lambda: admin.database_exists("no_such_db"))
    await sc.step("list_databases", lambda: admin.list_databases())
    await sc.step("get_database_info", lambda: admin.get_database_info(db))
    await sc.step("get_database_info_no_descriptor", lambda: admin.get_database_info(db2))
    await sc.step("get_database_info_missing", lambda: admin.get_database_info("no_such_db"),
                  expect_error="DATABASE_NOT_EXIST")

    # A log table with (almost) every type pyfluss can express.
    log_schema = fluss.Schema(pa.schema([
        pa.field("id", pa.int32()),
        pa.field("c_tinyint", pa.int8()),
        pa.field("c_smallint", pa.int16()),
        pa.field("c_bigint", pa.int64()),
        pa.field("c_float", pa.float32()),
        pa.field("c_double", pa.float64()),
        pa.field("c_boolean", pa.bool_()),
        pa.field("c_string", pa.string()),
        pa.field("c_bytes", pa.binary()),
        pa.field("c_binary4", pa.binary(4)),
        pa.field("c_decimal", pa.decimal128(10, 2)),
        pa.field("c_date", pa.date32()),
        pa.field("c_time", pa.time32("ms")),
        pa.field("c_ts", pa.timestamp("us")),
        pa.field("c_ts3", pa.timestamp("ms")),
        pa.field("c_ts_ltz", pa.timestamp("us", tz="UTC")),
        pa.field("c_array", pa.list_(pa.string())),
        pa.field("c_map", pa.map_(pa.string(), pa.int32())),
        pa.field("c_row", pa.struct([("city", pa.string()), ("zip", pa.int32())])),
        pa.field("c_not_null", pa.int64(), nullable=False),
    ]))
    log_desc = fluss.TableDescriptor(
        log_schema, bucket_count=2, comment="golden log table",
        custom_properties={"origin": "golden"})
    pk_schema = fluss.Schema(pa.schema([
        pa.field("id", pa.int32()),
        pa.field("region", pa.string()),
        pa.field("name", pa.string()),
        pa.field("price", pa.decimal128(12, 3)),
        pa.field("updated", pa.timestamp("ms")),
        pa.field("ts_ltz", pa.timestamp("us", tz="UTC")),
        pa.field("tags", pa.list_(pa.int32())),
    ]), primary_keys=["id", "region"])
    pk_desc = fluss.TableDescriptor(
        pk_schema, bucket_count=3, bucket_keys=["id"], comment="golden pk table",
        properties={"table.log.format": "ARROW"}, custom_properties={"k": "v"})
    part_schema = fluss.Schema(pa.schema([
        pa.field("id", pa.int64()),
        pa.field("dt", pa.string()),
        pa.field("v", pa.string()),
    ]))
    part_desc = fluss.TableDescriptor(part_schema, partition_keys=["dt"], bucket_count=1)

    t_log, t_pk, t_part = TP(db, "log_t"), TP(db, "pk_t"), TP(db, "part_t")
    await sc.step("create_table_log", lambda: admin.create_table(t_log, log_desc))
    await sc.step("create_table_pk", lambda: admin.create_table(t_pk, pk_desc))
    await sc.step("create_table_partitioned", lambda: admin.create_table(t_part, part_desc))
    await sc.step("create_table_exists", lambda: admin.create_table(t_log, log_desc),
                  expect_error="TABLE_ALREADY_EXIST")
    await sc.step("create_table_exists_ignore",
                  lambda: admin.create_table(t_log, log_desc, ignore_if_exists=True))
    await sc.step("create_table_missing_db",
                  lambda: admin.create_table(TP("no_such_db", "t"), log_desc),
                  expect_error="DATABASE_NOT_EXIST")
    await sc.step("create_table_invalid_name",
                  lambda: admin.create_table(TP(db, "__bad"), log_desc),
                  expect_error="INVALID_TABLE_EXCEPTION")
    # (A bucket key outside the primary key is rejected by pyfluss itself, code 15,
    # before anything is sent, so it is not part of the wire scenario.)
    await sc.step("get_table_info_log", lambda: admin.get_table_info(t_log))
    await sc.step("get_table_info_pk", lambda: admin.get_table_info(t_pk))
    await sc.step("get_table_info_partitioned", lambda: admin.get_table_info(t_part))
    await sc.step("get_table_info_missing", lambda: admin.get_table_info(TP(db, "nope")),
                  expect_error="TABLE_NOT_EXIST")
    await sc.step("get_table_info_missing_db",
                  lambda: admin.get_table_info(TP("no_such_db", "nope")),
                  expect_error="TABLE_NOT_EXIST")
    await sc.step("table_exists_true", lambda: admin.table_exists(t_pk))
    await sc.step("table_exists_false", lambda: admin.table_exists(TP(db, "nope")))
    await sc.step("list_tables", lambda: admin.list_tables(db))
    await sc.step("list_tables_missing_db", lambda: admin.list_tables("no_such_db"),
                  expect_error="DATABASE_NOT_EXIST")
    await sc.step("create_partition",
                  lambda: admin.create_partition(t_part, {"dt": "2024-01-01"}))
    await sc.step("list_partition_infos", lambda: admin.list_partition_infos(t_part))
    # get_table issues GET_METADATA for the table (table_json + bucket metadata).
    await sc.step("get_table_metadata_pk", lambda: conn.get_table(t_pk))
    await sc.step("get_table_metadata_missing", lambda: conn.get_table(TP(db, "nope")),
                  expect_error="TABLE_NOT_EXIST")
    await sc.step("list_offsets_pk_latest",
                  lambda: admin.list_offsets(t_pk, [0, 1, 2], fluss.OffsetSpec.latest()))
    await sc.step("drop_database_not_empty",
                  lambda: admin.drop_database(db, cascade=False),
                  expect_error="DATABASE_NOT_EMPTY")
    await sc.step("drop_table_log", lambda: admin.drop_table(t_log))
    await sc.step("drop_table_missing", lambda: admin.drop_table(t_log),
                  expect_error="TABLE_NOT_EXIST")
    await sc.step("drop_table_missing_ignore",
                  lambda: admin.drop_table(t_log, ignore_if_not_exists=True))
    await sc.step("drop_database_cascade", lambda: admin.drop_database(db, cascade=True))
    await sc.step("drop_database_missing", lambda: admin.drop_database(db),
                  expect_error="DATABASE_NOT_EXIST")
    await sc.step("drop_database_missing_ignore",
                  lambda: admin.drop_database(db, ignore_if_not_exists=True))
    await sc.step("drop_database_empty_no_cascade",
                  lambda: admin.drop_database(db2, cascade=False))
    await sc.step("list_databases_final", lambda: admin.list_databases())

    rec.set_step("close")
    await conn.close()
    return sc.outcomes


def pb_str(num, text):
    b = text.encode()
    return bytes([num << 3 | 2, len(b)]) + b


def pb_msg(num, body):
    return bytes([num << 3 | 2, len(body)]) + body


def raw_probes(rec):
    """Hand-made requests for edge cases the clients do not produce on demand."""
    import socket
    import struct
    sys.path.insert(0, os.path.join(ROOT, "tests/reference"))
    import probe

    hello = pb_str(1, "fluss-c-golden") + pb_str(2, "0")
    missing = pb_msg(1, pb_str(1, "fluss") + pb_str(2, "no_such_table"))
    cases = [
        # (step, port, api_key, api_version, body, expect_response)
        ("metadata_missing_table_coordinator", PROXY_COORD, 1012, 0, missing, True),
        ("metadata_missing_table_tablet", PROXY_TABLET, 1012, 0, missing, True),
        ("table_info_missing_tablet", PROXY_TABLET, 1007, 0, missing, True),
        ("list_tables_fluss_tablet", PROXY_TABLET, 1008, 0, pb_str(1, "fluss"), True),
        ("list_databases_summary_coordinator", PROXY_COORD, 1003, 0, b"\x08\x01", True),
        ("api_versions_v1_coordinator", PROXY_COORD, 1000, 1, hello, True),
        ("unknown_api_key_9999_coordinator", PROXY_COORD, 9999, 0, b"", False),
        ("create_database_on_tablet", PROXY_TABLET, 1001, 0,
         pb_str(1, "x_on_tablet") + b"\x10\x00", False),
    ]
    for step, port, key, ver, body, _ in cases:
        rec.set_step(step)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            probe.call(sock, 1000, 0, hello)
            frame = struct.pack(">hhi", key, ver, 1) + body
            sock.sendall(struct.pack(">i", len(frame)) + frame)
            sock.settimeout(3)
            try:
                (n,) = struct.unpack(">i", probe.read_exact(sock, 4))
                payload = probe.read_exact(sock, n)
                outcome = "response type %d, %d bytes" % (payload[0], n)
            except socket.timeout:
                outcome = "no response within 3 s"
            except ConnectionError as e:
                outcome = "connection closed (%s)" % e
        print("[golden] %-40s %s" % (step, outcome))


def run(cmd, **kw):
    print("[golden] $ %s" % " ".join(cmd))
    return subprocess.run(cmd, cwd=ROOT, **kw)


def main():
    rec = record.Recorder()
    proxies = record.ProxyThread(rec, [
        ("coordinator", "127.0.0.1", PROXY_COORD, "127.0.0.1", REAL_COORD),
        ("tablet", "127.0.0.1", PROXY_TABLET, "127.0.0.1", REAL_TABLET),
    ])
    env = dict(os.environ,
               REF_COORD_PORT=str(REAL_COORD), REF_TABLET_PORT=str(REAL_TABLET),
               REF_COORD_INTERNAL_PORT=str(REAL_COORD + 100),
               REF_TABLET_INTERNAL_PORT=str(REAL_TABLET + 100),
               REF_ZK_PORT=os.environ.get("GOLDEN_ZK_PORT", "32181"),
               REF_RUN_DIR=RUN_DIR,
               REF_ADVERTISED_HOST="127.0.0.1",
               REF_ADVERTISED_COORD_PORT=str(PROXY_COORD),
               REF_ADVERTISED_TABLET_PORT=str(PROXY_TABLET))
    rc = 0
    proxies.start()
    try:
        if run([os.path.join(ROOT, "tests/reference/start")], env=env).returncode != 0:
            print("[golden] reference did not start", file=sys.stderr)
            return 1

        rec.set_output(os.path.join(OUT, "probe"))
        for label, port in (("coordinator", PROXY_COORD), ("tablet", PROXY_TABLET)):
            rec.set_step("probe_" + label)
            run([sys.executable, os.path.join(ROOT, "tests/reference/probe.py"),
                 "127.0.0.1:%d" % port, "--min-tablets", "1"])

        rec.set_output(os.path.join(OUT, "raw"))
        raw_probes(rec)

        rec.set_output(os.path.join(OUT, "pyfluss"))
        outcomes = asyncio.run(pyfluss_scenario(rec))
        rec.set_step("-")
        with open(os.path.join(OUT, "pyfluss", "scenario.json"), "w") as f:
            json.dump(outcomes, f, indent=1)
            f.write("\n")

        if os.environ.get("FLUSS_GOLDEN_SKIP_JAVA") != "1":
            rec.set_output(os.path.join(OUT, "java"))
            rec.set_step("java_smoke")
            r = run([os.path.join(ROOT, "tests/java/run"), BOOTSTRAP])
            if r.returncode != 0:
                print("[golden] java smoke test failed (rc %d)" % r.returncode, file=sys.stderr)
                rc = 1
        rec.finish()
    except Exception:
        traceback.print_exc()
        rc = 1
    finally:
        run([os.path.join(ROOT, "tests/reference/stop")], env=env)
        proxies.stop()
        rec.finish()
    print("[golden] frames written under %s" % OUT)
    return rc


if __name__ == "__main__":
    sys.exit(main())
