package flussc.flink;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.flink.tiering.LakeTieringJobBuilder;

import java.util.concurrent.TimeUnit;

/**
 * Fluss 0.9.1's own lake tiering job (fluss-flink's LakeTieringJobBuilder with the
 * fluss-lake-iceberg plugin, Iceberg's Hadoop catalog) in a local Flink, against a
 * flussd with lake.tiering.mode: external: it asks the coordinator for tables through
 * LAKE_TIERING_HEARTBEAT, reads their logs, commits Iceberg snapshots and reports them
 * with PREPARE_/COMMIT_LAKE_TABLE_SNAPSHOT, as it would against the reference.
 *
 * <p>Usage: TieringJob BOOTSTRAP WAREHOUSE MAX_SECONDS [POLL]. POLL is the job's
 * tiering.poll.table.interval (default 500ms for tests; "default" keeps the job's own, 30 s).
 * Prints "[tiering] running" once the job is submitted, then runs until stdin closes (the
 * test's signal) or MAX_SECONDS pass, and cancels the job.
 */
public final class TieringJob {
    private TieringJob() {}

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String warehouse = args[1];
        long seconds = Long.parseLong(args[2]);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setRuntimeMode(RuntimeExecutionMode.STREAMING);
        env.setParallelism(2);
        Configuration fluss = new Configuration();
        fluss.setString("bootstrap.servers", bootstrap);
        String poll = args.length > 3 ? args[3] : "500ms";
        if (!poll.equals("default")) {
            fluss.setString("tiering.poll.table.interval", poll);
        }
        Configuration lake = new Configuration();
        lake.setString("type", "hadoop");
        lake.setString("warehouse", warehouse);
        JobClient job =
                LakeTieringJobBuilder.newBuilder(env, fluss, lake, new Configuration(), "iceberg")
                        .build();
        System.out.println("[tiering] running " + job.getJobID());
        System.out.flush();
        Thread stdin =
                new Thread(
                        () -> {
                            try {
                                while (System.in.read() >= 0) {
                                    // until the test closes stdin
                                }
                            } catch (Exception ignored) {
                                // closed
                            }
                        });
        stdin.setDaemon(true);
        stdin.start();
        stdin.join(TimeUnit.SECONDS.toMillis(seconds));
        String status = job.getJobStatus().get().toString();
        System.out.println("[tiering] status " + status);
        job.cancel().get(60, TimeUnit.SECONDS);
        System.out.println("[tiering] cancelled");
        System.out.flush();
        System.exit(0);
    }
}
