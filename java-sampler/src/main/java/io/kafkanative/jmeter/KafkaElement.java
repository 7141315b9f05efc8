package io.kafkanative.jmeter;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import lombok.AccessLevel;
import lombok.Getter;
import lombok.Setter;

import org.apache.jmeter.samplers.AbstractSampler;
import org.apache.jmeter.samplers.Entry;
import org.apache.jmeter.samplers.SampleResult;
import org.apache.jmeter.testbeans.TestBean;
import org.apache.jmeter.testbeans.gui.PasswordEditor;
import org.apache.jmeter.testelement.TestStateListener;
import org.apache.jmeter.threads.AbstractThreadGroup;
import org.apache.jmeter.threads.JMeterContext;
import org.apache.jmeter.threads.JMeterContextService;
import org.apache.jmeter.threads.JMeterThread;
import org.apache.jmeter.testelement.property.PropertyIterator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the Kafka Producer, Consumer and Lag Monitor samplers share: a TestBean (JMeter builds the form from the
 * element's BeanInfo, {@link ElementSetting} tables) driving one {@link AbstractNativeSampler} per JMeter thread.
 *
 * <p>JMeter clones the element for each thread. A clone's first sample builds the engine's configuration from its
 * settings and the named {@link KafkaConnection} and opens the engine handle; every sample after that is one
 * native call, with only the per-sample fields ({@link #readSample}) passed. An element that is a
 * {@code ThreadListener} (the Kafka Consumer) closes its thread's handle when the thread ends
 * ({@link #closeAtThreadEnd}); the others' are closed at test end ({@link #testEnded}), on JMeter's thread, as for
 * the Java Request classes. Either way the engine's end-of-test report covers every thread.
 *
 * <p>Where the engine does not load (a laptop on macOS or Windows), the elements still appear, edit, save and
 * reopen: nothing here touches the engine before a sample. A run then ends with one failed sample saying so.
 *
 * @param <D> the engine sampler the element drives
 */
// Lombok writes each field's public getter and setter: JMeter's TestBean introspection needs one per property.
@Getter
@Setter
public abstract class KafkaElement<D extends AbstractNativeSampler<?>> extends AbstractSampler
        implements TestBean, TestStateListener {

    private static final long serialVersionUID = 1L;

    /** Every engine sampler opened by an element in this JVM and not yet closed: closed at test end. */
    private static final Set<AbstractNativeSampler<?>> OPEN = ConcurrentHashMap.newKeySet();
    /** Whether one sample of this test already reported that the engine does not load here. */
    private static final AtomicBoolean ENGINE_MISSING_REPORTED = new AtomicBoolean();
    /** Element name and property of each unknown property already warned about in this test. */
    private static final Set<String> UNKNOWN_WARNED = ConcurrentHashMap.newKeySet();
    private static final Logger LOG = LoggerFactory.getLogger(KafkaElement.class);

    // Not TestBean properties. Transient: JMeter serializes a plan's tree to a remote engine, which runs clones of
    // it, made by clone() through the public constructor, so these are set again wherever a sample runs.
    @Getter(AccessLevel.NONE)
    @Setter(AccessLevel.NONE)
    private transient D engine;
    @Getter(AccessLevel.NONE)
    @Setter(AccessLevel.NONE)
    private final transient List<ElementSetting> settings;
    @Getter(AccessLevel.NONE)
    @Setter(AccessLevel.NONE)
    private final transient Supplier<D> newEngine;

    // The one TestBean property declared here: the JDK gives the subclasses one shared descriptor of an inherited
    // property, so its label, tooltip and default must be the same in every element (they are). Every other
    // property is declared by its element (ElementsBeanInfoTest checks). The engine's configuration is read from
    // the element's JMeter properties (engineConfig); the fields only receive them.
    /** Connection: the name of the plan's Kafka Connection element whose cluster and security this uses. */
    private String connection = KafkaConnection.DEFAULT_NAME;

    /**
     * @param settings  the element's settings in form order (its BeanInfo's table)
     * @param newEngine makes the engine sampler of the element's kind; its constructor must stay cheap (no engine
     *                  loaded)
     */
    protected KafkaElement(List<ElementSetting> settings, Supplier<D> newEngine) {
        this.settings = settings;
        this.newEngine = newEngine;
    }

    /**
     * Hands the engine sampler what it takes with each sample (the producer: key and headers, as JMeter evaluated
     * them) and returns the value to pass (the producer's value for value.mode=jmeter), else null.
     */
    protected String readSample() {
        return null;
    }

    @Override
    public SampleResult sample(Entry entry) {
        if (engine == null) {
            engine = newEngine.get();
            engine.setup(getName(), this::engineConfig);
            OPEN.add(engine);
        }
        SampleResult result = engine.sample(getName(), readSample());
        if (result == null) {
            return null; // a setup failure another thread already reported: this thread has ended
        }
        if (AbstractNativeSampler.ENGINE_UNAVAILABLE.equals(result.getResponseCode())
                && !ENGINE_MISSING_REPORTED.compareAndSet(false, true)) {
            // One clear sample says the engine is missing; the other threads end without repeating it.
            JMeterThread thread = getThreadContext().getThread();
            if (thread != null) {
                thread.stop();
            }
            return null;
        }
        return result;
    }

    /**
     * The engine's configuration, [name0, value0, ...]: the Connection's cluster and security, this element's
     * non-blank settings, both client property lists as one {@code extra.properties}, and the thread's number and
     * group size. Read once per thread, at its first sample.
     */
    String[] engineConfig() {
        // The property, not the bean field: outside the GUI JMeter no longer sets the fields of once-read settings.
        warnUnknownProperties();
        String connectionName = getPropertyAsString("connection", KafkaConnection.DEFAULT_NAME);
        KafkaConnection.Registered cluster = KafkaConnection.lookup(connectionName, getName());
        List<String> config = new ArrayList<>(cluster.settings());
        String extra = cluster.clientProperties();
        for (ElementSetting setting : settings) {
            if (setting.key() == null) {
                continue; // Java-only (the Connection's name, the per-sample value): not evaluated here
            }
            String typed = getPropertyAsString(setting.property());
            String value = typed.trim();
            if (value.isEmpty()) {
                continue;
            }
            if (setting.editor() == PasswordEditor.class) {
                value = typed; // a password may begin or end with a space: a trimmed one is another password
            }
            if (setting.choices() == Choices.BOOLEAN && (value.equalsIgnoreCase("true") || value.equalsIgnoreCase("false"))) {
                // JMeter 5.6.3's form shows and saves a literal false of a true/false dropdown as "False".
                value = value.toLowerCase(Locale.ROOT);
            }
            if (setting.key().equals("extra.properties")) {
                extra = extra.isEmpty() ? value : extra + "\n" + value;
            } else {
                config.add(setting.key());
                config.add(value);
            }
        }
        if (!extra.isEmpty()) {
            config.add("extra.properties");
            config.add(extra);
        }
        JMeterContext context = JMeterContextService.getContext();
        AbstractThreadGroup group = context.getThreadGroup();
        if (group != null) {
            config.add(ProducerParameters.THREAD_NUMBER);
            config.add(String.valueOf(context.getThreadNum() + 1));
            config.add(ProducerParameters.THREAD_COUNT);
            config.add(String.valueOf(group.getNumThreads()));
        }
        return config.toArray(new String[0]);
    }

    /**
     * Says once per test and element which of its saved properties no setting reads: a property misspelt in a
     * hand-edited .jmx ({@code lingerMS} for {@code lingerMs}) would otherwise be ignored without a word.
     */
    private void warnUnknownProperties() {
        List<String> known = new ArrayList<>(List.of("connection"));
        settings.forEach(setting -> known.add(setting.property()));
        for (PropertyIterator it = propertyIterator(); it.hasNext(); ) {
            String name = it.next().getName();
            // JMeter's own (TestElement.name, TestPlan.comments, ...) are dotted; the elements' are camelCase.
            if (name.contains(".") || known.contains(name) || !UNKNOWN_WARNED.add(getName() + "\n" + name)) {
                continue;
            }
            String similar = known.stream().filter(k -> k.equalsIgnoreCase(name)).findFirst()
                    .map(k -> "; did you mean " + k + "?").orElse("; the element's settings are " + known);
            LOG.warn("{}: property {} is not a setting of this element and is ignored{}", getName(), name, similar);
        }
    }

    /**
     * Closes this thread's engine handle now, from the thread that sampled (JMeter's threadFinished): its totals go
     * to the end-of-test report. Nothing if the thread never sampled; the end-of-test close then skips it.
     */
    protected void closeAtThreadEnd() {
        D open = engine;
        if (open != null && OPEN.remove(open)) {
            open.threadEnded();
        }
    }

    /** The engine sampler, for the Interruptible kinds. */
    protected D engine() {
        return engine;
    }

    @Override
    public void testStarted() {
        ENGINE_MISSING_REPORTED.set(false);
        UNKNOWN_WARNED.clear();
    }

    @Override
    public void testStarted(String host) {
        testStarted();
    }

    /** Closes every handle the elements opened in this JVM (JMeter calls this once per element: the first closes all). */
    @Override
    public void testEnded() {
        Verdict.atTestEnd(); // also when no thread of this element ran: a verdict asked for is judged
        for (AbstractNativeSampler<?> open : OPEN) {
            if (OPEN.remove(open)) {
                open.teardown();
            }
        }
        AbstractNativeSampler.atTestEnd(); // the reports of the kinds whose handles all closed at their thread's end
    }

    @Override
    public void testEnded(String host) {
        testEnded();
    }
}
