package io.kafkanative.jmeter;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import org.apache.jmeter.samplers.Interruptible;
import org.apache.jmeter.testbeans.gui.FileEditor;
import org.apache.jmeter.testbeans.gui.PasswordEditor;

/**
 * What the elements that carry records (Kafka Producer and Consumer) share beyond {@link KafkaElement}: a sample that
 * a stop can interrupt, and the Schema group's rows: one template for a side's schema settings, the schema registry
 * with its credentials. The properties themselves are each element's own (see {@link KafkaElement}'s fields).
 *
 * @param <D> the engine sampler the element drives
 */
public abstract class KafkaRecordsElement<D extends AbstractNativeSampler<?> & Interruptible> extends KafkaElement<D>
        implements Interruptible {

    private static final long serialVersionUID = 1L;

    /** The schema registry and its credentials, in form order, as both elements show them. */
    static final List<ElementSetting> REGISTRY = List.of(
            ElementSetting.text("schemaRegistryUrl", "schema.registry.url", "schema", ""),
            ElementSetting.choice("schemaRegistryAuth", "schema.registry.auth", "schema", "", Choices.REGISTRY_AUTH),
            ElementSetting.text("schemaRegistryUsername", "schema.registry.username", "schema", ""),
            ElementSetting.edited("schemaRegistryPassword", "schema.registry.password", "schema",
                    "", PasswordEditor.class),
            ElementSetting.edited("schemaRegistrySslCaLocation", "schema.registry.ssl.ca.location", "schema",
                    "", FileEditor.class),
            ElementSetting.edited("schemaRegistrySslCertificateLocation", "schema.registry.ssl.certificate.location",
                    "schema", "", FileEditor.class),
            ElementSetting.edited("schemaRegistrySslKeyLocation", "schema.registry.ssl.key.location", "schema",
                    "", FileEditor.class),
            ElementSetting.edited("schemaRegistrySslKeyPassword", "schema.registry.ssl.key.password", "schema",
                    "", PasswordEditor.class),
            ElementSetting.text("schemaRegistryTimeoutMs", "schema.registry.timeout.ms", "schema", ""));

    /** See {@link KafkaElement#KafkaElement}. */
    protected KafkaRecordsElement(List<ElementSetting> settings, Supplier<D> newEngine) {
        super(settings, newEngine);
    }

    @Override
    public boolean interrupt() {
        D engine = engine();
        return engine == null || engine.interrupt();
    }

    /**
     * One side's ("value" or "key") rows of the Schema group: {@code <side>SchemaFile} (a file field) and the
     * {@code names} after it, each a text field, or a dropdown where {@code choices} has the name; the engine key is
     * the side and the name dotted ({@code value.schema.rules.file}).
     */
    static List<ElementSetting> side(String side, List<String> names, java.util.Map<String, List<String>> choices) {
        List<ElementSetting> rows = new ArrayList<>();
        for (String name : names) {
            String property = side + name;
            String key = side + name.replaceAll("([A-Z])", ".$1").toLowerCase(java.util.Locale.ROOT);
            if (name.endsWith("File")) {
                rows.add(ElementSetting.edited(property, key, "schema", "", FileEditor.class));
            } else if (choices.containsKey(name)) {
                rows.add(ElementSetting.choice(property, key, "schema", "", choices.get(name)));
            } else {
                rows.add(ElementSetting.text(property, key, "schema", ""));
            }
        }
        return rows;
    }
}
