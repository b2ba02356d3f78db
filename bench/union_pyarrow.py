"""The peer of bench_union's lake read: pyarrow.parquet reads the same
Parquet data files (the lake snapshot's, listed by pyiceberg from the table
directory before the timing) into one Table. Prints one JSON line like
bench_union's: rows, wall seconds, this process's CPU seconds over the
reads alone.
    union_pyarrow.py TABLE_DIR"""

import json
import resource
import sys
import time

import pyarrow.parquet as pq
from pyiceberg.table import StaticTable


def cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def main():
    tbl = StaticTable.from_metadata(sys.argv[1])
    files = [t.file.file_path.removeprefix("file://") for t in tbl.scan().plan_files()]
    if files:  # pyarrow's one-time setup (codecs, pools) outside the timing
        pq.read_table(files[0], use_threads=False)
    t0, c0 = time.monotonic(), cpu()
    rows = 0
    for f in files:
        rows += pq.read_table(f, use_threads=False).num_rows
    print(json.dumps({"mode": "pyarrow", "rows": rows, "files": len(files),
                      "seconds": round(time.monotonic() - t0, 4), "cpu_s": round(cpu() - c0, 4)}))


if __name__ == "__main__":
    main()
