"""flussd's own configuration: a Fluss-style server.yaml (nested keys and
a listener list) plus -D overrides, read back through pyfluss; SIGINT stops
it cleanly like SIGTERM; kv.rocksdb.compression.per.level refused when
wrong and reaching the buckets' RocksDB when right."""

import os
import signal
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

import fluss
from conftest import IS_OURS, REPO, OurServer, connect, free_ports, unique, wait_ports
from logutil import new_pk_table

pytestmark = pytest.mark.skipif(not IS_OURS, reason="starts its own flussd")


async def test_server_yaml_and_overrides(tmp_path):
    cs, ts = free_ports(2)
    (tmp_path / "server.yaml").write_text(
        "bind:\n"
        f"  listeners: [\"FLUSS://127.0.0.1:{cs}\"]\n"
        f"tablet-server.bind.listeners: FLUSS://127.0.0.1:{ts}\n"
        "default.bucket.number: 3\n"
        "default.replication.factor: 1\n"
        f"data.dir: {tmp_path / 'from-yaml'}\n")
    binary = os.environ.get("FLUSSD", REPO / "build" / "flussd")
    proc = subprocess.Popen([str(binary), "--config", str(tmp_path / "server.yaml"),
                             "--data-dir", str(tmp_path / "data"),
                             "-D", "max.bucket.num=5"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_ports("127.0.0.1", [cs, ts], proc=proc)
        conn = await connect(f"127.0.0.1:{cs}")
        admin = conn.get_admin()
        schema = fluss.Schema(pa.schema([("id", pa.int32())]))
        path = fluss.TablePath("fluss", unique("cfg"))
        await admin.create_table(path, fluss.TableDescriptor(schema))
        info = await admin.get_table_info(path)
        assert info.num_buckets == 3  # default.bucket.number from the YAML
        with pytest.raises(fluss.FlussError) as ei:  # max.bucket.num from -D
            await admin.create_table(fluss.TablePath("fluss", unique("cfg")),
                                     fluss.TableDescriptor(schema, bucket_count=6))
        assert ei.value.error_code == 49
        nodes = await admin.get_server_nodes()
        assert sorted((n.uid, n.port) for n in nodes) == [("cs-0", cs), ("ts-0", ts)]
        await conn.close()
        # --data-dir wins over data.dir in the YAML
        assert (tmp_path / "data" / "coordinator" / "metadata.json").exists()
        assert not (tmp_path / "from-yaml").exists()
    finally:
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=10)
        err = proc.stderr.read().decode(errors="replace")
    assert rc == 0, err
    assert "stopped" in err


def test_bad_config_is_refused(tmp_path):
    (tmp_path / "bad.yaml").write_text("bind.listeners: not-a-listener\n")
    proc = subprocess.run([str(REPO / "build" / "flussd"), "--config", str(tmp_path / "bad.yaml"),
                           "--data-dir", str(tmp_path / "d")],
                          capture_output=True, text=True, timeout=10)
    assert proc.returncode == 1
    assert "bind.listeners" in proc.stderr
    proc = subprocess.run([str(REPO / "build" / "flussd"), "--frobnicate"],
                          capture_output=True, text=True, timeout=10)
    assert proc.returncode == 2 and "usage" in proc.stderr



async def test_kv_compression_per_level(tmp_path):
    """kv.rocksdb.compression.per.level (a Fluss key): an unknown type stops
    flussd with the key and the item named; a good list reaches the PK
    buckets' RocksDB (its OPTIONS file), with rows written and read back."""
    binary = Path(os.environ.get("FLUSSD", REPO / "build" / "flussd"))
    proc = subprocess.run([str(binary), "--data-dir", str(tmp_path / "bad"),
                           "-Dkv.rocksdb.compression.per.level=LZ4,GZIP"],
                          capture_output=True, text=True, timeout=10)
    assert proc.returncode == 1
    assert "kv.rocksdb.compression.per.level" in proc.stderr and "GZIP" in proc.stderr
    (tmp_path / "data").mkdir()
    srv = OurServer(binary, tmp_path / "data", tmp_path,
                    ["-Dkv.rocksdb.compression.per.level=NO, no,zstd"])
    srv.start()
    try:
        conn = await connect(srv.bootstrap)
        schema = pa.schema([pa.field("id", pa.int32()), pa.field("v", pa.string())])
        _, _, table = await new_pk_table(conn, "cmp", "t", schema)
        w = table.new_upsert().create_writer()
        for i in range(100):
            w.upsert({"id": i, "v": f"v{i}"})
        await w.flush()
        lk = table.new_lookup().create_lookuper()
        assert (await lk.lookup({"id": 42}))["v"] == "v42"
        await conn.close()
        opts = [p for p in (tmp_path / "data").rglob("OPTIONS-*") if "kv-0" in str(p)]
        assert opts, "no RocksDB OPTIONS file under the bucket"
        text = opts[-1].read_text()
        assert "compression_per_level=kNoCompression:kNoCompression:kZSTD" in text, text[:2000]
    finally:
        assert srv.stop() == 0, srv.stderr_tail()
