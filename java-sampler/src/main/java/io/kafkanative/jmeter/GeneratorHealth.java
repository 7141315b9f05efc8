package io.kafkanative.jmeter;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.jmeter.util.JMeterUtils;

/**
 * The load generator's own health during a test: JMeter's process (the native engine included), sampled once a
 * second on a daemon thread, so that a run whose numbers were bounded by the generator is flagged instead of trusted.
 *
 * <p>Per second: the process's and the machine's CPU load ({@code com.sun.management.OperatingSystemMXBean}), GC pause
 * time and count (every {@code GarbageCollectorMXBean} except concurrent-cycle ones, whose time is not a pause), heap
 * still used after the last GC (heap pools' collection usage), the resident set size ({@code /proc/self/status}) and the
 * native memory in use by malloc (glibc's mallinfo2, through the engine): librdkafka's queues and buffers, the engine's,
 * and the JVM's own mallocs, none of which the heap figures show.
 *
 * <p>The generator is reported as the bottleneck when, on average over the test, one of these passed its
 * {@link Limit} (a JMeter property each, in %): process CPU of all cores, machine CPU (the generator then competed for
 * CPU, e.g. with brokers on the same host), GC pauses of the test's duration, heap used after GC of the maximum heap
 * (full GCs follow).
 */
final class GeneratorHealth {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The limits the test's averages are judged against: a JMeter property each (in %) and its default. */
    enum Limit {
        PROCESS_CPU("kafka.generator.cpu.limit", 80, "process_cpu"),
        MACHINE_CPU("kafka.generator.machine.cpu.limit", 90, "machine_cpu"),
        GC("kafka.generator.gc.limit", 5, "gc"),
        HEAP("kafka.generator.heap.limit", 80, "heap_after_gc");

        final String property;
        final double fallback;
        /** Its name in the summary's {@code limits_pct} block. */
        final String json;

        Limit(String property, double fallback, String json) {
            this.property = property;
            this.fallback = fallback;
            this.json = json;
        }

        /**
         * The property's value ("85" or "85%"), blank for the default. A value that is not a percentage above 0 and
         * at most 100 is refused ({@link IllegalArgumentException} saying so): -5 would call every run the bottleneck,
         * 1000 or NaN would switch the check off unnoticed.
         */
        double value() {
            String value = JMeterUtils.getPropDefault(property, "");
            if (value.isBlank()) {
                return fallback;
            }
            String text = value.trim();
            double limit;
            try {
                limit = Double.parseDouble(text.endsWith("%") ? text.substring(0, text.length() - 1).trim() : text);
            } catch (NumberFormatException e) {
                limit = Double.NaN;
            }
            if (!(limit > 0 && limit <= 100)) { // NaN fails both
                throw new IllegalArgumentException(property + "=" + text + ": a limit is a percentage above 0 and at "
                        + "most 100 (the default is " + plain(fallback) + "%); leave it unset for the default");
            }
            return limit;
        }
    }

    /** Why a generator limit property cannot be used (see {@link Limit#value}), or null when all are valid. */
    static String limitsError() {
        List<String> problems = new ArrayList<>();
        for (Limit limit : Limit.values()) {
            try {
                limit.value();
            } catch (IllegalArgumentException e) {
                problems.add(e.getMessage());
            }
        }
        return problems.isEmpty() ? null : String.join("; ", problems);
    }

    /** Below this many samples (seconds) the averages say nothing: no judgement. */
    static final int MIN_SAMPLES = 2;

    private static final long PERIOD_MS = 1000;
    private static final double MB = 1024.0 * 1024.0;

    private final com.sun.management.OperatingSystemMXBean os;
    private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    private final List<GarbageCollectorMXBean> collectors = new ArrayList<>();
    private final List<MemoryPoolMXBean> heapPools = new ArrayList<>();
    private final int cores = Runtime.getRuntime().availableProcessors();
    private final long startNanos = System.nanoTime();
    private final long gcTimeAtStart;
    private final long gcCountAtStart;
    private final Thread thread;

    // Written by the sampling thread, read by stop() after joining it.
    private final Figure processCpu = new Figure();
    private final Figure machineCpu = new Figure();
    private final Figure heapAfterGcMb = new Figure();
    private final Figure rssMb = new Figure();
    private final Figure nativeMb = new Figure();
    private int samples;
    private volatile boolean stopping;

    /** Mean and maximum of a series (values below 0 mean "not available" and are skipped). */
    static final class Figure {
        private double sum;
        private double max = Double.NaN;
        private int n;

        void add(double v) {
            if (v < 0 || Double.isNaN(v)) {
                return;
            }
            sum += v;
            n++;
            max = Double.isNaN(max) ? v : Math.max(max, v);
        }

        double mean() {
            return n == 0 ? Double.NaN : sum / n;
        }

        double max() {
            return max;
        }

        ObjectNode json() {
            ObjectNode figure = JSON.createObjectNode();
            put(figure, "mean", mean());
            put(figure, "max", max);
            return figure;
        }
    }

