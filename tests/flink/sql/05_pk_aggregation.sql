-- The aggregation merge engine with per-column functions; the connector's
-- sink registers producer offsets for undo recovery on such tables.
CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '${bootstrap}');
USE CATALOG fluss_catalog;
CREATE DATABASE ${db};
USE ${db};

CREATE TABLE agg (
  id INT NOT NULL, total BIGINT, hi INT, lo INT, last_v STRING, cnt BIGINT, names STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'bucket.num' = '1', 'table.merge-engine' = 'aggregation',
  'fields.total.agg' = 'sum', 'fields.hi.agg' = 'max', 'fields.lo.agg' = 'min',
  'fields.last_v.agg' = 'last_value_ignore_nulls', 'fields.cnt.agg' = 'sum',
  'fields.names.agg' = 'listagg'
);
INSERT INTO agg VALUES (1, 10, 5, 5, 'a', 1, 'x');
INSERT INTO agg VALUES (1, 5, 9, 2, CAST(NULL AS STRING), 1, 'y');
INSERT INTO agg VALUES (1, 1, 1, 3, 'c', 1, 'z'), (2, 7, 7, 7, 'q', 1, 'w');
--! final
SELECT * FROM agg;
--> +I[1, 16, 9, 2, c, 3, x,y,z]
--> +I[2, 7, 7, 7, q, 1, w]


-- A sink with a fixed producer id: its offsets are registered for undo
-- recovery; a second job with the same id writes on top.
CREATE TABLE agg2 (id INT NOT NULL, total BIGINT, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('bucket.num' = '2', 'table.merge-engine' = 'aggregation', 'fields.total.agg' = 'sum');
INSERT INTO agg2 /*+ OPTIONS('sink.producer-id' = 'flink-${db}') */ VALUES (1, 1), (2, 2), (1, 10);
INSERT INTO agg2 /*+ OPTIONS('sink.producer-id' = 'flink-${db}') */ VALUES (2, 20);
--! final
SELECT * FROM agg2;
--> +I[1, 11]
--> +I[2, 22]
