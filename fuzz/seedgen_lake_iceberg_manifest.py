"""Seeds for fuzz_lake_iceberg_manifest (fuzz/corpus/fuzz_lake_iceberg_manifest/):
manifests and a manifest list from our writer (the
lake_iceberg_manifest_sample helper: a partitioned data manifest of 3 and
of 0 entries, a delete manifest, the manifest list), and a few truncations.

Run after a build:
    python3 fuzz/seedgen_lake_iceberg_manifest.py [path/to/lake_iceberg_manifest_sample]
"""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OUT = os.path.join(HERE, "corpus", "fuzz_lake_iceberg_manifest")


def main():
    sample = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        REPO, "build", "lake_iceberg_manifest_sample")
    os.makedirs(OUT, exist_ok=True)
    seeds = {}
    for entries in ("3", "0"):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sample, "write", tmp, entries], check=True)
            for name in ("data", "deletes", "snap"):
                with open(os.path.join(tmp, name + ".avro"), "rb") as f:
                    seeds["ours-%s-%s" % (name, entries)] = f.read()
    del seeds["ours-deletes-0"]  # the same as ours-deletes-3 but for its sync marker
    for name in ("ours-data-3", "ours-snap-3"):
        m = seeds[name]
        for cut in (len(m) // 2, len(m) - 3):
            seeds["trunc-%s-at-%d" % (name[5:], cut)] = m[:cut]
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print("wrote %d seeds to %s" % (len(seeds), os.path.relpath(OUT, REPO)))


if __name__ == "__main__":
    main()
