"""Fixtures for the cluster tests (tests/cluster): a cluster of our server
processes per test (scripts/cluster: ZooKeeper, a coordinator, tablet
servers), which the test may kill, stop and start one process at a time.
The interop helpers (tests/interop) are on the path."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "interop"))

import importlib.util  # noqa: E402

# the interop suite's conftest under a name of its own ("conftest" is this
# file); the helpers its modules import from "conftest" are re-exported
_spec = importlib.util.spec_from_file_location("interop_conftest",
                                               REPO / "tests" / "interop" / "conftest.py")
interop = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(interop)
SANITIZER_MARKERS, free_ports, wait_ports, _free_run = (
    interop.SANITIZER_MARKERS, interop.free_ports, interop.wait_ports, interop._free_run)
unique, connect = interop.unique, interop.connect
IS_CLUSTER = False  # these tests address what they need themselves

FLUSSD = Path(os.environ.get("FLUSSD", REPO / "build" / "flussd"))


class Cluster:
    """scripts/cluster's processes, plus the ones a test starts itself
    (another coordinator, a tablet server started again) on the same
    ZooKeeper with the same settings."""

    def __init__(self, base: Path, tablets: int = 3, rf: int = 1, extra=(), session="4s",
                 racks=None):
        self.dir = base / "cluster"
        self.host = "127.0.0.1"
        self.tablets = tablets
        self.coordinator_port, self.cs_internal = free_ports(2)
        self.tablet_port = _free_run(2 * tablets, avoid=(self.coordinator_port, self.cs_internal))
        self.extra = list(extra)
        self.rf = rf
        self.env = {**os.environ, "FLUSSD": str(FLUSSD), "CLUSTER_TABLETS": str(tablets),
                    "CLUSTER_RF": str(rf), "CLUSTER_ZK_PORT": "0",
                    "CLUSTER_CS_PORTS": f"{self.coordinator_port},{self.cs_internal}",
                    "CLUSTER_TS_PORTS": f"{self.tablet_port},{self.tablet_port + tablets}",
                    "CLUSTER_ARGS": " ".join(self.extra), "CLUSTER_SESSION": session,
                    # tablet-server.rack per tablet server (None: no rack)
                    "CLUSTER_RACKS": " ".join(r or "-" for r in (racks or []))}
        self.racks = list(racks or [])
        self.session = session
        self.procs = {}  # processes this object started (name -> Popen)

    def start(self):
        subprocess.run([str(REPO / "scripts" / "cluster"), "start", str(self.dir)],
                       env=self.env, check=True, timeout=120)

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.coordinator_port}"

    @property
    def zk_address(self) -> str:
        return f"127.0.0.1:{(self.dir / 'zk' / 'zk.port').read_text().strip()}"

    def common_args(self):
        args = ["-D", f"zookeeper.address={self.zk_address}",
                "-D", f"zookeeper.client.session-timeout={self.session}",
                "-D", "internal.listener.name=INTERNAL",
                "-D", f"remote.data.dir={self.dir / 'remote'}",
                "-D", f"default.replication.factor={self.rf}"]
        for a in self.extra:
            args.append(a)
        return args

    def pid(self, name: str) -> int:
        if name in self.procs:
            return self.procs[name].pid
        return int((self.dir / f"{name}.pid").read_text())

    def alive(self, name: str) -> bool:
        try:
            os.kill(self.pid(name), 0)
            return True
        except (OSError, ValueError, FileNotFoundError):
            return False

    def kill9(self, name: str):
        os.kill(self.pid(name), signal.SIGKILL)
        self._reap(name)

    def terminate(self, name: str, timeout: float = 15):
        os.kill(self.pid(name), signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while self.alive(name) and time.monotonic() < deadline:
            self._reap(name)
            time.sleep(0.05)
        assert not self.alive(name), f"{name} did not stop on SIGTERM"
        if name in self.procs:
            assert self.procs[name].wait() == 0, f"{name} exited {self.procs[name].returncode}"

    def _reap(self, name):
        p = self.procs.get(name)
        if p:
            try:
                p.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                pass

    def _spawn(self, name, args, wait_port):
        log = open(self.dir / f"{name}.log", "ab")
        p = subprocess.Popen([str(FLUSSD)] + args, stdout=log, stderr=log,
                             stdin=subprocess.DEVNULL)
        self.procs[name] = p
        (self.dir / f"{name}.pid").write_text(str(p.pid))
        if wait_port:
            wait_ports(self.host, [wait_port], proc=p, timeout=30)
        return p

    def start_tablet(self, i: int):
        """Tablet server i again (same id, ports and data) after it stopped."""
        name = f"tablet-{i}"
        args = ["tablet", "--data-dir", str(self.dir / f"{name}-data"), "-D",
                f"tablet-server.id={i}", "-D",
                f"bind.listeners=FLUSS://{self.host}:{self.tablet_port + i},"
                f"INTERNAL://{self.host}:{self.tablet_port + self.tablets + i}"]
        if i < len(self.racks) and self.racks[i]:
            args += ["-D", f"tablet-server.rack={self.racks[i]}"]
        return self._spawn(name, args + self.common_args(), self.tablet_port + i)

    def start_coordinator(self, name: str, port: int, internal: int, wait=True):
        args = ["coordinator", "--data-dir", str(self.dir / f"{name}-data"), "-D",
                f"bind.listeners=FLUSS://{self.host}:{port},INTERNAL://{self.host}:{internal}"]
        return self._spawn(name, args + self.common_args(), port if wait else None)

    def log(self, name: str) -> str:
        return (self.dir / f"{name}.log").read_text(errors="replace")

    def stop(self):
        for name, p in self.procs.items():
            if p.poll() is None:
                p.terminate()
        for p in self.procs.values():
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        subprocess.run([str(REPO / "scripts" / "cluster"), "stop", str(self.dir)], env=self.env,
                       check=False, timeout=120)
        problems = []
        for log in sorted(self.dir.glob("*.log")):
            text = log.read_text(errors="replace")
            if any(m in text for m in SANITIZER_MARKERS):
                problems.append(f"{log.name}:\n{text[-6000:]}")
        assert not problems, "\n\n".join(problems)


@pytest.fixture
def cluster(tmp_path):
    made = []

    def make(**kw):
        c = Cluster(tmp_path / f"c{len(made)}", **kw)
        made.append(c)
        c.start()
        return c

    yield make
    for c in made:
        c.stop()
