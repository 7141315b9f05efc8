package io.kafkanative.jmeter;

import java.beans.IntrospectionException;
import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.jmeter.JMeter;
import org.apache.jmeter.testbeans.BeanInfoSupport;
import org.slf4j.LoggerFactory;

/**
 * The form of a Kafka element, built from its {@link ElementSetting} table: one group per setting group, in table
 * order; every field required to be defined, with its default; enum settings as dropdowns of {@link Choices} that
 * still accept typed text (a {@code ${__P(name,default)}} for a CLI override; the engine validates the value).
 * Display names and tooltips are in the element's {@code <Element>Resources.properties}.
 */
abstract class KafkaBeanInfo extends BeanInfoSupport {

    protected KafkaBeanInfo(Class<? extends org.apache.jmeter.testbeans.TestBean> element, List<ElementSetting> settings) {
        super(element);
        Map<String, List<String>> groups = new LinkedHashMap<>();
        for (ElementSetting setting : settings) {
            groups.computeIfAbsent(setting.group(), g -> new ArrayList<>()).add(setting.property());
        }
        groups.forEach((group, names) -> createPropertyGroup(group, names.toArray(new String[0])));
        // The samplers read their settings once per thread; the Connection (a config element) keeps JMeter's
        // preparation, which is how its fields are filled before it registers.
        boolean readOnce = KafkaElement.class.isAssignableFrom(element) && withoutGui();
        for (ElementSetting setting : settings) {
            PropertyDescriptor p = property(setting.property());
            p.setValue(NOT_UNDEFINED, Boolean.TRUE);
            p.setValue(DEFAULT, setting.defaultValue());
            if (!setting.choices().isEmpty()) {
                p.setValue(TAGS, setting.choices().toArray(new String[0]));
                p.setValue(NOT_OTHER, Boolean.FALSE);
            }
            if (setting.editor() != null) {
                p.setPropertyEditorClass(setting.editor());
            }
            if (readOnce && !setting.perSample()) {
                preparedOnlyOnce(p);
            }
        }
        if (readOnce) {
            LoggerFactory.getLogger(element).info("{}: settings are read once per thread; JMeter prepares only {} "
                    + "before each sample (no GUI in this JVM)", element.getSimpleName(), settings.stream()
                    .filter(ElementSetting::perSample).map(ElementSetting::property).toList());
        }
    }

    /**
     * Whether this JVM runs tests with no GUI to show the forms: {@code jmeter -n} (JMeter's own flag, set before a
     * plan is loaded) or a {@code jmeter-server} engine, which JMeter starts with {@code -s} and does not flag.
     */
    static boolean withoutGui() {
        return JMeter.isNonGUI() || serverEngine(System.getProperty("sun.java.command", ""));
    }

    /** Whether a JVM's command line (the launcher's arguments) starts JMeter as a remote engine. */
    static boolean serverEngine(String command) {
        return Arrays.stream(command.trim().split("\\s+")).anyMatch(a -> a.equals("-s") || a.equals("--server"));
    }

    /**
     * Takes a once-read setting out of JMeter's per-sample preparation. Before every sample of a TestBean, JMeter
     * evaluates each property that has a write method (every {@code ${__P()}} again) and sets it by reflection: about
     * 5 µs per sample for the producer's 50 settings, on the CPU the broker shares (bench/element-cost). The engine
     * reads these settings once, from the element's properties at a thread's first sample ({@link
     * KafkaElement#engineConfig}), so outside the GUI only the per-sample fields keep their write method. The GUI's
     * form lists only properties with one, so a GUI JVM keeps them all (and a run from the GUI prepares them all).
     */
    private static void preparedOnlyOnce(PropertyDescriptor p) {
        try {
            p.setWriteMethod(null);
        } catch (IntrospectionException e) {
            throw new IllegalStateException("cannot take " + p.getName() + " out of per-sample preparation", e);
        }
    }
}
