-- Merge engines and per-column aggregate functions through table options,
-- lookup joins (also inserting missing keys with an auto-increment column).
CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '${bootstrap}');
USE CATALOG fluss_catalog;
CREATE DATABASE ${db};
USE ${db};

CREATE TABLE first_row (id INT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('bucket.num' = '1', 'table.merge-engine' = 'first_row');
INSERT INTO first_row VALUES (1, 'first'), (2, 'only');
INSERT INTO first_row VALUES (1, 'second');
--! final
SELECT * FROM first_row;
--> +I[1, first]
--> +I[2, only]

CREATE TABLE versioned (id INT NOT NULL, ver BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('bucket.num' = '1', 'table.merge-engine' = 'versioned', 'table.merge-engine.versioned.ver-column' = 'ver');
INSERT INTO versioned VALUES (1, 5, 'v5');
INSERT INTO versioned VALUES (1, 3, 'v3-older');
INSERT INTO versioned VALUES (1, 7, 'v7');
--! final
SELECT * FROM versioned;
--> +I[1, 7, v7]

-- Lookup join: a stream of orders probes a dimension table.
CREATE TABLE dim (id INT NOT NULL, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '2');
INSERT INTO dim VALUES (1, 'one'), (2, 'two'), (3, 'three');
CREATE TABLE orders (order_id INT, dim_id INT, ptime AS PROCTIME()) WITH ('bucket.num' = '1');
INSERT INTO orders VALUES (100, 1), (101, 3), (102, 9), (103, 2);

SELECT o.order_id, d.name
FROM orders AS o JOIN dim FOR SYSTEM_TIME AS OF o.ptime AS d ON o.dim_id = d.id;
--> +I[100, one]
--> +I[101, three]
--> +I[103, two]

SELECT o.order_id, d.name
FROM orders AS o LEFT JOIN dim FOR SYSTEM_TIME AS OF o.ptime AS d ON o.dim_id = d.id;
--> +I[100, one]
--> +I[101, three]
--> +I[102, null]
--> +I[103, two]

-- lookup.insert-if-not-exists: a missing key is inserted, its auto-increment
-- column filled by the server.
CREATE TABLE uid_map (name STRING NOT NULL, uid BIGINT, PRIMARY KEY (name) NOT ENFORCED)
  WITH ('bucket.num' = '1', 'auto-increment.fields' = 'uid');
CREATE TABLE visits (who STRING, ptime AS PROCTIME()) WITH ('bucket.num' = '1');
INSERT INTO visits VALUES ('ann'), ('bob'), ('ann');
SELECT v.who, u.uid IS NOT NULL
FROM visits AS v JOIN uid_map /*+ OPTIONS('lookup.insert-if-not-exists' = 'true') */ FOR SYSTEM_TIME AS OF v.ptime AS u
  ON v.who = u.name;
--> +I[ann, true]
--> +I[bob, true]
--> +I[ann, true]

--! final
SELECT COUNT(*), COUNT(DISTINCT uid) FROM uid_map;
--> +I[2, 2]
