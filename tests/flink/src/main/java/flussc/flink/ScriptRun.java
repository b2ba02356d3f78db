package flussc.flink;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.ResultKind;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.CloseableIterator;

/**
 * Runs one script: a fresh table environment (streaming unless the script
 * switches), variables, and each step checked as it runs. The first failing
 * step ends the script.
 *
 * <p>Directives ({@code --! name arg}) above a statement:
 * <ul>
 *   <li>{@code ordered} — rows must arrive in the written order;</li>
 *   <li>{@code final} — the rows are the query's result once its changelog
 *       (+I/-U/+U/-D) is applied: the runner folds what arrives until it equals
 *       them, then waits the grace period for changes that would break it;</li>
 *   <li>{@code error TEXT} — the statement must fail with TEXT in its cause chain;</li>
 *   <li>{@code during SQL} — run SQL (awaited) once the query's job is running;</li>
 *   <li>{@code grace MS} — after the expected rows, wait MS for unexpected extras
 *       (default 1500; bounded queries are read to their end);</li>
 *   <li>{@code timeout S} — seconds to wait for the rows (default 90);</li>
 *   <li>{@code retry S} — run the statement again (every 0.5 s, up to S seconds)
 *       while its rows differ: for state the server settles just after an answer;</li>
 *   <li>{@code detach NAME} — start an INSERT job and go on, its client kept as NAME;</li>
 *   <li>{@code server-bytes-below N} / {@code server-bytes-above N} — the server
 *       ports (--ports) sent fewer / more than N bytes on the wire while the
 *       statement ran.</li>
 * </ul>
 * Directives that stand alone: {@code mode batch|streaming}, {@code mark NAME}
 * (NAME = now in epoch ms), {@code sleep MS}, {@code stop-with-savepoint NAME}
 * (NAME = the savepoint's path), {@code cancel NAME}.
 */
final class ScriptRun {
    private static final Pattern VAR = Pattern.compile("\\$\\{([A-Za-z0-9_]+)}");
    private static final Object END = new Object();
    private static final Pattern SENT = Pattern.compile("\\bbytes_sent:(\\d+)");
    private static final Pattern SET = Pattern.compile(
            "(?is)\\s*SET\\s+'([^']+)'\\s*=\\s*'([^']*)'\\s*");

    private final Script script;
    private final List<Integer> ports;
    private Map<String, Long> socketsBefore;
    private long moved = -1;
    private final Map<String, String> vars = new HashMap<>();
    private final Map<String, JobClient> jobs = new HashMap<>();
    private final List<String> session = new ArrayList<>();
    private final Path savepoints;
    private final java.net.URI cluster;
    private StreamTableEnvironment tEnv;

    ScriptRun(Script script, String bootstrap, List<Integer> ports, java.net.URI cluster) throws IOException {
        this.script = script;
        this.cluster = cluster;
        this.ports = ports;
        String suffix = Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
        vars.put("bootstrap", bootstrap);
        vars.put("db", "fl_" + script.name.replaceAll("[^A-Za-z0-9]", "_") + "_" + suffix);
        savepoints = Files.createTempDirectory("flink-sp-");
        vars.put("savepoints", savepoints.toUri().toString());
        java.time.LocalDate today = java.time.LocalDate.now(java.time.ZoneOffset.UTC);
        java.time.format.DateTimeFormatter day = java.time.format.DateTimeFormatter.BASIC_ISO_DATE;
        vars.put("today_utc", today.format(day));
        vars.put("tomorrow_utc", today.plusDays(1).format(day));
        tEnv = newEnv(false);
    }

    private StreamTableEnvironment newEnv(boolean batch) {
        Configuration conf = new Configuration();
        conf.setString("parallelism.default", "1");
        conf.setString("execution.checkpointing.interval", "1 s");
        conf.setString("table.exec.resource.default-parallelism", "1");
        // A failing job fails the step at once instead of restarting forever.
        conf.setString("restart-strategy.type", "none");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createRemoteEnvironment(
                cluster.getHost(), cluster.getPort(), conf);
        env.setRuntimeMode(batch ? RuntimeExecutionMode.BATCH : RuntimeExecutionMode.STREAMING);
        EnvironmentSettings settings = batch ? EnvironmentSettings.inBatchMode()
                : EnvironmentSettings.inStreamingMode();
        return StreamTableEnvironment.create(env, settings);
    }

