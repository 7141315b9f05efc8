package io.kafkanative.jmeter;

import org.slf4j.Logger;

/** Moves the engine's and librdkafka's queued log lines ("LEVEL\tmessage", one per line) into JMeter's log. */
final class EngineLogs {

    private EngineLogs() {
    }

    static void forward(String lines, Logger log) {
        forward(lines, log, false);
    }

    /** As {@link #forward(String, Logger)}; with errorsAsWarnings, ERROR lines are logged at WARN. */
    static void forward(String lines, Logger log, boolean errorsAsWarnings) {
        if (lines == null) {
            return;
        }
        for (String line : lines.split("\n")) {
            int tab = line.indexOf('\t');
            String level = tab < 0 ? "" : line.substring(0, tab);
            String message = line.substring(tab + 1);
            switch (level) {
                case "ERROR" -> {
                    if (errorsAsWarnings) {
                        log.warn(message);
                    } else {
                        log.error(message);
                    }
                }
                case "WARN" -> log.warn(message);
                case "DEBUG" -> log.debug(message);
                default -> log.info(message);
            }
        }
    }

    /** Forwards the lines at DEBUG whatever their level: repeats of a failure already reported once. */
    static void demote(String lines, Logger log) {
        if (lines == null) {
            return;
        }
        for (String line : lines.split("\n")) {
            log.debug(line.substring(line.indexOf('\t') + 1));
        }
    }

    /** An end-of-test report (perf-test style lines): on stdout, where `jmeter -n` users look, and in jmeter.log. */
    static void printReport(String report, Logger log) {
        if (report == null) {
            return;
        }
        System.out.println(report);
        for (String line : report.split("\n")) {
            log.info(line);
        }
    }
}
