package io.kafkanative.jmeter;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import lombok.Getter;
import lombok.Setter;

import org.apache.jmeter.config.ConfigElement;
import org.apache.jmeter.engine.util.NoConfigMerge;
import org.apache.jmeter.testbeans.TestBean;
import org.apache.jmeter.testbeans.TestBeanHelper;
import org.apache.jmeter.testelement.AbstractTestElement;
import org.apache.jmeter.testelement.TestStateListener;
import org.apache.jmeter.testbeans.gui.FileEditor;
import org.apache.jmeter.testbeans.gui.PasswordEditor;
import org.apache.jmeter.testbeans.gui.TextAreaEditor;

/**
 * Kafka Connection: a plan's cluster and security in one config element, as JDBC Connection Configuration holds a
 * database pool. The Kafka samplers name it in their Connection field.
 *
 * <p>{@link NoConfigMerge}: JMeter does not copy its properties (the password among them) into the samplers in its
 * scope. At test start (before any thread samples) its settings are evaluated once and registered under its name in
 * this JVM; a sampler's first sample looks them up. The password is passed to the engine only: it is never logged,
 * and the engine shows secret values as {@code ***} in its messages.
 *
 * <p>Its Verdict group holds the test's pass/fail criteria, JUnit file and baseline ({@link Verdict}): used when the
 * JMeter properties {@code kafka.verdict}, {@code kafka.verdict.junit}, {@code kafka.verdict.baseline} are not set (a
 * property set on the command line wins over the field), so that a plan built in the GUI carries its own CI gate.
 */
