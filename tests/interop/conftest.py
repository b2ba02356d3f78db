"""Shared fixtures for the fluss-c interop suite (pyfluss==1.0.0 from PyPI).

Environment:
  FLUSS_SERVER    = ours (default) | reference
  FLUSS_BOOTSTRAP = host:port of the coordinator (required for `reference`)
  FLUSSD          = path of our server binary (default <repo>/build/flussd)
  FLUSSD_ARGS     = extra flussd arguments for the session server, split on
                    spaces (e.g. "-D netty.server.num-network-threads=4")

With `ours` the session fixture starts
  flussd --data-dir <tmp> -D bind.listeners=FLUSS://127.0.0.1:<p1>
         -D tablet-server.bind.listeners=FLUSS://127.0.0.1:<p2>
waits until both ports accept TCP, and stops it by PID (SIGTERM, then
SIGKILL).  With `reference` nothing is started: the suite connects to
FLUSS_BOOTSTRAP.
"""

import os
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

import fluss

REPO = Path(__file__).resolve().parents[2]
SERVER_KIND = os.environ.get("FLUSS_SERVER", "ours").strip().lower() or "ours"
if SERVER_KIND not in ("ours", "reference", "cluster"):
    raise pytest.UsageError(
        f"FLUSS_SERVER must be 'ours', 'cluster' or 'reference', not {SERVER_KIND!r}")
# cluster: our servers as a cluster of processes (scripts/cluster: ZooKeeper,
# a coordinator, FLUSS_CLUSTER_TABLETS tablet servers, replication factor
# FLUSS_CLUSTER_RF); our behaviour is expected, but no test controls a
# single process (those that must are skipped)
IS_CLUSTER = SERVER_KIND == "cluster"
IS_OURS = SERVER_KIND in ("ours", "cluster")
IS_REFERENCE = SERVER_KIND == "reference"
# what a table created without table.replication.factor gets
DEFAULT_RF = os.environ.get("FLUSS_CLUSTER_RF", "3") if IS_CLUSTER else "1"

START_TIMEOUT_S = 10.0

# Problems seen in our server's process (exit codes, sanitizer reports);
# any of them fails the whole run.
SERVER_PROBLEMS = []
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "WARNING: ThreadSanitizer")


def pytest_configure(config):
    config.addinivalue_line("markers", "ours_only: test needs FLUSS_SERVER=ours")
    config.addinivalue_line(
        "markers", "restarts: kills or restarts its server; the network-loop count does not "
        "change what it proves, so make test-interop-loops leaves it to the ASan pass")


def pytest_sessionfinish(session, exitstatus):
    if SERVER_PROBLEMS:
        print("\n\nflussd problems:\n" + "\n\n".join(SERVER_PROBLEMS))
        session.exitstatus = 1


def pytest_report_header(config):
    return f"fluss interop: FLUSS_SERVER={SERVER_KIND} pyfluss={fluss.__version__}"


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def unique(prefix: str) -> str:
    """A database/table name unique per call (suite can rerun on one server)."""
    return f"it_{prefix}_{uuid.uuid4().hex[:10]}"


def now_ms() -> int:
    return int(time.time() * 1000)


def assert_recent_ms(ts: int, what: str = "time", slack_ms: int = 60_000):
    """`ts` is epoch milliseconds within a minute of now."""
    n = now_ms()
    assert isinstance(ts, int), f"{what} is not an int: {ts!r}"
    assert abs(n - ts) <= slack_ms, f"{what}={ts} is not within {slack_ms} ms of now ({n})"


def server_message(err: "fluss.FlussError") -> str:
    """The server's error_message. pyfluss 1.0.0 puts it verbatim into
    FlussError.message (str(err) is 'FlussError(code=N): <message>')."""
    return err.message or ""


async def expect_error(code: int, awaitable):
    """Await `awaitable`, require a FlussError with exactly `code` and a
    non-empty message. Returns the error."""
    with pytest.raises(fluss.FlussError) as ei:
        await awaitable
    err = ei.value
    assert err.error_code == code, (
        f"expected error code {code}, got {err.error_code}: {err.message}")
    assert err.message and err.message.strip(), "error message is empty"
    assert server_message(err).strip(), f"server error message is empty: {err.message!r}"
    return err


