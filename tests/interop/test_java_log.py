"""Log tables through the Java client (tests/java JavaLog): ARROW, INDEXED
and COMPACTED log formats written and read back (pyfluss only speaks
ARROW), and a projected scan that the server must prune."""

import subprocess

from conftest import REPO


def run_java(server, *args):
    proc = subprocess.run([str(REPO / "tests" / "java" / "run"), server.bootstrap, "JavaLog", *args],
                          capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def test_java_log_formats(server):
    rc, out = run_java(server, "ARROW,INDEXED,COMPACTED")
    assert rc == 0, out[-6000:]
    for fmt in ("ARROW", "INDEXED", "COMPACTED"):
        assert f"ok: {fmt} 500 rows written and read back" in out, out[-3000:]


def test_java_log_projection(server):
    rc, out = run_java(server, "ARROW", "--project")
    assert rc == 0, out[-6000:]
    assert "ok: ARROW projected 500 rows" in out


def test_java_partitions(server):
    """The Java writer creates missing partitions itself (GET_METADATA 36 →
    CREATE_PARTITION); rows come back per partition; drop removes one."""
    proc = subprocess.run([str(REPO / "tests" / "java" / "run"), server.bootstrap,
                           "JavaPartitions"], capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    assert "JAVA PARTITIONS OK" in out