    boolean run() {
        try {
            for (Script.Step step : script.steps) {
                long t0 = System.nanoTime();
                String what = step.sql != null ? firstLine(subst(step.sql))
                        : "--! " + step.directives.get(0)[0] + " " + step.directives.get(0)[1];
                try {
                    runStep(step);
                } catch (Throwable e) {
                    System.out.printf("[flink]   %s:%d FAIL %s%n", script.name, step.line, what);
                    System.out.println(indent(describe(e)));
                    return false;
                }
                System.out.printf("[flink]   %s:%d ok %s (%.1f s)%n", script.name, step.line, what,
                        (System.nanoTime() - t0) / 1e9);
            }
            return true;
        } finally {
            for (JobClient j : jobs.values()) {
                try {
                    j.cancel().get(30, TimeUnit.SECONDS);
                } catch (Exception ignored) {
                    // already finished or gone
                }
            }
        }
    }

    private void runStep(Script.Step step) throws Exception {
        if (step.sql == null) {
            standalone(step.directives.get(0)[0], subst(step.directives.get(0)[1]));
            return;
        }
        String sql = subst(step.sql);
        String error = step.directive("error");
        boolean measure = step.has("server-bytes-below") || step.has("server-bytes-above");
        socketsBefore = measure ? serverSockets() : null;
        moved = -1;
        try {
            String retry = step.directive("retry");
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(orDefault(retry, "0")));
            while (true) {
                try {
                    execute(step, sql);
                    break;
                } catch (AssertionError e) {
                    if (retry == null || System.nanoTime() > until) {
                        throw e;
                    }
                    Thread.sleep(500);
                }
            }
        } catch (Throwable e) {
            if (error != null && causeChainHas(e, subst(error))) {
                System.out.println("[flink]     failed as expected: " + rootMessage(e));
                return;
            }
            throw e;
        }
        if (error != null) {
            throw new AssertionError("expected an error containing '" + subst(error) + "', the statement succeeded");
        }
        if (measure && moved < 0) {
            moved = bytesSince(socketsBefore);
        }
        String below = step.directive("server-bytes-below");
        String above = step.directive("server-bytes-above");
        if (below != null || above != null) {
            System.out.printf("[flink]     server sent %d bytes%n", moved);
        }
        if (below != null && moved >= Long.parseLong(below)) {
            throw new AssertionError("server sent " + moved + " bytes, expected fewer than " + below);
        }
        if (above != null && moved <= Long.parseLong(above)) {
            throw new AssertionError("server sent " + moved + " bytes, expected more than " + above);
        }
    }

    private void standalone(String name, String arg) throws Exception {
        switch (name) {
            case "mode":
                tEnv = newEnv(arg.equals("batch"));
                for (String s : session) {
                    tEnv.executeSql(s);
                }
                break;
            case "mark":
                Thread.sleep(100);
                vars.put(arg, Long.toString(System.currentTimeMillis()));
                Thread.sleep(100);
                break;
            case "sleep":
                Thread.sleep(Long.parseLong(arg));
                break;
            case "stop-with-savepoint": {
                JobClient j = job(arg);
                String path = j.stopWithSavepoint(false, savepoints.toString(), SavepointFormatType.CANONICAL)
                        .get(120, TimeUnit.SECONDS);
                jobs.remove(arg);
                vars.put(arg, path);
                break;
            }
            case "cancel":
                job(arg).cancel().get(60, TimeUnit.SECONDS);
                jobs.remove(arg);
                break;
            default:
                throw new IllegalArgumentException("unknown directive " + name);
        }
    }

    private JobClient job(String name) {
        JobClient j = jobs.get(name);
        if (j == null) {
            throw new IllegalArgumentException("no detached job named " + name);
        }
        return j;
    }

    private void execute(Script.Step step, String sql) throws Exception {
        String head = sql.stripLeading().toUpperCase(Locale.ROOT);
        Matcher set = SET.matcher(sql);
        if (set.matches()) {
            // SET as the SQL client has it, on this environment's table config (jobs
            // submitted later keep it: a fresh environment comes from "--! mode").
            tEnv.getConfig().getConfiguration().setString(set.group(1), set.group(2));
            return;
        }
        TableResult r = tEnv.executeSql(sql);
        if (head.startsWith("CREATE CATALOG") || head.startsWith("USE")) {
            session.add(sql);
        }
        boolean writes = head.startsWith("INSERT") || head.startsWith("EXECUTE")
                || head.startsWith("BEGIN") || head.startsWith("DELETE") || head.startsWith("UPDATE");
        if (writes) {
            if (r.getJobClient().isPresent()) {
                String detach = step.directive("detach");
                if (detach != null) {
                    jobs.put(detach, r.getJobClient().get());
                    waitRunning(r.getJobClient().get());
                    return;
                }
                r.await(Long.parseLong(orDefault(step.directive("timeout"), "120")), TimeUnit.SECONDS);
            }
            if (!step.expected.isEmpty()) {
                check(step, collectBounded(r));
            }
            return;
        }
        if (r.getResultKind() == ResultKind.SUCCESS) {
            if (!step.expected.isEmpty()) {
                throw new AssertionError("statement returned no rows, " + step.expected.size() + " expected");
            }
            return;
        }
        check(step, collect(step, r));
    }

    private List<String> collectBounded(TableResult r) throws Exception {
        List<String> rows = new ArrayList<>();
        try (CloseableIterator<Row> it = r.collect()) {
            while (it.hasNext()) {
                rows.add(it.next().toString());
            }
        }
        return rows;
    }

    /** Reads a query's rows: all of a bounded one, the expected count (then a grace period) of a streaming one. */
    private List<String> collect(Script.Step step, TableResult r) throws Exception {
        BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
        CloseableIterator<Row> it = r.collect();
        Thread reader = new Thread(() -> {
            try {
                while (it.hasNext()) {
                    queue.put(it.next());
                }
                queue.put(END);
            } catch (Throwable e) {
                queue.add(e);
            }
        }, "collect-" + step.line);
        reader.setDaemon(true);
        reader.start();

        List<String> rows = new ArrayList<>();
        try {
            List<String> during = step.all("during");
            if (!during.isEmpty()) {
                if (r.getJobClient().isPresent()) {
                    waitRunning(r.getJobClient().get());
                }
                Thread.sleep(Long.parseLong(orDefault(step.directive("startup-wait"), "3000")));
                for (String d : during) {
                    TableResult dr = tEnv.executeSql(subst(d));
                    if (dr.getJobClient().isPresent()) {
                        dr.await(120, TimeUnit.SECONDS);
                    }
                }
            }
            long deadline = System.nanoTime()
                    + TimeUnit.SECONDS.toNanos(Long.parseLong(orDefault(step.directive("timeout"), "90")));
            boolean fold = step.has("final");
            List<String> want = expectedSorted(step);
            boolean ended = false;
            while (fold ? !sorted(rows).equals(want) : rows.size() < step.expected.size()) {
                long left = deadline - System.nanoTime();
                Object o = left > 0 ? queue.poll(left, TimeUnit.NANOSECONDS) : null;
                if (o == null) {
                    throw new AssertionError("timed out with " + rows.size() + " rows"
                            + (fold ? " in the folded result" : " of " + step.expected.size()) + ":\n"
                            + String.join("\n", rows));
                }
                if (o == END) {
                    ended = true;
                    break;
                }
                if (o instanceof Throwable) {
                    throw new RuntimeException("query failed", (Throwable) o);
                }
                take(rows, (Row) o, fold);
            }
            if (!ended) {
                long graceEnd = System.nanoTime()
                        + TimeUnit.MILLISECONDS.toNanos(Long.parseLong(orDefault(step.directive("grace"), "1500")));
                while (true) {
                    long left = graceEnd - System.nanoTime();
                    Object o = left > 0 ? queue.poll(left, TimeUnit.NANOSECONDS) : null;
                    if (o == null || o == END) {
                        break;
                    }
                    if (o instanceof Throwable) {
                        throw new RuntimeException("query failed", (Throwable) o);
                    }
                    take(rows, (Row) o, fold);
                }
            }
        } finally {
            // Measured before close: the query's connections end with its job.
            if (socketsBefore != null) {
                moved = bytesSince(socketsBefore);
            }
            try {
                it.close();
            } catch (Exception ignored) {
                // the job is cancelled by close; its end is not our concern
            }
        }
        return rows;
    }

    /** Adds a row as it arrived, or (fold) applies it to the materialized result. */
    private static void take(List<String> rows, Row row, boolean fold) {
        if (!fold) {
            rows.add(row.toString());
            return;
        }
        RowKind kind = row.getKind();
        row.setKind(RowKind.INSERT);
        String key = row.toString();
        if (kind == RowKind.INSERT || kind == RowKind.UPDATE_AFTER) {
            rows.add(key);
        } else if (!rows.remove(key)) {
            throw new AssertionError("retraction of a row not in the result: " + kind.shortString() + key.substring(2));
        }
    }

    private static List<String> sorted(List<String> rows) {
        List<String> out = new ArrayList<>(rows);
        Collections.sort(out);
        return out;
    }

    private List<String> expectedSorted(Script.Step step) {
        List<String> want = new ArrayList<>();
        for (String e : step.expected) {
            want.add(subst(e));
        }
        Collections.sort(want);
        return want;
    }

    private static void waitRunning(JobClient j) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            JobStatus s = j.getJobStatus().get(10, TimeUnit.SECONDS);
            if (s == JobStatus.RUNNING) {
                return;
            }
            if (s.isGloballyTerminalState()) {
                throw new AssertionError("job ended as " + s + " before running");
            }
            Thread.sleep(50);
        }
        throw new AssertionError("job not running after 60 s");
    }

    private void check(Script.Step step, List<String> actual) {
        List<String> want = new ArrayList<>();
        for (String e : step.expected) {
            want.add(subst(e));
        }
        List<String> got = new ArrayList<>(actual);
        if (!step.has("ordered") || step.has("final")) {
            Collections.sort(want);
            Collections.sort(got);
        }
        if (!want.equals(got)) {
            throw new AssertionError("rows differ\n  expected (" + want.size() + "):\n    "
                    + String.join("\n    ", want) + "\n  actual (" + got.size() + "):\n    "
                    + String.join("\n    ", got));
        }
    }

    /**
     * Bytes each established TCP connection of the server ports has sent
     * (tcp_info bytes_sent, from ss), keyed by its address pair. It counts
     * what reaches the wire whatever the server writes with (write, sendfile).
     */
    private Map<String, Long> serverSockets() {
        Map<String, Long> out = new HashMap<>();
        if (ports.isEmpty()) {
            throw new IllegalStateException("server-bytes directives need --ports");
        }
        StringBuilder filter = new StringBuilder("( ");
        for (int i = 0; i < ports.size(); i++) {
            filter.append(i == 0 ? "" : " or ").append("sport = :").append(ports.get(i));
        }
        filter.append(" )");
        try {
            Process p = new ProcessBuilder("ss", "-tinH", "state", "established", filter.toString())
                    .redirectErrorStream(true).start();
            String text = new String(p.getInputStream().readAllBytes());
            p.waitFor(10, TimeUnit.SECONDS);
            String key = null;
            for (String line : text.split("\n")) {
                String[] f = line.trim().split("\\s+");
                if (f.length >= 4 && f[0].matches("\\d+") && f[1].matches("\\d+")) {
                    key = f[2] + " " + f[3];
                    continue;
                }
                Matcher m = SENT.matcher(line);
                if (key != null && m.find()) {
                    out.put(key, Long.parseLong(m.group(1)));
                    key = null;
                }
            }
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("cannot run ss", e);
        }
        return out;
    }

    private long bytesSince(Map<String, Long> before) {
        long total = 0;
        for (Map.Entry<String, Long> e : serverSockets().entrySet()) {
            total += e.getValue() - before.getOrDefault(e.getKey(), 0L);
        }
        return total;
    }

    private String subst(String s) {
        Matcher m = VAR.matcher(s);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String v = vars.get(m.group(1));
            if (v == null) {
                throw new IllegalArgumentException("unknown variable ${" + m.group(1) + "}");
            }
            m.appendReplacement(out, Matcher.quoteReplacement(v));
        }
        m.appendTail(out);
        return out.toString();
    }

    private static boolean causeChainHas(Throwable e, String text) {
        String want = text.toLowerCase(Locale.ROOT);
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (String.valueOf(t.getMessage()).toLowerCase(Locale.ROOT).contains(want)) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return firstLine(String.valueOf(t.getMessage()));
    }

    private static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder();
        int depth = 0;
        for (Throwable t = e; t != null && depth < 12; t = t.getCause(), depth++) {
            sb.append(depth == 0 ? "" : "caused by: ").append(t.getClass().getName()).append(": ")
                    .append(t.getMessage()).append('\n');
            if (t.getCause() == t) {
                break;
            }
        }
        return sb.toString().trim();
    }

    private static String firstLine(String s) {
        String one = s.replaceAll("\\s+", " ").trim();
        return one.length() > 100 ? one.substring(0, 97) + "..." : one;
    }

    private static String indent(String s) {
        return "      " + s.replace("\n", "\n      ");
    }

    private static String orDefault(String v, String d) {
        return v == null || v.isEmpty() ? d : v;
    }
}
