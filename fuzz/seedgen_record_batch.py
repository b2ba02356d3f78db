"""Writes the magic 1 and magic 2 seeds of fuzz/corpus/fuzz_record_batch/
and fuzz/corpus/fuzz_record_validate/ (seed_v*.bin) from their magic-0
seeds: the records of every batch of a source seed (pyfluss's ARROW
batches, uncompressed, LZ4 and ZSTD; the INDEXED and COMPACTED seeds)
under the other header layouts, with a good CRC:

* v1_stats  main's magic 1: StatisticsLength and min/max/null-count
            statistics (protocol.md §4.8) of column 0 before the records
* v1_nostats main's magic 1 with StatisticsLength 0
* v2        main's magic 2: LeaderEpoch 7, CRC at 25, statistics
* v1_091    0.9.1's magic 1: LeaderEpoch at 21, CRC at 25, records at 52,
            no statistics; main's reader (ours) takes magic 1 for the
            statistics layout, so these must be refused, never misread
* v2_changelog (ARROW) magic 2, attributes 0 and a change-type vector
            before the Arrow message, as a primary-key table's changelog

The first input byte (projection; for fuzz_record_validate also the log
format) is kept from the source seed.

Run: /work/main/.venv/bin/python fuzz/seedgen_record_batch.py
"""

import os
import struct

from seedgen_common import CORPUS, batch, batch_v1_091, statistics, write_seed

V0_HEADER = 48

SOURCES = {
    "fuzz_record_batch": ["seed_none_01.bin", "seed_zstd_05.bin", "seed_lz4_frame_3f.bin"],
    "fuzz_record_validate": ["seed_none_38.bin", "seed_zstd_3f.bin", "seed_lz4_frame_01.bin",
                             "seed_indexed_41.bin", "seed_compacted_81.bin"],
}


def v0_batches(data: bytes):
    """(schema_id, attributes, record_count, writer_id, seq, records) of
    each magic-0 batch."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        (length,) = struct.unpack_from("<i", data, pos + 8)
        end = pos + 12 + length
        assert data[pos + 12] == 0 and end <= len(data), "a magic-0 source seed"
        sid, attrs, _, wid, seq, count = struct.unpack_from("<hbiqii", data, pos + 25)
        out.append((sid, attrs, count, wid, seq, data[pos + V0_HEADER:end]))
        pos = end
    assert pos == len(data)
    return out


def rewrap(batches, layout: str, arrow: bool) -> bytes:
    out = b""
    for sid, attrs, count, wid, seq, records in batches:
        kw = dict(schema_id=sid, attributes=attrs, writer_id=wid, seq=seq)
        stats = statistics([0], [0], [0], [count])
        if layout == "v1_stats":
            out += batch(records, count, magic=1, stats=stats, **kw)
        elif layout == "v1_nostats":
            out += batch(records, count, magic=1, **kw)
        elif layout == "v2":
            out += batch(records, count, magic=2, stats=stats, leader_epoch=7, **kw)
        elif layout == "v1_091":
            out += batch_v1_091(records, count, **kw)
        else:
            assert layout == "v2_changelog" and arrow
            if attrs & 1 and count:
                kw["attributes"] = attrs & ~1
                records = bytes(i % 5 for i in range(count)) + records
            out += batch(records, count, magic=2, **kw)
    return out


def main():
    for target, names in SOURCES.items():
        for name in names:
            with open(os.path.join(CORPUS, target, name), "rb") as f:
                data = f.read()
            choice, batches = data[:1], v0_batches(data[1:])
            arrow = not ("indexed" in name or "compacted" in name)
            layouts = ["v1_stats", "v1_nostats", "v2", "v1_091"]
            if arrow:
                layouts.append("v2_changelog")
            for layout in layouts:
                out = choice + rewrap(batches, layout, arrow)
                write_seed(target, f"seed_{layout}_{name[len('seed_'):]}", out)


if __name__ == "__main__":
    main()