def wait_ports(host, ports, proc=None, timeout=START_TIMEOUT_S, err_path=None):
    deadline = time.monotonic() + timeout
    pending = list(ports)
    while pending:
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"flussd exited with code {proc.returncode} during start-up; "
                        f"stderr:\n{_read_tail(err_path)}", pytrace=False)
        port = pending[0]
        try:
            with socket.create_connection((host, port), timeout=0.5):
                pending.pop(0)
                continue
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"flussd did not accept TCP on {host}:{pending} within "
                        f"{timeout}s; stderr:\n{_read_tail(err_path)}", pytrace=False)
        time.sleep(0.05)


def _thread_report(pid):
    """What each thread of a hung process is doing: gdb's backtraces where
    gdb is installed, else each thread's name, state and kernel wait
    channel from /proc."""
    import shutil
    if shutil.which("gdb"):
        try:
            r = subprocess.run(["gdb", "-batch", "-nx", "-p", str(pid), "-ex",
                                "thread apply all bt 30"], capture_output=True,
                               text=True, timeout=60)
            if "Thread" in r.stdout:
                return r.stdout[-30000:]
        except (OSError, subprocess.TimeoutExpired):
            pass
    lines = []
    try:
        for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
            base = f"/proc/{pid}/task/{tid}"
            def rd(name):
                try:
                    return Path(base, name).read_text(errors="replace").strip()
                except OSError:
                    return "?"
            state = rd("stat").rsplit(")", 1)[-1].split()[:1]
            lines.append(f"{tid} {rd('comm')} {state} wchan={rd('wchan')}")
    except OSError as e:
        lines.append(f"<no /proc: {e}>")
    return "\n".join(lines)


def _read_tail(path, limit=8000):
    if not path:
        return "<no stderr file>"
    try:
        data = Path(path).read_text(errors="replace")
    except OSError as e:
        return f"<cannot read {path}: {e}>"
    return data[-limit:]


def free_ports(n: int):
    socks, ports = [], []
    try:
        while len(ports) < n:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


# ---------------------------------------------------------------------------
# the server under test
# ---------------------------------------------------------------------------

class OurServer:
    """Our flussd, started and stopped by PID."""

    def __init__(self, binary: Path, data_dir: Path, log_dir: Path, extra_args=(),
                 tablet_servers: int = 1, env=None, name: str = "flussd"):
        self.binary = binary
        self.env = env
        self.name = name
        self.data_dir = data_dir
        self.log_dir = log_dir
        self.extra_args = list(extra_args)
        self.tablet_servers = tablet_servers
        self.host = "127.0.0.1"
        self.coordinator_port, self.tablet_port = free_ports(2)
        if tablet_servers > 1:
            self.tablet_port = 0  # each tablet server binds a port of its own
        self.proc = None
        self.starts = 0
        self.err_path = None

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.coordinator_port}"

    @property
    def tablet_address(self):
        return self.host, self.tablet_port

    def start(self):
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.starts += 1
        self.err_path = self.log_dir / f"{self.name}.{self.starts}.stderr"
        out_path = self.log_dir / f"{self.name}.{self.starts}.stdout"
        cmd = [str(self.binary), "--data-dir", str(self.data_dir),
               "-D", f"bind.listeners=FLUSS://{self.host}:{self.coordinator_port}",
               "-D", f"tablet-server.bind.listeners=FLUSS://{self.host}:{self.tablet_port}"]
        if self.tablet_servers > 1:
            cmd += ["--tablet-servers", str(self.tablet_servers)]
        cmd += self.extra_args
        with open(out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                         env={**os.environ, **self.env} if self.env else None)
        try:
            wait_ports(self.host, [p for p in (self.coordinator_port, self.tablet_port) if p],
                       proc=self.proc, err_path=self.err_path)
        except BaseException:
            self.kill9()
            raise

    def _signal_and_wait(self, sig, timeout):
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        os.kill(self.proc.pid, sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout: float = 10.0):
        """SIGTERM, then SIGKILL if it does not exit in time. Returns exit code.
        A clean stop must exit 0 and leave no sanitizer report on stderr
        (the suite also runs against the ASan+UBSan build): problems are
        collected and fail the session (pytest_sessionfinish)."""
        rc = self._signal_and_wait(signal.SIGTERM, timeout)
        if rc is None and self.proc is not None and self.proc.poll() is None:
            where = _thread_report(self.proc.pid)
            rc = self._signal_and_wait(signal.SIGKILL, 10.0)
            SERVER_PROBLEMS.append(f"flussd did not exit within {timeout}s of SIGTERM; "
                                   f"its threads:\n{where}\nstderr:\n{self.stderr_tail()}")
        elif rc not in (0, None):
            SERVER_PROBLEMS.append(f"flussd exited with {rc} after SIGTERM; "
                                   f"stderr:\n{self.stderr_tail()}")
        self.check_sanitizers()
        return rc

    def check_sanitizers(self):
        text = _read_tail(self.err_path, limit=200_000)
        for marker in SANITIZER_MARKERS:
            if marker in text:
                SERVER_PROBLEMS.append(f"sanitizer report in {self.err_path}:\n"
                                       f"{text[max(0, text.index(marker) - 200):][:6000]}")
                break

    def kill9(self):
        rc = self._signal_and_wait(signal.SIGKILL, 10.0)
        self.check_sanitizers()
        return rc

    def restart(self, hard: bool = False):
        """Stop (SIGTERM, or SIGKILL when hard) and start again on the same
        data dir and ports."""
        if hard:
            self.kill9()
        else:
            self.stop()
        self.start()

    def is_running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stderr_tail(self):
        return _read_tail(self.err_path)


