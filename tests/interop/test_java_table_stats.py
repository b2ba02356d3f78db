"""Admin.getTableStats through the Java client (tests/java JavaTableStats),
what fluss-flink's batch COUNT(*) pushdown asks: exact row counts of a
primary-key table (upserts, updates, deletes of present and missing keys),
of a partitioned one and of a log table; a WAL-image table refused
(InvalidTableException); no lake snapshot (LakeTableSnapshotNotExist).
Against ours the counts must also hold after a clean restart and after a
kill -9 (the kv stores replay their changelogs), with writes in between.
"""

import subprocess

import pytest

from conftest import IS_OURS, REPO, unique


def java(server, *args):
    proc = subprocess.run([str(REPO / "tests" / "java" / "run"), server.bootstrap,
                           "JavaTableStats", *args], capture_output=True, text=True,
                          timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    assert f"JAVA TABLE STATS {args[0].upper()} OK" in out, out[-3000:]
    return out


@pytest.mark.timeout(900)
@pytest.mark.restarts
def test_java_table_stats_across_restarts(server):
    db = unique("jstats")
    java(server, "write", db)
    if IS_OURS:
        server.restart()
    java(server, "check", db, "160", "45", "123")
    java(server, "more", db)
    if IS_OURS:
        server.restart(hard=True)
    java(server, "check", db, "165", "45", "130")
