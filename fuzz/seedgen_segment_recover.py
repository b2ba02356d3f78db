"""Writes the seeds of fuzz/corpus/fuzz_segment_recover/: segment files
(<base>.log bytes) of whole batches taken from fuzz_record_validate's
seeds, renumbered so offsets start at 0 and ascend and stamped with
ascending commit timestamps (neither field is under the CRC), then the
damage recovery must cut at:

* v0_ascending   magic-0 batches (ARROW, INDEXED, COMPACTED) back to back
* v2_torn_tail   magic-2 batches, the last one cut in the middle
* v1_gap         magic-1 batches with a gap between offsets (allowed)
* v0_bad_crc     the last batch's CRC flipped: a torn tail, cut
* v0_damaged_mid the middle batch's CRC flipped, a good batch after it:
                 damage at rest, kept as a damaged range, never served
* v0_offsets_back the second batch's base offset below the first's end
* v1_091_mixed   a magic-0 batch, then 0.9.1's magic 1 (not ours: cut)

Run: /work/main/.venv/bin/python fuzz/seedgen_segment_recover.py
"""

import os
import struct

from seedgen_common import CORPUS, write_seed

TARGET = "fuzz_segment_recover"
SRC = os.path.join(CORPUS, "fuzz_record_validate")


def batches(name):
    """The whole batches of a fuzz_record_validate seed (after its choice byte)."""
    with open(os.path.join(SRC, name), "rb") as f:
        data = f.read()[1:]
    out, pos = [], 0
    while pos + 12 <= len(data):
        (length,) = struct.unpack_from("<i", data, pos + 8)
        out.append(bytearray(data[pos:pos + 12 + length]))
        pos += 12 + length
    return out


def last_delta(b):
    # magic 0/1: the tail (schema id, attributes, last offset delta) at 25;
    # magic 2 carries the leader epoch and CRC 4 bytes later
    at = 25
    if b[12] == 2:
        at = 29
    return struct.unpack_from("<i", b, at + 3)[0]


def renumber(bs, start=0, gap=0, ts=1_700_000_000_000):
    off = start
    for i, b in enumerate(bs):
        struct.pack_into("<q", b, 0, off)
        struct.pack_into("<q", b, 13, ts + 1000 * i)
        off += last_delta(b) + 1 + gap
    return b"".join(bytes(b) for b in bs)


def main():
    v0 = batches("seed_none_38.bin") + batches("seed_indexed_41.bin") + \
        batches("seed_compacted_81.bin")
    write_seed(TARGET, "seed_v0_ascending", renumber(v0))

    v2 = batches("seed_v2_none_38.bin") + batches("seed_v2_indexed_41.bin")
    data = renumber(v2)
    cut = len(data) - len(v2[-1]) // 2
    write_seed(TARGET, "seed_v2_torn_tail", data[:cut])

    v1 = batches("seed_v1_stats_indexed_41.bin") + batches("seed_v1_nostats_compacted_81.bin")
    write_seed(TARGET, "seed_v1_gap", renumber(v1, gap=5))

    bad = batches("seed_indexed_41.bin") + batches("seed_compacted_81.bin")
    renumber(bad)
    bad[1][21] ^= 0xFF
    write_seed(TARGET, "seed_v0_bad_crc", b"".join(bytes(b) for b in bad))

    mid = batches("seed_indexed_41.bin") + batches("seed_compacted_81.bin") + \
        batches("seed_indexed_41.bin")
    renumber(mid)
    mid[1][21] ^= 0xFF
    write_seed(TARGET, "seed_v0_damaged_mid", b"".join(bytes(b) for b in mid))

    back = batches("seed_indexed_41.bin") + batches("seed_compacted_81.bin")
    renumber(back)
    struct.pack_into("<q", back[1], 0, 0)
    write_seed(TARGET, "seed_v0_offsets_back", b"".join(bytes(b) for b in back))

    mixed = batches("seed_indexed_41.bin") + batches("seed_v1_091_compacted_81.bin")
    write_seed(TARGET, "seed_v1_091_mixed", renumber(mixed))


if __name__ == "__main__":
    main()
