package io.kafkanative.jmeter;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import org.apache.jmeter.config.Arguments;
import org.apache.jmeter.protocol.java.sampler.JavaSamplerContext;
import org.apache.jmeter.testelement.TestElement;
import org.apache.jmeter.threads.AbstractThreadGroup;
import org.apache.jmeter.threads.JMeterContext;

/**
 * The producer sampler's parameters: the table the JMeter GUI shows, and its translation into the engine's
 * configuration.
 *
 * <p>Java only passes the parameters on; the engine validates them and explains mistakes. The one exception is
 * {@code value}, which is read again for every sample (it usually holds a variable such as {@code ${payload}}).
 */
final class ProducerParameters {

    record Parameter(String name, String defaultValue) {
    }

    static final String VALUE = "value";
    static final String KEY = "key";
    static final String HEADERS = "headers";
    static final String VALUE_MODE = "value.mode";
    /** The value mode in which each sample sends the {@code value} parameter (instead of a generated payload). */
    static final String VALUE_MODE_JMETER = "jmeter";
    /** With a schema mode (avro, json-schema, protobuf), this input sends the {@code value} parameter as JSON. */
    static final String SCHEMA_INPUT = "value.schema.input";
    static final String TIMEOUT_MS = "timeout.ms";
    static final String THREAD_NUMBER = "thread.number";
    static final String THREAD_COUNT = "thread.count";
    /** The engine's timeout.ms when none is set: policy capacity's ({@link #RELIABILITY_TIMEOUT_MS}: reliability's). */
    static final long DEFAULT_TIMEOUT_MS = 3000;
    static final long RELIABILITY_TIMEOUT_MS = 30000;

    /** The parameters and their defaults, in the order the GUI lists them. A blank default means "engine decides". */
    static final List<Parameter> DEFAULTS = List.of(
            new Parameter("bootstrap.servers", "${__P(kafka.bootstrap,127.0.0.1:9092)}"),
            new Parameter("topic", "${__P(kafka.topic,jmeter-kafka-native)}"),
            new Parameter("policy", "capacity"),              // capacity | reliability
            new Parameter("acks", ""),                        // blank: from policy
            new Parameter("retries", ""),
            new Parameter("enable.idempotence", ""),
            new Parameter("linger.ms", "0"),
            new Parameter("batch.size", ""),
            new Parameter("compression.type", "none"),
            new Parameter("producer.scope", "test"),          // test (a shared pool of producers) | thread
            new Parameter("producer.pool.size", ""),          // with scope test; blank: 4
            new Parameter(TIMEOUT_MS, ""),                    // blank: from policy (3000 capacity, 30000 reliability)
            new Parameter("messages.per.sample", "1"),
            new Parameter(VALUE_MODE, "fixed"),               // fixed | template | file | jmeter | avro | json-schema | protobuf
            new Parameter("record.size", "1024"),
            new Parameter("value.template", ""),
            new Parameter("payload.file", ""),
            new Parameter(VALUE, ""),                         // value.mode=jmeter: e.g. ${payload} from a CSV Data Set
            new Parameter("key.mode", "none"),                // none | sequence | random | fixed | template | avro | ...
            new Parameter(KEY, ""),                           // per sample: may hold ${user}
            new Parameter("value.schema.file", ""),           // .avsc | JSON Schema .json | .proto
            new Parameter("value.schema.message", ""),        // Protobuf message; blank: the file's first
            new Parameter("value.schema.subject", ""),        // the schema from the registry instead of a file
            new Parameter("value.schema.version", ""),        // with a subject; blank: latest
            new Parameter("value.schema.rules", ""),          // field rules: id = seq(1); status = choice(NEW,PAID)
            new Parameter("value.schema.rules.file", ""),     // the same, one rule per line
            new Parameter(SCHEMA_INPUT, ""),                  // blank/generate: random records; jmeter: encode value (JSON)
            new Parameter("key.schema.file", ""),             // key.mode=avro|json-schema|protobuf
            new Parameter("schema.registry.url", ""),         // e.g. http://host:8081 or .../apis/ccompat/v7 (Apicurio)
            new Parameter("schema.registry.username", ""),
            new Parameter("schema.registry.password", ""),
            new Parameter("schema.registry.ssl.ca.location", ""), // PEM file of the registry's CA
            new Parameter("schema.registry.auth", ""),        // blank/basic | oauthbearer: the connection's OIDC token
            new Parameter("schema.registry.ssl.certificate.location", ""), // mTLS to the registry: client cert PEM
            new Parameter("schema.registry.ssl.key.location", ""),         // its key (PEM)
            new Parameter("schema.registry.ssl.key.password", ""),         // an encrypted key's password
            new Parameter("auto.register.schemas", ""),       // blank/true: register file schemas; false: must exist
            new Parameter("value.subject.name.strategy", ""), // blank/topic | record | topic-record
            new Parameter(HEADERS, ""),                       // k=v;k2=v2, per sample
            new Parameter("partition", ""),
            new Parameter("preflight", "warn"),               // fail | warn | off: broker, topic, partitions vs threads
            new Parameter("topic.create", "false"),           // true: create the topic before load
            new Parameter("topic.partitions", ""),            // with topic.create; blank: broker default
            new Parameter("topic.replication", ""),           // with topic.create; blank: broker default
            new Parameter("target.rate", ""),                 // samples/s per thread, scheduled; blank: unpaced
            new Parameter("transactional.id.prefix", ""),     // transactions: id <prefix>-<thread>; needs acks=all
            new Parameter("transaction.samples", ""),         // samples per transaction; blank: 1
            new Parameter("transaction.abort.percent", ""),   // 0-100: share aborted on purpose; blank: 0
            new Parameter("stamp.time", "false"),             // true: header kn.sent.us for end-to-end latency
            new Parameter("audit", "false"),                  // true: audit headers, topic read back at test end
            new Parameter("extra.properties", ""));           // k=v separated by ';' or newlines

