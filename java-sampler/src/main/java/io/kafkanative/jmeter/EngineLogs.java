package io.kafkanative.jmeter;

import org.slf4j.Logger;

/** Moves the engine's and librdkafka's queued log lines ("LEVEL\tmessage", one per line) into JMeter's log. */
final class EngineLogs {

    private EngineLogs() {
    }

    static void forward(String lines, Logger log) {
        if (lines == null) {
            return;
        }
        for (String line : lines.split("\n")) {
            int tab = line.indexOf('\t');
            String level = tab < 0 ? "" : line.substring(0, tab);
            String message = line.substring(tab + 1);
            switch (level) {
                case "ERROR" -> log.error(message);
                case "WARN" -> log.warn(message);
                case "DEBUG" -> log.debug(message);
                default -> log.info(message);
            }
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
