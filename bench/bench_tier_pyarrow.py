"""pyarrow's peer of bench_tier: the same rows (bench_tier.c's header has
the formulas) plus the three system columns the tiering writer appends
(__bucket int32, __offset int64, __timestamp timestamp[us, UTC]), as one
pyarrow Table built before the timing; then, per round, only
pyarrow.parquet.write_table to a file in DIR (ZSTD level 3, statistics on,
dictionary on: pyarrow's defaults otherwise), timed with the wall clock
and resource.getrusage(RUSAGE_SELF) user + system CPU. One JSON line per
round, the fields bench_tier prints.

  bench_tier_pyarrow.py --rows N --batch B --dir DIR [--rounds R] [--in-bytes BYTES]
                        [--schema flat|nested]

--schema nested: bench_tier's nested rows (its header), as list, map and
struct columns.
"""

import argparse
import json
import os
import resource
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def table(rows: int, batch: int) -> pa.Table:
    i = np.arange(rows, dtype=np.int64)
    h = (i.astype(np.uint64) * np.uint64(2654435761)) % np.uint64(10_000_000)
    name = [f"customer-{a:07d}-{b:03d}" for a, b in zip(h.tolist(), (i % 997).tolist())]
    note = [None if x % 5 == 1 else f"note {x % 50:02d} item {x * 31 % 100000:05d}"
            for x in i.tolist()]
    qty = pa.array(np.where(i % 10 == 3, 0, i % 10 + 1).astype(np.int32), mask=(i % 10 == 3))
    score = pa.array((i % 1000).astype(np.float64) * 0.001, mask=(i % 7 == 2))
    cols = {
        "id": pa.array(i),
        "user_id": pa.array((i * 7919 % 100000).astype(np.int32)),
        "name": pa.array(name, pa.string()),
        "price": pa.array((i % 10000).astype(np.float64) / 100.0),
        "ts": pa.array(1_700_000_000_000 + 3 * i, pa.timestamp("ms", tz="UTC")),
        "qty": qty,
        "note": pa.array(note, pa.string()),
        "score": score,
        "__bucket": pa.array(np.zeros(rows, dtype=np.int32)),
        "__offset": pa.array(i),
        "__timestamp": pa.array((1_700_000_000_000 + (i // batch) * batch) * 1000,
                                pa.timestamp("us", tz="UTC")),
    }
    fields = [pa.field(k, v.type, nullable=k not in ("id", "__bucket", "__offset", "__timestamp"))
              for k, v in cols.items()]
    return pa.Table.from_arrays(list(cols.values()), schema=pa.schema(fields))


def nested_table(rows: int, batch: int) -> pa.Table:
    ids, tags, attrs, pos, scores = [], [], [], [], []
    for i in range(rows):
        ids.append(i)
        tags.append(None if i % 13 == 5 else [f"tag-{(i * 7 + k) % 50:02d}" for k in range(i % 4)])
        attrs.append(None if i % 17 == 3 else
                     [(f"k{k}", None if (i + k) % 11 == 0 else (i + k) % 1000)
                      for k in range(i % 3)])
        pos.append(None if i % 19 == 7 else
                   {"x": i % 1000, "label": None if i % 5 == 0 else f"p{i % 100000:05d}"})
        scores.append([(i % 1000) * 0.01 + k for k in range(i % 5)])
    i = np.arange(rows, dtype=np.int64)
    cols = {
        "id": pa.array(ids, pa.int64()),
        "tags": pa.array(tags, pa.list_(pa.string())),
        "attrs": pa.array(attrs, pa.map_(pa.string(), pa.int32())),
        "pos": pa.array(pos, pa.struct([("x", pa.int32()), ("label", pa.string())])),
        "scores": pa.array(scores, pa.list_(pa.float64())),
        "__bucket": pa.array(np.zeros(rows, dtype=np.int32)),
        "__offset": pa.array(i),
        "__timestamp": pa.array((1_700_000_000_000 + (i // batch) * batch) * 1000,
                                pa.timestamp("us", tz="UTC")),
    }
    fields = [pa.field(k, v.type, nullable=k not in ("id", "__bucket", "__offset", "__timestamp"))
              for k, v in cols.items()]
    return pa.Table.from_arrays(list(cols.values()), schema=pa.schema(fields))


def cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--in-bytes", type=int, default=0)
    ap.add_argument("--schema", default="flat", choices=("flat", "nested"))
    a = ap.parse_args()
    t = (nested_table if a.schema == "nested" else table)(a.rows, a.batch)
    path = os.path.join(a.dir, "bench-pyarrow.parquet")
    for _ in range(a.rounds):
        c0, t0 = cpu(), time.monotonic()
        pq.write_table(t, path, compression="zstd", compression_level=3, write_statistics=True)
        t1, c1 = time.monotonic(), cpu()
        out = os.path.getsize(path)
        os.unlink(path)
        print(json.dumps({"mode": "pyarrow", "schema": a.schema, "rows": a.rows, "batch": a.batch,
                          "in_bytes": a.in_bytes, "out_bytes": out, "files": 1,
                          "wall_s": round(t1 - t0, 6), "cpu_s": round(c1 - c0, 6)}), flush=True)


if __name__ == "__main__":
    main()
