#!/usr/bin/env python3
"""Connection set-up with authentication: flussd against the reference
Fluss server (0.9.1, its distribution's JVM options) in the same run, as
interleaved rounds (ours, reference, ours, ...), and rewrites the "auth"
section of BENCHMARKS.md.

Each round, for each mode, bench_connect (libfluss's connection code, one
connection at a time) opens N connections: connect, API_VERSIONS and
  plaintext       no authentication (ours: a PLAINTEXT server; the
                  reference: its PLAINTEXT internal listener)
  PLAIN           SASL/PLAIN (both)
  SCRAM-SHA-256   SCRAM, 4096 iterations (ours only: Fluss has none)
The servers' CPU time per connection comes from /proc (utime + stime of
the coordinator process over the run); connections/s is the client's view
(SCRAM's client side runs PBKDF2 each time, so its rate is client-bound:
the server's cost is the CPU column).

    bench/run_auth.py [--rounds 6] [--n 2000]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from benchmarks_md import write_section  # noqa: E402

JAAS = ('org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required '
        'user_admin="admin-pass";')
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / TICK


def wait_port(host, port, timeout=30):
    import socket
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{host}:{port} did not open")


def start_ours(tmp, port, sasl):
    data = Path(tmp) / f"ours{port}"
    args = [str(REPO / "build/flussd"), "--data-dir", str(data),
            "-D", f"bind.listeners=FLUSS://127.0.0.1:{port}",
            "-D", f"tablet-server.bind.listeners=FLUSS://127.0.0.1:{port + 1}"]
    if sasl:
        args += ["-D", "security.protocol.map=FLUSS:SASL",
                 "-D", "security.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256",
                 "-D", f"security.sasl.plain.jaas.config={JAAS}"]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port("127.0.0.1", port)
    return p


def bench(addr, mode, n, user=None, pw=None):
    cmd = [str(REPO / "build/bench_connect"), addr, mode, str(n)]
    if user:
        cmd += [user, pw]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=600).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--n", type=int, default=2000)
    a = ap.parse_args()
    subprocess.run(["make", "-s", "build"], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", "build", "--target", "bench_connect"], cwd=REPO,
                   check=True, stdout=subprocess.DEVNULL)
    tmp = tempfile.mkdtemp()
    procs = []
    ref_started = False
    try:
        ours_sasl = start_ours(tmp, 29123, True)
        ours_plain = start_ours(tmp, 29223, False)
        procs += [ours_sasl, ours_plain]
        env = dict(os.environ, FLUSS_BOOTSTRAP="127.0.0.1:29123", FLUSS_SASL_USERNAME="admin",
                   FLUSS_SASL_PASSWORD="admin-pass", FLUSS_NEW_PASSWORD="scram-pass")
        subprocess.run([str(REPO / "build/fluss"), "user", "add", "bob", "--iterations", "4096"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        renv = dict(os.environ, REF_JVM_PROFILE="dist", REF_HEAP="default",
                    PYTHON=str(REPO / "tests/interop/saslwire.py"),
                    SASL_PROBE_USER="admin", SASL_PROBE_PASSWORD="admin-pass",
                    REF_EXTRA_CONFIG="security.protocol.map: CLIENT:SASL, INTERNAL:PLAINTEXT\n"
                                     "security.sasl.enabled.mechanisms: PLAIN\n"
                                     f"security.sasl.plain.jaas.config: {JAAS}\n")
        subprocess.run([str(REPO / "tests/reference/start")], env=renv, check=True,
                       stdout=subprocess.DEVNULL)
        ref_started = True
        ref_pid = int((REPO / "tests/reference/.run/coordinator.pid").read_text())
        runs = {  # (server, mode) -> (pid, addr, user, pw)
            ("ours", "plaintext"): (ours_plain.pid, "127.0.0.1:29223", None, None),
            ("ref", "plaintext"): (ref_pid, "127.0.0.1:19223", None, None),
            ("ours", "PLAIN"): (ours_sasl.pid, "127.0.0.1:29123", "admin", "admin-pass"),
            ("ref", "PLAIN"): (ref_pid, "127.0.0.1:19123", "admin", "admin-pass"),
            ("ours", "SCRAM-SHA-256"): (ours_sasl.pid, "127.0.0.1:29123", "bob", "scram-pass"),
        }
        res = {k: [] for k in runs}
        # warm-up (JIT, caches) on both sides, not counted
        for (srv, mode), (pid, addr, u, pw) in runs.items():
            bench(addr, "plaintext" if mode == "plaintext" else mode, max(200, a.n // 5), u, pw)
        for r in range(a.rounds):
            for mode in ("plaintext", "PLAIN", "SCRAM-SHA-256"):
                for srv in ("ours", "ref"):
                    if (srv, mode) not in runs:
                        continue
                    pid, addr, u, pw = runs[(srv, mode)]
                    c0 = cpu_s(pid)
                    j = bench(addr, mode, a.n, u, pw)
                    j["server_cpu_us"] = (cpu_s(pid) - c0) * 1e6 / a.n
                    res[(srv, mode)].append(j)
                    print(srv, mode, r, json.dumps(j), flush=True)
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=20)
        if ref_started:
            subprocess.run([str(REPO / "tests/reference/stop")], stdout=subprocess.DEVNULL)
        shutil.rmtree(tmp, ignore_errors=True)

    def med(k, f):
        return statistics.median(x[f] for x in res[k])

    def spread(k, f):
        v = [x[f] for x in res[k]]
        return f"{min(v):.0f}–{max(v):.0f}"

    rows = []
    for mode in ("plaintext", "PLAIN", "SCRAM-SHA-256"):
        o = ("ours", mode)
        r = ("ref", mode)
        if r in res:
            ratios = [x["conns_per_s"] / y["conns_per_s"] for x, y in zip(res[o], res[r])]
            cpu_ratios = [y["server_cpu_us"] / max(x["server_cpu_us"], 0.01)
                          for x, y in zip(res[o], res[r])]
            rows.append(f"| {mode} | {med(o, 'conns_per_s'):.0f} ({spread(o, 'conns_per_s')}) | "
                        f"{med(r, 'conns_per_s'):.0f} ({spread(r, 'conns_per_s')}) | "
                        f"{statistics.median(ratios):.2f}× ({min(ratios):.2f}–{max(ratios):.2f}) | "
                        f"{med(o, 'server_cpu_us'):.0f} | {med(r, 'server_cpu_us'):.0f} | "
                        f"{statistics.median(cpu_ratios):.1f}× |")
        else:
            rows.append(f"| {mode} | {med(o, 'conns_per_s'):.0f} ({spread(o, 'conns_per_s')}) | "
                        f"— (Fluss has no SCRAM) | — | {med(o, 'server_cpu_us'):.0f} | — | — |")
    text = f"""## auth: connection set-up with SASL

Command: `bench/run_auth.py --rounds {a.rounds} --n {a.n}` ({time.strftime('%Y-%m-%d', time.gmtime())},
{os.cpu_count()} cores, loopback). Each round opens {a.n} connections one at a time per mode
and server (connect, API_VERSIONS, AUTHENTICATE, close) with libfluss's connection code
(`bench/bench_connect.c`), ours and the reference interleaved; medians of {a.rounds}
rounds with the spread (min–max) in brackets. Reference: Apache Fluss 0.9.1 with its
distribution's JVM options; its plaintext figure is its PLAINTEXT internal listener.
Server CPU is the coordinator process's user+system time over the run per connection
(/proc). SCRAM's rate is bound by the client, which runs PBKDF2 (4096 iterations) for
every connection; the server side of SCRAM is HMACs only.

| mode | fluss-c conns/s | reference conns/s | fluss-c / reference (per-round spread) | fluss-c server CPU µs/conn | reference server CPU µs/conn | reference CPU / fluss-c CPU |
|---|---|---|---|---|---|---|
""" + "\n".join(rows) + "\n"
    write_section("auth", text)
    print(text)


if __name__ == "__main__":
    main()
