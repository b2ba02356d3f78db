"""Producer offsets through the Java client's Admin (tests/java
JavaProducerOffsets), the APIs the Flink sink's undo recovery uses:
register -> get returns the same offsets (partitioned buckets and an
unknown table id included), a second register reports ALREADY_EXISTS and
changes nothing, unknown producers read as null, invalid ids are refused,
racing registers create once, a dropped table keeps its offsets, delete ->
get null. Runs against the reference too. Ours only: a registration
survives kill -9 and a restart of flussd."""

import subprocess
import time

import pytest

from conftest import REPO


def run_java(server, *args):
    proc = subprocess.run([str(REPO / "tests" / "java" / "run"), server.bootstrap,
                           "JavaProducerOffsets", *args], capture_output=True, text=True,
                          timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    return out


def test_java_producer_offsets(server):
    assert "JAVA PRODUCER OFFSETS OK" in run_java(server, "all")


@pytest.mark.ours_only
@pytest.mark.restarts
def test_java_producer_offsets_survive_kill9(our_server):
    producer = f"java-po-kill9-{int(time.time() * 1000)}"
    assert "JAVA PRODUCER OFFSETS REGISTERED" in run_java(our_server, "register", producer)
    names = [f.name for f in (our_server.data_dir / "coordinator" / "producer-offsets").iterdir()]
    assert f"{producer}.json" in names, names
    assert our_server.kill9() == -9
    our_server.start()
    assert "JAVA PRODUCER OFFSETS VERIFIED" in run_java(our_server, "verify", producer)
    assert not (our_server.data_dir / "coordinator" / "producer-offsets" /
                f"{producer}.json").exists()
