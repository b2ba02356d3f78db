#!/usr/bin/env python3
"""Golden-bytes recorder: a loopback TCP proxy that records Fluss RPC frames.

One proxy per server port.  Each proxy accepts client connections, opens a
connection to the real server for each, forwards bytes unchanged in both
directions, and cuts both byte streams into Fluss frames (4-byte BE length +
payload).  Every request frame and its response frame are written to

    OUT/NNNN_<API_NAME>.req.bin     the request frame, length prefix included
    OUT/NNNN_<API_NAME>.resp.bin    the response frame, length prefix included
    OUT/NNNN_<API_NAME>.txt         plain decoded dump of both (pbdump.py)
    OUT/index.json                  one entry per pair (see below)

NNNN numbers requests in the order the proxy saw them (over all
connections).  Pairs are matched by (connection, request_id); a SERVER_FAILURE
(type 2, no request id) response is paired with the oldest open request of its
connection.

index.json entries: seq, step (scenario label current when the request
arrived), server (proxy label, e.g. coordinator / tablet), conn (connection
number), api_key, api_name, api_version, request_id, response_type
(0 success, 1 error, 2 server failure, null if none), error_code and
error_message (for type 1/2), req/resp/txt file names, sizes.

Clients connect to the endpoints that GET_METADATA advertises, so the servers
behind the proxies must advertise the proxy addresses: tests/reference/start
does that with REF_ADVERTISED_COORD_PORT / REF_ADVERTISED_TABLET_PORT (see
record_admin.py).  The proxy never rewrites bytes.

Standalone use (e.g. to record any client against any server):

    python3 tests/golden/record.py --out /tmp/frames \\
        --proxy coordinator=127.0.0.1:19123->127.0.0.1:29123 \\
        --proxy tablet=127.0.0.1:19124->127.0.0.1:29124

runs until SIGINT/SIGTERM, then writes index.json and the .txt dumps.
"""
import argparse
import asyncio
import json
import os
import signal
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbdump  # noqa: E402


class FrameSplitter:
    """Accumulates a byte stream and yields complete frames (prefix included)."""

    def __init__(self):
        self.buf = bytearray()

    def feed(self, data):
        self.buf += data
        frames = []
        while len(self.buf) >= 4:
            (length,) = struct.unpack(">i", self.buf[:4])
            if length < 0:
                raise ValueError("negative frame length %d" % length)
            if len(self.buf) < 4 + length:
                break
            frames.append(bytes(self.buf[:4 + length]))
            del self.buf[:4 + length]
        return frames


class Recorder:
    """Thread-safe store of request/response pairs for one output directory."""

    def __init__(self, out_dir=None):
        self.lock = threading.Lock()
        self.step = "-"
        self.out_dir = None
        self.entries = []
        self.pending = {}  # (conn, request_id) -> entry
        self.conn_seq = 0
        self.unpaired = 0
        if out_dir:
            self.set_output(out_dir)

    def set_output(self, out_dir):
        """Finish the current directory (if any) and start recording into out_dir.

        Requests still waiting for a response are given up to 3 s to complete.
        """
        deadline = time.time() + 3
        while self.pending and time.time() < deadline:
            time.sleep(0.05)
        with self.lock:
            self._finish_locked()
            os.makedirs(out_dir, exist_ok=True)
            for name in os.listdir(out_dir):
                if name.endswith((".bin", ".txt")) or name == "index.json":
                    os.remove(os.path.join(out_dir, name))
            self.out_dir = out_dir
            self.entries = []
            self.pending = {}

    def set_step(self, step):
        with self.lock:
            self.step = step

    def new_conn(self):
        with self.lock:
            self.conn_seq += 1
            return self.conn_seq

    def on_request(self, server, conn, frame):
        api_key, ver, rid = struct.unpack(">hhi", frame[4:12])
        with self.lock:
            if self.out_dir is None:
                return
            seq = len(self.entries) + 1
            api = pbdump.API_NAMES.get(api_key, "API_%d" % api_key)
            base = "%04d_%s" % (seq, api)
            entry = {
                "seq": seq, "step": self.step, "server": server, "conn": conn,
                "api_key": api_key, "api_name": api, "api_version": ver,
                "request_id": rid, "response_type": None, "error_code": None,
                "error_message": None, "req": base + ".req.bin", "resp": None,
                "txt": base + ".txt", "req_size": len(frame), "resp_size": None,
                "t_req": time.time(), "t_resp": None, "_dir": self.out_dir,
            }
            with open(os.path.join(self.out_dir, entry["req"]), "wb") as f:
                f.write(frame)
            self.entries.append(entry)
            self.pending[(conn, rid)] = entry

    def on_response(self, server, conn, frame):
        rtype = frame[4]
        with self.lock:
            if rtype == 2:
                cands = [e for (c, _), e in self.pending.items() if c == conn]
                entry = min(cands, key=lambda e: e["seq"]) if cands else None
                body = frame[5:]
            else:
                (rid,) = struct.unpack(">i", frame[5:9])
                entry = self.pending.get((conn, rid))
                body = frame[9:]
            if entry is None:
                self.unpaired += 1
                if self.unpaired <= 5:
                    print("[record] unpaired response on %s conn %d (request recorded in "
                          "an earlier directory?)" % (server, conn), file=sys.stderr)
                return
            del self.pending[(conn, entry["request_id"])]
            entry["response_type"] = rtype
            entry["resp"] = entry["req"].replace(".req.bin", ".resp.bin")
            entry["resp_size"] = len(frame)
            entry["t_resp"] = time.time()
            if rtype in (1, 2):
                try:
                    for num, wt, v, _ in pbdump.raw_fields(body):
                        if num == 1 and wt == 0:
                            entry["error_code"] = pbdump.signed(v, 32)
                        elif num == 2 and wt == 2:
                            entry["error_message"] = v.decode("utf-8", "replace")
                except ValueError:
                    pass
            with open(os.path.join(entry["_dir"], entry["resp"]), "wb") as f:
                f.write(frame)

    def _finish_locked(self):
        if self.out_dir is None:
            return
        index = []
        for e in self.entries:
            d = e["_dir"]
            with open(os.path.join(d, e["req"]), "rb") as f:
                req = f.read()
            resp = None
            if e["resp"]:
                with open(os.path.join(d, e["resp"]), "rb") as f:
                    resp = f.read()
            head = ("seq %d  step %s  server %s  conn %d\n\n"
                    % (e["seq"], e["step"], e["server"], e["conn"]))
            with open(os.path.join(d, e["txt"]), "w") as f:
                f.write(head + pbdump.dump_pair(req, resp))
            index.append({k: v for k, v in e.items() if not k.startswith(("_", "t_"))})
        with open(os.path.join(self.out_dir, "index.json"), "w") as f:
            json.dump(index, f, indent=1)
            f.write("\n")
        self.out_dir = None

    def finish(self):
        with self.lock:
            self._finish_locked()


