package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.admin.Admin;

final class JavaAlterColumns {
    static void run(Connection conn, Admin admin) throws Exception {}
}