    private ProducerParameters() {
    }

    /** A GUI table: these parameters with their defaults. */
    static Arguments arguments(List<Parameter> table) {
        Arguments arguments = new Arguments();
        for (Parameter parameter : table) {
            arguments.addArgument(parameter.name(), parameter.defaultValue());
        }
        return arguments;
    }

    /**
     * The engine's configuration: [name0, value0, name1, value1, ...] of every non-blank parameter, trimmed but
     * for a secret (a password may begin or end with a space: a trimmed one is another password).
     * Parameters the user added in the GUI are included, so that the engine can reject a misspelt name, and so are
     * engine settings missing from the default table (preflight, topic.create, topic.partitions, ...).
     */
    static String[] engineConfig(JavaSamplerContext context) {
        List<String> config = new ArrayList<>();
        for (Iterator<String> names = context.getParameterNamesIterator(); names.hasNext(); ) {
            String name = names.next();
            String value = context.getParameter(name);
            if (isEngineParameter(name) && value != null && !value.isBlank()) {
                config.add(name.trim());
                config.add(isSecret(name) ? value : value.trim());
            }
        }
        addThreadInfo(config, context);
        return config.toArray(new String[0]);
    }

    /**
     * Tells the engine which JMeter thread opens the producer ({thread} in templates, 1-based like
     * ${__threadNum}) and how many threads the thread group has (its pre-flight check compares that with the
     * topic's partitions). Nothing to tell outside a running test.
     */
    private static void addThreadInfo(List<String> config, JavaSamplerContext context) {
        JMeterContext jmeter = context.getJMeterContext();
        AbstractThreadGroup group = jmeter.getThreadGroup();
        if (group == null) {
            return;
        }
        if (!context.containsParameter(THREAD_NUMBER)) {
            config.add(THREAD_NUMBER);
            config.add(String.valueOf(jmeter.getThreadNum() + 1));
        }
        if (!context.containsParameter(THREAD_COUNT)) {
            config.add(THREAD_COUNT);
            config.add(String.valueOf(group.getNumThreads()));
        }
    }

    /** JMeter adds its own parameters (the element's name as TestElement.name); {@code value} is sent per sample. */
    private static boolean isEngineParameter(String name) {
        return !name.isBlank() && !name.startsWith("TestElement.") && !name.equals(VALUE);
    }

    /** The value of {@code name} in an engine configuration ({@link #engineConfig}), or null if it is not set. */
    /** The keys whose values the engine treats as secrets (as its settings::is_secret): never trimmed. */
    static boolean isSecret(String key) {
        String k = key.trim().toLowerCase(java.util.Locale.ROOT);
        return k.contains("password") || k.contains("secret") || k.contains("jaas") || k.endsWith("key.pem");
    }

    static String setting(String[] config, String name) {
        for (int i = 0; i + 1 < config.length; i += 2) {
            if (config[i].equals(name)) {
                return config[i + 1];
            }
        }
        return null;
    }

    /** A number setting; {@code fallback} when it is missing or malformed (the engine reports a malformed one). */
    static long number(String[] config, String name, long fallback) {
        String value = setting(config, name);
        try {
            return value == null ? fallback : Long.parseLong(value);
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    /** The sample sends {@code value}: value.mode=jmeter, or a schema mode encoding JMeter's JSON. */
    static boolean valueFromJMeter(String[] config) {
        return VALUE_MODE_JMETER.equals(setting(config, VALUE_MODE))
                || VALUE_MODE_JMETER.equals(setting(config, SCHEMA_INPUT));
    }

    /** The sampler's send timeout, the policy's when not set (as in the engine); it only bounds the wait at close. */
    static long timeoutMs(String[] config) {
        boolean reliability = "reliability".equalsIgnoreCase(String.valueOf(setting(config, "policy")).trim());
        return number(config, TIMEOUT_MS, reliability ? RELIABILITY_TIMEOUT_MS : DEFAULT_TIMEOUT_MS);
    }

    /** The sample label, as JMeter's own JavaTest takes it: the element's name (JMeter fills it in if empty). */
    static String label(JavaSamplerContext context) {
        return context.getParameter(TestElement.NAME, "");
    }
}
