"""Seeds for fuzz_lake_iceberg_meta (fuzz/corpus/fuzz_lake_iceberg_meta/):
the three metadata versions of the table our lake_iceberg_table_sample
helper writes (a new table, one snapshot, two), a pyiceberg 0.12 file
after an append (SqlCatalog), a file in Java's style (-1 for no snapshot,
"decimal(9, 2)", a tag ref, statistics), nested columns (the helper's
`write-nested` table before and after its ADD COLUMN, and a Java-style
file of a list of structs, a map and a map of lists), and a few
truncations.

Run after a build:
    python3 fuzz/seedgen_lake_iceberg_meta.py [path/to/lake_iceberg_table_sample]
"""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OUT = os.path.join(HERE, "corpus", "fuzz_lake_iceberg_meta")

PYICEBERG = (
    '{"location":"file:///tmp/wh/db/t","table-uuid":"3202346f-e63c-495f-91b9-3b53f41a0e09",'
    '"last-updated-ms":1796587897827,"last-column-id":3,"schemas":[{"type":"struct","fields":['
    '{"id":1,"name":"id","type":"long","required":false},{"id":2,"name":"s","type":"string",'
    '"required":false},{"id":3,"name":"d","type":"double","required":false}],"schema-id":0,'
    '"identifier-field-ids":[]}],"current-schema-id":0,"partition-specs":[{"spec-id":0,'
    '"fields":[]}],"default-spec-id":0,"last-partition-id":999,"properties":{},'
    '"current-snapshot-id":6601668506700870412,"snapshots":[{"snapshot-id":6601668506700870412,'
    '"sequence-number":1,"timestamp-ms":1796587897827,"manifest-list":'
    '"file:///tmp/wh/db/t/metadata/snap-1.avro","summary":{"operation":"append",'
    '"added-files-size":"1282","added-data-files":"1","added-records":"3","total-data-files":"1",'
    '"total-delete-files":"0","total-records":"3","total-files-size":"1282",'
    '"total-position-deletes":"0","total-equality-deletes":"0"},"schema-id":0}],'
    '"snapshot-log":[{"snapshot-id":6601668506700870412,"timestamp-ms":1796587897827}],'
    '"metadata-log":[{"metadata-file":"file:///tmp/wh/db/t/metadata/00000-b3.metadata.json",'
    '"timestamp-ms":1796587897769}],"sort-orders":[{"order-id":0,"fields":[]}],'
    '"default-sort-order-id":0,"refs":{"main":{"snapshot-id":6601668506700870412,'
    '"type":"branch"}},"statistics":[],"partition-statistics":[],"format-version":2,'
    '"last-sequence-number":1}')

JAVA_STYLE = (
    '{"format-version":2,"table-uuid":"ab4f7a52-1c7b-4e0e-9d35-4c1a9a6b2f10",'
    '"location":"file:/wh/j","last-sequence-number":0,"last-updated-ms":5,"last-column-id":3,'
    '"current-schema-id":0,"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,'
    '"name":"p","required":true,"type":"decimal(9, 2)"},{"id":2,"name":"d","required":false,'
    '"type":"date"},{"id":3,"name":"k","required":true,"type":"long"}]}],"default-spec-id":0,'
    '"partition-specs":[{"spec-id":0,"fields":[{"name":"d","transform":"identity",'
    '"source-id":2,"field-id":1000},{"name":"k_bucket","transform":"bucket[16]",'
    '"source-id":3,"field-id":1001}]}],"last-partition-id":1001,"default-sort-order-id":1,'
    '"sort-orders":[{"order-id":1,"fields":[{"transform":"identity","source-id":3,'
    '"direction":"desc","null-order":"nulls-last"}]}],"properties":{"owner":"x"},'
    '"current-snapshot-id":-1,"refs":{"t":{"snapshot-id":9,"type":"tag"}},"snapshots":[],'
    '"statistics":[],"snapshot-log":[],"metadata-log":[]}')

# a INT, b ARRAY<ROW<x INT, y STRING>>, c MAP<STRING, INT>, e MAP<STRING,
# ARRAY<DATE NOT NULL>>, as the reference's Hadoop catalog numbers them
JAVA_NESTED = (
    '{"format-version":2,"table-uuid":"0b6ad1a1-6c1e-4a48-9a51-2f4d1f0e7c11",'
    '"location":"file:/wh/db/t","last-sequence-number":0,"last-updated-ms":7,'
    '"last-column-id":15,"current-schema-id":0,"schemas":[{"type":"struct","schema-id":0,'
    '"fields":[{"id":1,"name":"a","required":false,"type":"int"},{"id":2,"name":"b",'
    '"required":false,"type":{"type":"list","element-id":8,"element":{"type":"struct",'
    '"fields":[{"id":9,"name":"x","required":false,"type":"int"},{"id":10,"name":"y",'
    '"required":false,"type":"string","doc":"a y"}]},"element-required":false}},'
    '{"id":3,"name":"c","required":false,"type":{"type":"map","key-id":11,"key":"string",'
    '"value-id":12,"value":"int","value-required":false}},{"id":4,"name":"e",'
    '"required":false,"type":{"type":"map","key-id":13,"key":"string","value-id":14,'
    '"value":{"type":"list","element-id":15,"element":"date","element-required":true},'
    '"value-required":false}},{"id":5,"name":"__bucket","required":true,"type":"int"},'
    '{"id":6,"name":"__offset","required":true,"type":"long"},{"id":7,"name":"__timestamp",'
    '"required":true,"type":"timestamptz"}]}],"default-spec-id":0,"partition-specs":'
    '[{"spec-id":0,"fields":[{"name":"__bucket","transform":"identity","source-id":5,'
    '"field-id":1000}]}],"last-partition-id":1000,"default-sort-order-id":1,"sort-orders":'
    '[{"order-id":1,"fields":[{"transform":"identity","source-id":6,"direction":"asc",'
    '"null-order":"nulls-first"}]}],"properties":{},"current-snapshot-id":-1,"refs":{},'
    '"snapshots":[],"statistics":[],"snapshot-log":[],"metadata-log":[]}')


def main():
    sample = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        REPO, "build", "lake_iceberg_table_sample")
    os.makedirs(OUT, exist_ok=True)
    seeds = {"pyiceberg-append": PYICEBERG.encode(), "java-style": JAVA_STYLE.encode(),
             "java-nested": JAVA_NESTED.encode()}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sample, "write", tmp], check=True, stdout=subprocess.DEVNULL)
        for v in (1, 2, 3):
            with open(os.path.join(tmp, "metadata", "v%d.metadata.json" % v), "rb") as f:
                seeds["ours-v%d" % v] = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sample, "write-nested", tmp], check=True, stdout=subprocess.DEVNULL)
        for v in (1, 2):
            with open(os.path.join(tmp, "metadata", "v%d.metadata.json" % v), "rb") as f:
                seeds["ours-nested-v%d" % v] = f.read()
    for name in ("ours-v3", "pyiceberg-append", "ours-nested-v2"):
        m = seeds[name]
        for cut in (len(m) // 2, len(m) - 1):
            seeds["trunc-%s-at-%d" % (name, cut)] = m[:cut]
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print("wrote %d seeds to %s" % (len(seeds), os.path.relpath(OUT, REPO)))


if __name__ == "__main__":
    main()
