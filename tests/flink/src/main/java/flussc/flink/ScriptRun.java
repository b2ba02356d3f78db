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
 *   <li>{@code detach NAME} — start an INSERT job and go on, its client kept as NAME;</li>
 *   <li>{@code server-bytes-below N} / {@code server-bytes-above N} — the server
 *       processes wrote fewer / more than N bytes while the statement ran.</li>
 * </ul>
 * Directives that stand alone: {@code mode batch|streaming}, {@code mark NAME}
 * (NAME = now in epoch ms), {@code sleep MS}, {@code stop-with-savepoint NAME}
 * (NAME = the savepoint's path), {@code cancel NAME}.
 */
final class ScriptRun {
    private static final Pattern VAR = Pattern.compile("\\$\\{([A-Za-z0-9_]+)}");
    private static final Object END = new Object();

    private final Script script;
    private final List<Long> pids;
    private final Map<String, String> vars = new HashMap<>();
    private final Map<String, JobClient> jobs = new HashMap<>();
    private final List<String> session = new ArrayList<>();
    private final Path savepoints;
    private StreamTableEnvironment tEnv;

    ScriptRun(Script script, String bootstrap, List<Long> pids) throws IOException {
        this.script = script;
        this.pids = pids;
        String suffix = Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
        vars.put("bootstrap", bootstrap);
        vars.put("db", "fl_" + script.name.replaceAll("[^A-Za-z0-9]", "_") + "_" + suffix);
        savepoints = Files.createTempDirectory("flink-sp-");
        vars.put("savepoints", savepoints.toUri().toString());
        tEnv = newEnv(false);
    }

    private static StreamTableEnvironment newEnv(boolean batch) {
        Configuration conf = new Configuration();
        conf.setString("rest.bind-port", "0");
        conf.setString("parallelism.default", "1");
        conf.setString("taskmanager.numberOfTaskSlots", "4");
        conf.setString("execution.checkpointing.interval", "1 s");
        conf.setString("table.exec.resource.default-parallelism", "1");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(conf);
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
        long bytes0 = serverBytes();
        try {
            execute(step, sql);
        } catch (Throwable e) {
            if (error != null && causeChainHas(e, subst(error))) {
                return;
            }
            throw e;
        }
        if (error != null) {
            throw new AssertionError("expected an error containing '" + subst(error) + "', the statement succeeded");
        }
        long moved = serverBytes() - bytes0;
        String below = step.directive("server-bytes-below");
        String above = step.directive("server-bytes-above");
        if (below != null || above != null) {
            System.out.printf("[flink]     server wrote %d bytes%n", moved);
        }
        if (below != null && moved >= Long.parseLong(below)) {
            throw new AssertionError("server wrote " + moved + " bytes, expected fewer than " + below);
        }
        if (above != null && moved <= Long.parseLong(above)) {
            throw new AssertionError("server wrote " + moved + " bytes, expected more than " + above);
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

    private long serverBytes() {
        long total = 0;
        for (long pid : pids) {
            try {
                for (String line : Files.readAllLines(Paths.get("/proc/" + pid + "/io"))) {
                    if (line.startsWith("wchar:")) {
                        total += Long.parseLong(line.substring(6).trim());
                    }
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot read /proc/" + pid + "/io", e);
            }
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
