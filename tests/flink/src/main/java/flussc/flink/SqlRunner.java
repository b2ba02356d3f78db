package flussc.flink;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;

/**
 * Runs Flink SQL scripts against a Fluss server through the official
 * connector, each in a Flink MiniCluster inside this JVM.
 *
 * <pre>
 *   SqlRunner BOOTSTRAP [--ports PORT,...] SCRIPT_OR_DIR...
 * </pre>
 *
 * --ports names the server ports (the tablet servers') whose sent bytes the
 * server-bytes-* directives measure. Exit status: 0 when
 * every script passes, 1 when one fails, 2 on bad usage.
 */
public final class SqlRunner {

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: SqlRunner BOOTSTRAP [--ports PORT,...] SCRIPT_OR_DIR...");
            System.exit(2);
        }
        String bootstrap = args[0];
        List<Integer> ports = new ArrayList<>();
        List<Path> scripts = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--ports")) {
                for (String p : args[++i].split(",")) {
                    if (!p.isBlank()) {
                        ports.add(Integer.parseInt(p.trim()));
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

        // One MiniCluster for every job of the run: a job starts in well under
        // a second instead of bringing up a cluster of its own.
        Configuration conf = new Configuration();
        conf.setString("rest.bind-address", "127.0.0.1");
        conf.setString("rest.bind-port", "0");
        conf.setString("taskmanager.memory.network.min", "64 mb");
        conf.setString("taskmanager.memory.network.max", "64 mb");
        conf.setString("taskmanager.memory.managed.size", "128 mb");
        MiniCluster cluster = new MiniCluster(new MiniClusterConfiguration.Builder()
                .setConfiguration(conf).setNumTaskManagers(1).setNumSlotsPerTaskManager(8).build());
        cluster.start();
        URI rest = cluster.getRestAddress().get();

        List<String> failed = new ArrayList<>();
        long t0 = System.nanoTime();
        for (Path file : scripts) {
            Script script = Script.parse(file);
            long s0 = System.nanoTime();
            ScriptRun run = new ScriptRun(script, bootstrap, ports, rest);
            boolean ok = run.run();
            System.out.printf("[flink] %s %s (%.1f s)%n", ok ? "PASS" : "FAIL", script.name,
                    (System.nanoTime() - s0) / 1e9);
            if (!ok) {
                failed.add(script.name);
            }
        }
        System.out.printf("[flink] %d scripts, %d failed%s in %.1f s%n", scripts.size(), failed.size(),
                failed.isEmpty() ? "" : " " + failed, (System.nanoTime() - t0) / 1e9);
        cluster.close();
        System.exit(failed.isEmpty() ? 0 : 1);
    }
}
