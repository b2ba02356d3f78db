-- A primary-key table flussd tiers into Iceberg itself, read through the
-- official connector (fluss-flink-1.20 with the fluss-lake-iceberg 0.9.1
-- plugin). The lake holds the current rows; a round writes a key's new row
-- and position-deletes the row the lake held for it (Iceberg v2 position
-- deletes, no equality deletes), and position-deletes a deleted key's row.
--
-- * t$lake (Iceberg's own Flink reader, deletes applied) is, after each
--   round, exactly the table's rows at the round's offsets: each key once,
--   no superseded or deleted row.
-- * A streaming read (startup mode full) starts in the lake: the lake's
--   rows as +I, then the changelog after the lake's offsets (-U/+U/-D
--   against exactly the rows the lake holds), then what is written while
--   the job runs; folded, the table's current rows.
-- * A batch read merges the lake and the log by key only where 0.9.1's
--   Iceberg plugin lets it: its lake reader is not a SortedRecordReader
--   (apache/fluss#1707, #3048), so a bucket with log after the lake fails
--   with "lake records must instance of sorted view", and a fully tiered
--   bucket merges its lake files with a null comparator (an NPE once a
--   bucket has two live data files, as after a second round). Asserted:
--   after the first round (one file a bucket, nothing after the lake) the
--   batch union read is the lake's rows; with log after the lake, the
--   plugin's refusal.
--
-- Buckets (Iceberg's bucket transform of id, 3 buckets): 0 = {2, 3, 4, 7,
-- 9}, 1 = {12, 14, 15}, 2 = {1, 5, 6, 8, 10}. Run by tests/flink/lake-suite.
CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '${bootstrap}');
USE CATALOG fluss_catalog;
CREATE DATABASE ${db};
USE ${db};

CREATE TABLE users (
  id INT NOT NULL,
  name STRING,
  score BIGINT,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'bucket.num' = '3',
  'table.datalake.enabled' = 'true',
  'table.datalake.freshness' = '1s'
);

-- round 1: inserts only
INSERT INTO users VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30), (4, 'd', 40),
  (5, 'e', 50), (6, 'f', 60), (7, 'g', 70), (8, 'h', 80), (12, 'l', 120), (14, 'n', 140);

--! mode batch
--! retry 60
SELECT id, name, score FROM users$lake;
--> +I[1, a, 10]
--> +I[2, b, 20]
--> +I[3, c, 30]
--> +I[4, d, 40]
--> +I[5, e, 50]
--> +I[6, f, 60]
--> +I[7, g, 70]
--> +I[8, h, 80]
--> +I[12, l, 120]
--> +I[14, n, 140]

-- batch union read with every bucket tiered to its end: the lake's rows
-- (the lake offsets flussd reports are the log end offsets: a bucket with
-- log after them would fail as below)
SELECT id, name, score FROM users;
--> +I[1, a, 10]
--> +I[2, b, 20]
--> +I[3, c, 30]
--> +I[4, d, 40]
--> +I[5, e, 50]
--> +I[6, f, 60]
--> +I[7, g, 70]
--> +I[8, h, 80]
--> +I[12, l, 120]
--> +I[14, n, 140]

-- upserts the lake does not have yet (the next round is an hour away)
ALTER TABLE users SET ('table.datalake.freshness' = '1h');
INSERT INTO users VALUES (2, 'b2', 21), (5, 'e2', 51);

SELECT id, name, score FROM users$lake;
--> +I[1, a, 10]
--> +I[2, b, 20]
--> +I[3, c, 30]
--> +I[4, d, 40]
--> +I[5, e, 50]
--> +I[6, f, 60]
--> +I[7, g, 70]
--> +I[8, h, 80]
--> +I[12, l, 120]
--> +I[14, n, 140]

-- 0.9.1's Iceberg plugin cannot merge a PK bucket's lake files with its
-- log in batch mode (the job fails seconds in: the grace period waits for it)
--! error lake records must instance of sorted view
--! grace 60000
SELECT id, name, score FROM users;

-- rounds 2..: upserts, an UPDATE, DELETEs, a new key: the lake
-- position-deletes the rows they replace (2, 5, 7, 14) or delete (3, 8, 12)
ALTER TABLE users SET ('table.datalake.freshness' = '1s');
UPDATE users SET score = 71 WHERE id = 7;
DELETE FROM users WHERE id = 3;
DELETE FROM users WHERE id = 8;
DELETE FROM users WHERE id = 12;
INSERT INTO users VALUES (9, 'i', 90), (14, 'n2', 141);

--! retry 60
SELECT id, name, score FROM users$lake;
--> +I[1, a, 10]
--> +I[2, b2, 21]
--> +I[4, d, 40]
--> +I[5, e2, 51]
--> +I[6, f, 60]
--> +I[7, g, 71]
--> +I[9, i, 90]
--> +I[14, n2, 141]

-- changes only the log has: upserts of keys whose lake row is in a first-
-- round file (1) and a later one (9, 14), new keys (10, 15), a delete (4)
ALTER TABLE users SET ('table.datalake.freshness' = '1h');
INSERT INTO users VALUES (1, 'a3', 12), (9, 'i2', 91), (10, 'j', 100), (14, 'n3', 142), (15, 'o', 150);
DELETE FROM users WHERE id = 4;

SELECT id, name, score FROM users$lake;
--> +I[1, a, 10]
--> +I[2, b2, 21]
--> +I[4, d, 40]
--> +I[5, e2, 51]
--> +I[6, f, 60]
--> +I[7, g, 71]
--> +I[9, i, 90]
--> +I[14, n2, 141]

-- streaming union read: the lake's rows (+I, the superseded 1, 4, 9, 14
-- included: the read starts in the lake, not in a KV snapshot), the
-- changelog after the lake's offsets, then a write while the job runs
--! mode streaming
--! during INSERT INTO users VALUES (2, 'b3', 22)
SELECT id, name, score FROM users;
--> +I[1, a, 10]
--> +I[2, b2, 21]
--> +I[4, d, 40]
--> +I[5, e2, 51]
--> +I[6, f, 60]
--> +I[7, g, 71]
--> +I[9, i, 90]
--> +I[14, n2, 141]
--> -U[1, a, 10]
--> +U[1, a3, 12]
--> -U[9, i, 90]
--> +U[9, i2, 91]
--> +I[10, j, 100]
--> -U[14, n2, 141]
--> +U[14, n3, 142]
--> +I[15, o, 150]
--> -D[4, d, 40]
--> -U[2, b2, 21]
--> +U[2, b3, 22]

-- the same read folded: the table's current rows
--! final
SELECT id, name, score FROM users;
--> +I[1, a3, 12]
--> +I[2, b3, 22]
--> +I[5, e2, 51]
--> +I[6, f, 60]
--> +I[7, g, 71]
--> +I[9, i2, 91]
--> +I[10, j, 100]
--> +I[14, n3, 142]
--> +I[15, o, 150]
