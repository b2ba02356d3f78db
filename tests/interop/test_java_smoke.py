"""The Java client (org.apache.fluss:fluss-client from Maven Central) against
the server under test: connect, create a database and a primary-key table,
read its TableInfo back and check it, list, drop (tests/java). The Java client
enforces protobuf required fields and server_type, which pyfluss does not."""

import subprocess

from conftest import REPO


def test_java_client_smoke(server):
    run = REPO / "tests" / "java" / "run"
    proc = subprocess.run([str(run), server.bootstrap], capture_output=True, text=True,
                          timeout=600)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"Java smoke test failed ({proc.returncode}):\n{output[-6000:]}"
    assert "JAVA SMOKE OK" in output, output[-3000:]
