-- A job stopped with a savepoint and restarted from it continues where it
-- stopped: no row lost, none copied twice (the source's offsets are in the
-- savepoint; the log-table sink would show a duplicate).
CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '${bootstrap}');
USE CATALOG fluss_catalog;
CREATE DATABASE ${db};
USE ${db};

CREATE TABLE src (id INT, v STRING) WITH ('bucket.num' = '2');
CREATE TABLE dst (id INT, v STRING) WITH ('bucket.num' = '1');
INSERT INTO src VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e');

--! detach copy
INSERT INTO dst SELECT id, v FROM src;

--! final
SELECT COUNT(*), COUNT(DISTINCT id), SUM(id) FROM dst;
--> +I[5, 5, 15]

--! stop-with-savepoint copy
INSERT INTO src VALUES (6, 'f'), (7, 'g'), (8, 'h');

SET 'execution.savepoint.path' = '${copy}';
--! detach copy2
INSERT INTO dst SELECT id, v FROM src;
--! mode streaming

--! final
--! grace 3000
SELECT COUNT(*), COUNT(DISTINCT id), SUM(id) FROM dst;
--> +I[8, 8, 36]

--! during INSERT INTO src VALUES (9, 'i')
--! final
--! grace 3000
SELECT COUNT(*), COUNT(DISTINCT id), SUM(id) FROM dst;
--> +I[9, 9, 45]