// Lombok writes each field's public getter and setter: JMeter's TestBean introspection needs one per property.
@Getter
@Setter
public class KafkaConnection extends AbstractTestElement
        implements ConfigElement, NoConfigMerge, TestStateListener, TestBean {

    private static final long serialVersionUID = 1L;

    /** The name a new Connection and a new sampler start with. */
    static final String DEFAULT_NAME = "kafka";

    /** The Connection's settings in form order. */
    static final List<ElementSetting> SETTINGS = List.of(
            ElementSetting.text("connectionName", null, "cluster", DEFAULT_NAME),
            ElementSetting.text("bootstrapServers", "bootstrap.servers", "cluster",
                    "${__P(kafka.bootstrap,127.0.0.1:9092)}"),
            ElementSetting.choice("securityProtocol", "security.protocol", "security", "PLAINTEXT",
                    Choices.SECURITY_PROTOCOL),
            ElementSetting.choice("saslMechanism", "sasl.mechanism", "security", "PLAIN", Choices.SASL_MECHANISM),
            ElementSetting.text("username", "sasl.username", "security", ""),
            ElementSetting.edited("password", "sasl.password", "security", "", PasswordEditor.class),
            ElementSetting.edited("caFile", "ssl.ca.location", "security", "", FileEditor.class),
            // OAUTHBEARER with OIDC: the client-credentials grant at the identity provider (the engine fetches and
            // refreshes the tokens).
            ElementSetting.text("tokenEndpointUrl", "sasl.oauthbearer.token.endpoint.url", "oauth", ""),
            ElementSetting.text("oauthClientId", "sasl.oauthbearer.client.id", "oauth", ""),
            ElementSetting.edited("oauthClientSecret", "sasl.oauthbearer.client.secret", "oauth", "",
                    PasswordEditor.class),
            ElementSetting.text("oauthScope", "sasl.oauthbearer.scope", "oauth", ""),
            ElementSetting.text("oauthExtensions", "sasl.oauthbearer.extensions", "oauth", ""),
            // Mutual TLS: the client's own certificate (SSL or SASL_SSL).
            ElementSetting.edited("clientCertFile", "ssl.certificate.location", "tls", "", FileEditor.class),
            ElementSetting.edited("clientKeyFile", "ssl.key.location", "tls", "", FileEditor.class),
            ElementSetting.edited("clientKeyPassword", "ssl.key.password", "tls", "", PasswordEditor.class),
            ElementSetting.edited("clientProperties", "extra.properties", "client", "${__P(extra.properties,)}",
                    TextAreaEditor.class),
            // The test's verdict (Verdict.java): Java-side settings, not passed to the clients.
            ElementSetting.text("verdictCriteria", null, "verdict", ""),
            ElementSetting.edited("verdictJunit", null, "verdict", "", FileEditor.class),
            ElementSetting.edited("verdictBaseline", null, "verdict", "", FileEditor.class));

    /** A Connection's evaluated settings: engine pairs, and the client property list apart (merged by samplers). */
    record Registered(List<String> settings, String clientProperties) {
    }

    private static final Map<String, Registered> REGISTERED = new ConcurrentHashMap<>();
    /** The Connection element that registered each name: a second element of the same name is refused. */
    private static final Map<String, KafkaConnection> OWNERS = new ConcurrentHashMap<>();
    /** Names two Connections of the plan share: the samplers naming them fail instead of using either. */
    private static final Set<String> DUPLICATED = ConcurrentHashMap.newKeySet();

    private String connectionName = DEFAULT_NAME;
    private String bootstrapServers = "";
    private String securityProtocol = "PLAINTEXT";
    private String saslMechanism = "PLAIN";
    private String username = "";
    private String password = "";
    private String caFile = "";
    private String tokenEndpointUrl = "";
    private String oauthClientId = "";
    private String oauthClientSecret = "";
    private String oauthScope = "";
    private String oauthExtensions = "";
    private String clientCertFile = "";
    private String clientKeyFile = "";
    private String clientKeyPassword = "";
    private String clientProperties = "";
    private String verdictCriteria = "";
    private String verdictJunit = "";
    private String verdictBaseline = "";

    /** Evaluates the settings (functions such as __P included) and registers them under the Connection's name. */
    @Override
    public void testStarted() {
        setRunningVersion(true);
        TestBeanHelper.prepare(this);
        String name = connectionName.trim();
        KafkaConnection owner = OWNERS.putIfAbsent(name, this);
        if (owner != null && owner != this) {
            // Which one would win is the order JMeter happens to start them in: load and credentials could go to
            // another cluster.
            DUPLICATED.add(name);
            return;
        }
        REGISTERED.put(name, registered());
        Verdict.fromConnection(name,
                new Verdict.Settings(verdictCriteria, verdictBaseline, verdictJunit));
    }

    Registered registered() {
        List<String> pairs = new ArrayList<>();
        add(pairs, "bootstrap.servers", bootstrapServers);
        String protocol = securityProtocol.trim();
        // PLAINTEXT is librdkafka's own default: passed only when chosen otherwise, so that plans which set the
        // protocol in extra.properties or the client properties (as before the Connection element) keep working
        // instead of being refused as a protocol set twice.
        if (!protocol.equalsIgnoreCase("PLAINTEXT")) {
            add(pairs, "security.protocol", protocol);
        }
        if (protocol.toUpperCase(java.util.Locale.ROOT).startsWith("SASL")) {
            // SASL settings only where they apply: librdkafka warns about the others.
            add(pairs, "sasl.mechanism", saslMechanism);
            if (saslMechanism.trim().equalsIgnoreCase("OAUTHBEARER")) {
                // tokens from the identity provider (the only OAUTHBEARER the engine offers)
                add(pairs, "sasl.oauthbearer.method", "oidc");
                add(pairs, "sasl.oauthbearer.token.endpoint.url", tokenEndpointUrl);
                add(pairs, "sasl.oauthbearer.client.id", oauthClientId);
                addSecret(pairs, "sasl.oauthbearer.client.secret", oauthClientSecret);
                add(pairs, "sasl.oauthbearer.scope", oauthScope);
                add(pairs, "sasl.oauthbearer.extensions", oauthExtensions);
            } else {
                add(pairs, "sasl.username", username);
                addSecret(pairs, "sasl.password", password);
            }
        }
        add(pairs, "ssl.ca.location", caFile);
        add(pairs, "ssl.certificate.location", clientCertFile);
        add(pairs, "ssl.key.location", clientKeyFile);
        addSecret(pairs, "ssl.key.password", clientKeyPassword);
        return new Registered(List.copyOf(pairs), clientProperties.trim());
    }

    private static void add(List<String> pairs, String key, String value) {
        if (value != null && !value.isBlank()) {
            pairs.add(key);
            pairs.add(value.trim());
        }
    }

    /** A secret as typed: a password may begin or end with a space (a trimmed one would be another password). */
    private static void addSecret(List<String> pairs, String key, String value) {
        if (value != null && !value.isBlank()) {
            pairs.add(key);
            pairs.add(value);
        }
    }

    /**
     * The settings of the Connection named {@code name}, registered at test start in this JVM.
     *
     * @throws EngineException CONFIG_ERROR naming the Connections the plan has, when none has that name
     */
    static Registered lookup(String name, String sampler) {
        String wanted = name == null ? "" : name.trim();
        if (DUPLICATED.contains(wanted)) {
            throw new EngineException(Codes.CONFIG_ERROR, "connection: the plan has more than one Kafka Connection named '"
                    + wanted + "'; give each Connection its own name and set " + sampler
                    + "'s Connection to the one it should use");
        }
        Registered found = REGISTERED.get(wanted);
        if (found == null) {
            throw new EngineException(Codes.CONFIG_ERROR, "connection: no Kafka Connection named '" + wanted + "' in the"
                    + " plan (it has " + (REGISTERED.isEmpty() ? "none" : String.join(", ", REGISTERED.keySet()))
                    + "); add one (Add > Config Element > Kafka Connection) in scope of " + sampler
                    + ", or set the sampler's Connection to its name");
        }
        return found;
    }

    @Override
    public void testStarted(String host) {
        testStarted();
    }

    @Override
    public void testEnded() {
        Verdict.atTestEnd(); // before its verdict fields are forgotten: judged also when no sampler set up
        String name = connectionName.trim();
        if (OWNERS.remove(name, this)) {
            REGISTERED.remove(name);
            Verdict.forgetConnection(name);
        }
        DUPLICATED.remove(name);
    }

    @Override
    public void testEnded(String host) {
        testEnded();
    }

    /** Nothing to merge into samplers: they look the Connection up by name. */
    @Override
    public void addConfigElement(ConfigElement config) {
    }

    @Override
    public boolean expectsModification() {
        return false;
    }
}
