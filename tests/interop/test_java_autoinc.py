"""Auto-increment columns and lookups with insertIfNotExists through the
Java client (tests/java JavaAutoInc; pyfluss has no insertIfNotExists):
upserts naming their columns get distinct values, an update keeps its
value, insertIfNotExists lookups create rows (name NULL, a new value) and
find them again, the changelog has one +I per row with its value; after
kill -9 and a restart (ours only) old rows keep their values and new ones
never repeat one."""

import re
import subprocess

import pytest

from conftest import REPO


def run_java(server, phase):
    proc = subprocess.run([str(REPO / "tests" / "java" / "run"), server.bootstrap,
                           "JavaAutoInc", phase], capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    uids = {}
    for m in re.finditer(r"^UID (\d+) (\d+)$", proc.stdout, re.M):
        uids[int(m.group(1))] = int(m.group(2))
    return out, uids


def test_java_autoinc_insert_if_not_exists(server):
    out, uids = run_java(server, "create")
    assert "JAVA AUTOINC CREATE OK" in out
    assert set(uids) == set(range(20)) | set(range(100, 110))
    assert len(set(uids.values())) == len(uids)


@pytest.mark.ours_only
@pytest.mark.restarts
def test_java_autoinc_kill9_never_reissues(our_server):
    out, before = run_java(our_server, "create")
    assert "JAVA AUTOINC CREATE OK" in out
    assert our_server.kill9() == -9
    our_server.start()
    out, after = run_java(our_server, "more")
    assert "JAVA AUTOINC MORE OK" in out
    assert {i: after[i] for i in before} == before
    new = [after[i] for i in after if i not in before]
    assert len(new) == 20 and len(set(new)) == 20
    assert min(new) > max(before.values()), (sorted(before.values()), sorted(new))
