"""A lake table through the Java client 0.9.1 (tests/java JavaLake) against
a flussd with datalake.format=iceberg: its TableInfo shows the injected
`table.datalake.format` and the lake options as `table.datalake.iceberg.*`
(what the Flink connector opens the lake catalog from); rows the Java
client writes (bucketed with Iceberg's bucket transform) are tiered, and
Admin.getLatestLakeSnapshot / getReadableLakeSnapshot / getLakeSnapshot
answer the lake head's snapshot id and bucket offsets, which pyiceberg
reads from the table's own files."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import IS_OURS, REPO, unique

pyiceberg_table = pytest.importorskip("pyiceberg.table")
pytestmark = pytest.mark.skipif(not IS_OURS, reason="starts its own flussd")


def java(bootstrap, *args):
    proc = subprocess.run([str(REPO / "tests" / "java" / "run"), bootstrap, "JavaLake", *args],
                          capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    assert f"JAVA LAKE {args[0].upper()} OK" in out, out[-3000:]
    return out


@pytest.mark.timeout(900)
def test_java_lake_table(start_server, tmp_path):
    wh = tmp_path / "warehouse"
    srv = start_server("-D", "datalake.format=iceberg", "-D", "datalake.iceberg.type=hadoop",
                       "-D", f"datalake.iceberg.warehouse={wh}")
    db = unique("jlake")
    out = java(srv.bootstrap, "create", db)
    assert f"WAREHOUSE {wh}" in out
    out = java(srv.bootstrap, "snapshot", db, "300")
    snap_id = int(next(ln.split()[1] for ln in out.splitlines() if ln.startswith("SNAPSHOT ")))
    offsets = {int(b): int(o) for _, b, o in
               (ln.split() for ln in out.splitlines() if ln.startswith("OFFSET "))}
    tbl = pyiceberg_table.StaticTable.from_metadata(str(wh / db / "events"))
    head = tbl.current_snapshot()
    assert head.snapshot_id == snap_id
    files = json.loads(Path(head.summary["fluss-offsets"][len("file://"):]).read_text())
    assert offsets == {b: o for b, o in enumerate(files["bucket_offsets"]) if o >= 0}
    rows = tbl.scan().to_arrow()
    assert sorted(rows.column("id").to_pylist()) == list(range(300))
    for b in range(3):
        got = tbl.scan(row_filter=f"__bucket == {b}").to_arrow()
        assert set(got.column("__bucket").to_pylist()) <= {b}
        assert got.num_rows == offsets.get(b, 0)
    # the spec is bucket[3](id) and each file's partition value is the
    # Fluss bucket: a lookup by key prunes to the file pyiceberg's own
    # transform names, so it finds the row only if the Java client
    # bucketed it with Iceberg's transform
    for i in range(0, 300, 13):
        assert tbl.scan(row_filter=f"id == {i}").to_arrow().column("id").to_pylist() == [i]