async def _pipe(reader, writer, splitter, on_frame):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            # Record before forwarding: once the client has a response it may
            # switch the recorder to another step or directory.
            for frame in splitter.feed(data):
                on_frame(frame)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def start_proxy(recorder, label, listen_host, listen_port, target_host, target_port):
    async def handle(c_reader, c_writer):
        conn = recorder.new_conn()
        try:
            s_reader, s_writer = await asyncio.open_connection(target_host, target_port)
        except OSError as e:
            print("[record] %s: cannot reach %s:%d: %s" % (label, target_host, target_port, e),
                  file=sys.stderr)
            c_writer.close()
            return
        await asyncio.gather(
            _pipe(c_reader, s_writer, FrameSplitter(),
                  lambda fr: recorder.on_request(label, conn, fr)),
            _pipe(s_reader, c_writer, FrameSplitter(),
                  lambda fr: recorder.on_response(label, conn, fr)),
        )

    return await asyncio.start_server(handle, listen_host, listen_port, reuse_address=True)


class ProxyThread:
    """Runs proxies on an asyncio loop in a background thread."""

    def __init__(self, recorder, specs):
        self.recorder = recorder
        self.specs = specs  # (label, lhost, lport, thost, tport)
        self.loop = asyncio.new_event_loop()
        self.servers = []
        self.ready = threading.Event()
        self.error = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        asyncio.set_event_loop(self.loop)

        async def boot():
            for spec in self.specs:
                self.servers.append(await start_proxy(self.recorder, *spec))

        try:
            self.loop.run_until_complete(boot())
        except OSError as e:
            self.error = e
            self.ready.set()
            return
        self.ready.set()
        self.loop.run_forever()

    def start(self):
        self.thread.start()
        if not self.ready.wait(10):
            raise RuntimeError("proxies did not start")
        if self.error:
            raise RuntimeError("cannot start proxies: %s" % self.error)

    def stop(self):
        if self.error or not self.thread.is_alive():
            return

        async def shutdown():
            for s in self.servers:
                s.close()
        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def parse_spec(text):
    label, rest = text.split("=", 1)
    listen, target = rest.split("->", 1)
    lh, lp = listen.rsplit(":", 1)
    th, tp = target.rsplit(":", 1)
    return label, lh, int(lp), th, int(tp)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--proxy", action="append", required=True,
                    help="LABEL=LISTEN_HOST:PORT->TARGET_HOST:PORT")
    args = ap.parse_args()
    rec = Recorder(args.out)
    proxies = ProxyThread(rec, [parse_spec(s) for s in args.proxy])
    proxies.start()
    print("[record] proxies up: %s; Ctrl-C to finish" % ", ".join(args.proxy))
    done = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: done.set())
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    while not done.wait(0.5):
        pass
    proxies.stop()
    rec.finish()
    print("[record] wrote %s" % args.out)


if __name__ == "__main__":
    main()
