package flussc.flink;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A SQL test script, parsed into steps.
 *
 * <p>A script is Flink SQL with two kinds of special comment lines:
 *
 * <pre>
 *   --! directive [argument]     applies to the next statement (or stands alone)
 *   --> +I[1, a]                 a row the previous statement must return
 * </pre>
 *
 * Statements end with a line whose last non-blank character is ';'. Plain
 * "--" comments are ignored. {@code ${name}} in statements and directives is
 * replaced by the runner's variables (bootstrap, db, and marks).
 */
final class Script {

    /** One statement with the directives written above it and its rows. */
    static final class Step {
        final int line;
        final String sql;             // null for a step that is only directives
        final List<String[]> directives = new ArrayList<>();
        final List<String> expected = new ArrayList<>();

        Step(int line, String sql) {
            this.line = line;
            this.sql = sql;
        }

        String directive(String name) {
            String found = null;
            for (String[] d : directives) {
                if (d[0].equals(name)) {
                    found = d[1];
                }
            }
            return found;
        }

        boolean has(String name) {
            for (String[] d : directives) {
                if (d[0].equals(name)) {
                    return true;
                }
            }
            return false;
        }

        List<String> all(String name) {
            List<String> out = new ArrayList<>();
            for (String[] d : directives) {
                if (d[0].equals(name)) {
                    out.add(d[1]);
                }
            }
            return out;
        }
    }

    /** Directives that act on their own, where they stand. */
    static boolean standsAlone(String name) {
        return name.equals("mode") || name.equals("mark") || name.equals("sleep")
                || name.equals("stop-with-savepoint") || name.equals("cancel");
    }

    final String name;
    final List<Step> steps = new ArrayList<>();

    private Script(String name) {
        this.name = name;
    }

    static Script parse(Path file) throws IOException {
        String fileName = file.getFileName().toString();
        Script s = new Script(fileName.replaceFirst("\\.sql$", ""));
        List<String> lines = Files.readAllLines(file);
        List<String[]> pending = new ArrayList<>();
        StringBuilder sql = new StringBuilder();
        int sqlLine = 0;
        Step last = null;
        for (int i = 0; i < lines.size(); i++) {
            String raw = lines.get(i);
            String t = raw.trim();
            if (t.startsWith("-->")) {
                if (last == null || last.sql == null) {
                    throw new IOException(fileName + ":" + (i + 1) + ": expected row without a statement");
                }
                last.expected.add(t.substring(3).trim());
                continue;
            }
            if (t.startsWith("--!")) {
                String body = t.substring(3).trim();
                int sp = body.indexOf(' ');
                String dname = sp < 0 ? body : body.substring(0, sp);
                String arg = sp < 0 ? "" : body.substring(sp + 1).trim();
                if (dname.endsWith(":")) {
                    dname = dname.substring(0, dname.length() - 1);
                }
                if (standsAlone(dname) && sql.length() == 0) {
                    Step d = new Step(i + 1, null);
                    d.directives.add(new String[] {dname, arg});
                    s.steps.add(d);
                    last = null;
                } else {
                    pending.add(new String[] {dname, arg});
                }
                continue;
            }
            if (t.startsWith("--") || (t.isEmpty() && sql.length() == 0)) {
                continue;
            }
            if (sql.length() == 0) {
                sqlLine = i + 1;
            }
            sql.append(raw).append('\n');
            if (t.endsWith(";")) {
                String text = sql.toString().trim();
                text = text.substring(0, text.length() - 1).trim();
                Step st = new Step(sqlLine, text);
                st.directives.addAll(pending);
                pending.clear();
                s.steps.add(st);
                last = st;
                sql.setLength(0);
            }
        }
        if (sql.length() > 0) {
            throw new IOException(fileName + ":" + sqlLine + ": statement without ';'");
        }
        if (!pending.isEmpty()) {
            throw new IOException(fileName + ": directives after the last statement");
        }
        return s;
    }
}