    private GeneratorHealth() {
        os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            // G1's and ZGC's concurrent cycles run beside the application: their time is not a pause.
            if (!gc.getName().contains("Concurrent") && !gc.getName().contains("Cycles")) {
                collectors.add(gc);
            }
        }
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                heapPools.add(pool);
            }
        }
        // Each load is measured since the previous call: this one sets the start of the first second.
        os.getProcessCpuLoad();
        os.getCpuLoad();
        gcTimeAtStart = gcTime();
        gcCountAtStart = gcCount();
        thread = new Thread(this::run, "kafka-generator-health");
        thread.setDaemon(true); // never keeps JMeter alive
    }

    /** Starts sampling now. */
    static GeneratorHealth start() {
        GeneratorHealth health = new GeneratorHealth();
        health.thread.start();
        return health;
    }

    private void run() {
        while (!stopping) {
            try {
                Thread.sleep(PERIOD_MS);
            } catch (InterruptedException e) {
                return;
            }
            sample();
        }
    }

    private void sample() {
        processCpu.add(os.getProcessCpuLoad() * 100);
        machineCpu.add(os.getCpuLoad() * 100);
        long afterGc = 0;
        for (MemoryPoolMXBean pool : heapPools) {
            MemoryUsage usage = pool.getCollectionUsage();
            afterGc += usage == null ? 0 : usage.getUsed();
        }
        if (gcCount() > 0) {
            heapAfterGcMb.add(afterGc / MB);
        }
        long rss = rssBytes();
        if (rss > 0) {
            rssMb.add(rss / MB);
        }
        nativeMb.add(NativeVerdict.mallocInUse() / MB);
        samples++;
    }

    private long gcTime() {
        return collectors.stream().mapToLong(gc -> Math.max(0, gc.getCollectionTime())).sum();
    }

    private long gcCount() {
        return collectors.stream().mapToLong(gc -> Math.max(0, gc.getCollectionCount())).sum();
    }

    /** VmRSS of /proc/self/status in bytes, or -1 where there is no such file (not Linux). */
    static long rssBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException | SecurityException e) {
            return -1;
        }
        return -1;
    }

    /** The report at the end of the test. */
    record Report(String json, String warning) {
    }

    /** Stops sampling and reports: the summary's {@code generator} block, and the warning line (null if none). */
    Report stop() {
        stopping = true;
        thread.interrupt();
        try {
            thread.join(2 * PERIOD_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sample(); // the last (partial) second: a test shorter than a second still gets one reading
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        double gcPauseMs = gcTime() - gcTimeAtStart;
        double gcPct = seconds > 0 ? 100 * gcPauseMs / (seconds * 1000) : 0;
        long maxHeap = memory.getHeapMemoryUsage().getMax();
        double heapPct = maxHeap > 0 ? 100 * heapAfterGcMb.max() * MB / maxHeap : Double.NaN;

        Map<Limit, Double> limits = new EnumMap<>(Limit.class);
        for (Limit limit : Limit.values()) {
            limits.put(limit, limit.value());
        }
        double cpuLimit = limits.get(Limit.PROCESS_CPU);
        double machineLimit = limits.get(Limit.MACHINE_CPU);
        double gcLimit = limits.get(Limit.GC);
        double heapLimit = limits.get(Limit.HEAP);
        List<String> reasons = new ArrayList<>();
        if (samples >= MIN_SAMPLES) {
            if (processCpu.mean() >= cpuLimit) {
                reasons.add(String.format(Locale.ROOT, "JMeter's process (engine included) used %.0f%% of the %d cores "
                        + "on average (limit %s%%, %s)", processCpu.mean(), cores, plain(cpuLimit), Limit.PROCESS_CPU.property));
            }
            if (machineCpu.mean() >= machineLimit) {
                reasons.add(String.format(Locale.ROOT, "the machine's CPU was %.0f%% busy on average (limit %s%%, %s): "
                        + "the generator competed for CPU with everything else on this host", machineCpu.mean(),
                        plain(machineLimit), Limit.MACHINE_CPU.property));
            }
            if (gcPct >= gcLimit) {
                reasons.add(String.format(Locale.ROOT, "GC pauses took %.1f%% of the test (%.0f ms; limit %s%%, %s): "
                        + "give JMeter more heap (HEAP) or lower the load", gcPct, gcPauseMs, plain(gcLimit), Limit.GC.property));
            }
            if (heapPct >= heapLimit) {
                reasons.add(String.format(Locale.ROOT, "%.0f%% of the heap was still in use after GC (limit %s%%, %s): "
                        + "the heap is too small for this test", heapPct, plain(heapLimit), Limit.HEAP.property));
            }
        }
        String warning = reasons.isEmpty() ? null
                : "the load generator was the bottleneck: " + String.join("; ", reasons)
                        + ". This run's throughput and latency are the generator's limits, not the system's.";
        ObjectNode json = JSON.createObjectNode();
        json.put("samples", samples);
        put(json, "seconds", seconds);
        json.put("cores", cores);
        json.set("process_cpu_pct", processCpu.json());
        json.set("machine_cpu_pct", machineCpu.json());
        ObjectNode gc = json.putObject("gc");
        put(gc, "pause_ms", gcPauseMs);
        gc.put("count", gcCount() - gcCountAtStart);
        put(gc, "pause_pct", gcPct);
        ObjectNode heap = json.putObject("heap");
        put(heap, "max_mb", maxHeap > 0 ? maxHeap / MB : Double.NaN);
        heap.set("used_after_gc_mb", heapAfterGcMb.json());
        put(heap, "used_after_gc_pct_of_max", heapPct);
        json.set("rss_mb", rssMb.json());
        json.set("native_malloc_mb", nativeMb.json());
        ObjectNode limitsPct = json.putObject("limits_pct");
        limits.forEach((limit, value) -> put(limitsPct, limit.json, value));
        json.put("bottleneck", warning != null);
        json.put("warning", warning);
        return new Report(json.toString(), warning); // ObjectNode.toString() is its JSON text
    }

    private static String plain(double v) {
        return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
    }

    /** A figure rounded to 3 decimals, or null for "not measured" (NaN, infinite). */
    static void put(ObjectNode node, String name, double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            node.putNull(name);
        } else {
            node.put(name, Math.round(v * 1000) / 1000.0);
        }
    }
}