class ReferenceServer:
    def __init__(self, bootstrap: str):
        self.bootstrap = bootstrap
        host, _, port = bootstrap.rpartition(":")
        self.host = host
        self.coordinator_port = int(port)
        self.tablet_port = None  # learned from get_server_nodes when needed

    def is_running(self) -> bool:
        return True


class ClusterServers:
    """A cluster of our server processes (scripts/cluster), stopped by its
    PIDs at the end of the session; any sanitizer report in a log fails the
    run."""

    def __init__(self, binary: Path, base: Path, extra_args):
        self.base = base
        self.dir = base / "cluster"
        self.host = "127.0.0.1"
        self.tablets = int(os.environ.get("FLUSS_CLUSTER_TABLETS", "3"))
        self.coordinator_port, cs_internal = free_ports(2)
        # tablet server i listens on tablet_port + i, internally on
        # tablet_port + tablets + i: one run of free ports
        self.tablet_port = _free_run(2 * self.tablets,
                                     avoid=(self.coordinator_port, cs_internal))
        ts_internal = self.tablet_port + self.tablets
        self.env = {**os.environ, "FLUSSD": str(binary),
                    "CLUSTER_TABLETS": str(self.tablets),
                    "CLUSTER_RF": os.environ.get("FLUSS_CLUSTER_RF", "3"),
                    "CLUSTER_ZK_PORT": "0",
                    "CLUSTER_CS_PORTS": f"{self.coordinator_port},{cs_internal}",
                    "CLUSTER_TS_PORTS": f"{self.tablet_port},{ts_internal}",
                    "CLUSTER_ARGS": " ".join(extra_args)}

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.coordinator_port}"

    @property
    def tablet_address(self):
        return self.host, self.tablet_port

    def start(self):
        subprocess.run([str(REPO / "scripts" / "cluster"), "start", str(self.dir)], env=self.env,
                       check=True, timeout=120)

    def stop(self):
        subprocess.run([str(REPO / "scripts" / "cluster"), "stop", str(self.dir)], env=self.env,
                       check=False, timeout=120)
        for log in sorted(self.dir.glob("*.log")):
            text = log.read_text(errors="replace")
            if any(m in text for m in SANITIZER_MARKERS):
                SERVER_PROBLEMS.append(f"{log.name}:\n{text[-8000:]}")

    def is_running(self) -> bool:
        return True

    # what a test does to a single process: not in a cluster
    def _single(self, *args, **kwargs):
        pytest.skip("needs control of a single flussd process (FLUSS_SERVER=ours)")

    restart = kill9 = _single

    @property
    def data_dir(self):
        self._single()


