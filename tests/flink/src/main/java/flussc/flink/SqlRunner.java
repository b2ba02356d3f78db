package flussc.flink;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Runs Flink SQL scripts against a Fluss server through the official
 * connector, each in a Flink MiniCluster inside this JVM.
 *
 * <pre>
 *   SqlRunner BOOTSTRAP [--pids PID,...] SCRIPT_OR_DIR...
 * </pre>
 *
 * --pids names the server processes whose bytes written (/proc/PID/io,
 * wchar) the "server-bytes-below" directive measures. Exit status: 0 when
 * every script passes, 1 when one fails, 2 on bad usage.
 */
public final class SqlRunner {

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: SqlRunner BOOTSTRAP [--pids PID,...] SCRIPT_OR_DIR...");
            System.exit(2);
        }
        String bootstrap = args[0];
        List<Long> pids = new ArrayList<>();
        List<Path> scripts = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--pids")) {
                for (String p : args[++i].split(",")) {
                    if (!p.isBlank()) {
                        pids.add(Long.parseLong(p.trim()));
                    }
                }
                continue;
            }
            Path p = Paths.get(args[i]);
            if (Files.isDirectory(p)) {
                try (Stream<Path> s = Files.list(p)) {
                    scripts.addAll(s.filter(f -> f.toString().endsWith(".sql")).sorted()
                            .collect(Collectors.toList()));
                }
            } else {
                scripts.add(p);
            }
        }

        List<String> failed = new ArrayList<>();
        long t0 = System.nanoTime();
        for (Path file : scripts) {
            Script script = Script.parse(file);
            long s0 = System.nanoTime();
            ScriptRun run = new ScriptRun(script, bootstrap, pids);
            boolean ok = run.run();
            System.out.printf("[flink] %s %s (%.1f s)%n", ok ? "PASS" : "FAIL", script.name,
                    (System.nanoTime() - s0) / 1e9);
            if (!ok) {
                failed.add(script.name);
            }
        }
        System.out.printf("[flink] %d scripts, %d failed%s in %.1f s%n", scripts.size(), failed.size(),
                failed.isEmpty() ? "" : " " + failed, (System.nanoTime() - t0) / 1e9);
        System.exit(failed.isEmpty() ? 0 : 1);
    }
}