def _free_run(n: int, avoid=()) -> int:
    """The first of n consecutive free loopback ports."""
    for _ in range(200):
        first = free_ports(1)[0]
        if first + n >= 65535 or any(first <= a < first + n for a in avoid):
            continue
        ok = True
        for p in range(first + 1, first + n):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return first
    raise RuntimeError("no run of free ports")


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    if IS_CLUSTER:
        binary = Path(os.environ.get("FLUSSD", REPO / "build" / "flussd"))
        srv = ClusterServers(binary, tmp_path_factory.mktemp("cluster"),
                             os.environ.get("FLUSSD_ARGS", "").split())
        srv.start()
        try:
            yield srv
        finally:
            srv.stop()
        return
    if IS_REFERENCE:
        bootstrap = os.environ.get("FLUSS_BOOTSTRAP")
        if not bootstrap:
            pytest.fail("FLUSS_SERVER=reference needs FLUSS_BOOTSTRAP=host:port", pytrace=False)
        yield ReferenceServer(bootstrap)
        return

    binary = Path(os.environ.get("FLUSSD", REPO / "build" / "flussd"))
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.fail(f"server binary {binary} not found or not executable "
                    f"(build it, or set FLUSSD=...)", pytrace=False)
    base = tmp_path_factory.mktemp("flussd")
    data_dir = base / "data"
    data_dir.mkdir()
    srv = OurServer(binary, data_dir, base, os.environ.get("FLUSSD_ARGS", "").split())
    srv.start()
    try:
        yield srv
    finally:
        # A clean SIGTERM shutdown must exit 0 (checked in stop(), reported
        # at session end rather than against an unrelated test).
        srv.stop()


@pytest.fixture
def start_server(tmp_path):
    """flussd processes of the test's own (FLUSS_SERVER=ours only):
    start(*flussd_args, tablet_servers=1, env=None) gives a started OurServer in a fresh
    data dir; each still running after the test is stopped and must exit 0
    (one the test killed on purpose is left as it is)."""
    if not IS_OURS or IS_CLUSTER:
        pytest.skip("needs FLUSS_SERVER=ours (the test starts its own flussd)")
    started = []

    def start(*args, tablet_servers=1, env=None):
        binary = Path(os.environ.get("FLUSSD", REPO / "build" / "flussd"))
        base = tmp_path / f"srv{len(started)}"
        (base / "data").mkdir(parents=True)
        srv = OurServer(binary, base / "data", base, list(args), tablet_servers=tablet_servers,
                        env=env)
        srv.start()
        started.append(srv)
        return srv

    yield start
    for srv in started:
        if srv.is_running():
            assert srv.stop() == 0, srv.stderr_tail()


@pytest.fixture
def our_server(server):
    """The session server when it is ours (tests using it are skipped
    against the reference)."""
    if not IS_OURS or IS_CLUSTER:
        pytest.skip("needs FLUSS_SERVER=ours (the suite must control the process)")
    if not server.is_running():
        server.start()
    return server


def make_config(bootstrap: str) -> "fluss.Config":
    return fluss.Config({"bootstrap.servers": bootstrap})


async def connect(bootstrap: str) -> "fluss.FlussConnection":
    return await fluss.FlussConnection.create(make_config(bootstrap))


@pytest.fixture
async def conn(server):
    c = await connect(server.bootstrap)
    try:
        yield c
    finally:
        await c.close()


@pytest.fixture
async def admin(conn):
    return conn.get_admin()


@pytest.fixture
async def db(admin):
    """A fresh database, dropped (cascade) after the test."""
    name = unique("db")
    await admin.create_database(name, ignore_if_exists=False)
    try:
        yield name
    finally:
        try:
            await admin.drop_database(name, ignore_if_not_exists=True, cascade=True)
        except Exception:  # server may have been restarted/killed by the test
            pass
