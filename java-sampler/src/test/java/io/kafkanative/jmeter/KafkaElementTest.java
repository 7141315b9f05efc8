package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The engine configuration a Kafka element builds from its Connection and its own settings (no engine, no broker). */
class KafkaElementTest {

    @BeforeAll
    static void jmeter() {
        TestJMeter.init();
    }

    private static KafkaConnection connection(String name) {
        KafkaConnection connection = new KafkaConnection();
        connection.setProperty("connectionName", name);
        connection.setProperty("bootstrapServers", "broker1:9093");
        connection.setProperty("securityProtocol", "SASL_SSL");
        connection.setProperty("saslMechanism", "SCRAM-SHA-512");
        connection.setProperty("username", "alice");
        connection.setProperty("password", "s3cret");
        connection.setProperty("caFile", "/etc/ca.pem");
        connection.setProperty("clientProperties", "client.id=a");
        return connection;
    }

    /** {@code element}, named after its class, set to use the Connection named {@code connection}. */
    private static <E extends KafkaElement<?>> E using(E element, String connection) {
        element.setName(element.getClass().getSimpleName());
        element.setProperty("connection", connection); // as a plan holds it (the element reads the property)
        return element;
    }

    /** Runs {@code body} while {@code cluster} is registered, as between a test's start and its end. */
    private static void whileRegistered(KafkaConnection cluster, Runnable body) {
        cluster.testStarted();
        try {
            body.run();
        } finally {
            cluster.testEnded();
        }
    }

    @Test
    void samplersTakeTheNamedConnectionAndMergeClientProperties() {
        whileRegistered(connection("east"), () -> {
            KafkaProducer producer = using(new KafkaProducer(), "east");
            producer.setProperty("topic", "orders");
            producer.setProperty("stampTime", "False"); // as the 5.6.3 GUI saves a literal false
            producer.setProperty("extraProperties", "linger.ms=5");
            List<String> config = Arrays.asList(producer.engineConfig());

            assertEquals(List.of("bootstrap.servers", "broker1:9093", "security.protocol", "SASL_SSL",
                    "sasl.mechanism", "SCRAM-SHA-512", "sasl.username", "alice", "sasl.password", "s3cret",
                    "ssl.ca.location", "/etc/ca.pem"), config.subList(0, 12));
            assertEquals("orders", config.get(config.indexOf("topic") + 1));
            assertEquals("false", config.get(config.indexOf("stamp.time") + 1));
            assertEquals("client.id=a\nlinger.ms=5", config.get(config.indexOf("extra.properties") + 1));
            assertFalse(config.contains("value"), "the value goes with each sample, not in the configuration");
        });
    }

    @Test
    void anUnknownConnectionNameIsOneClearConfigurationError() {
        whileRegistered(connection("east"), () -> {
            KafkaConsumer consumer = using(new KafkaConsumer(), "west");
            EngineException e = assertThrows(EngineException.class, consumer::engineConfig);
            assertEquals("CONFIG_ERROR", e.code());
            assertTrue(e.getMessage().contains("no Kafka Connection named 'west'") && e.getMessage().contains("east"),
                    e.getMessage());
            assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
        });
    }

    @Test
    void saslSettingsApplyOnlyToSaslProtocols() {
        KafkaConnection plain = connection("plain");
        plain.setProperty("securityProtocol", "SSL");
        whileRegistered(plain, () -> {
            List<String> settings = KafkaConnection.lookup("plain", "s").settings();
            assertFalse(settings.contains("sasl.password") || settings.contains("sasl.username"), settings.toString());
            assertTrue(settings.contains("ssl.ca.location"), settings.toString());
        });
    }

    @Test
    void oauthbearerPassesTheTokenEndpointAndClientInsteadOfAPasswordAndTheClientCertificateAnyway() {
        KafkaConnection oauth = connection("oauth");
        oauth.setProperty("saslMechanism", "OAUTHBEARER");
        oauth.setProperty("tokenEndpointUrl", "https://idp/token");
        oauth.setProperty("oauthClientId", "loadtest");
        oauth.setProperty("oauthClientSecret", " secret ");
        oauth.setProperty("oauthScope", "kafka");
        oauth.setProperty("oauthExtensions", " logicalCluster=lkc-abc12,identityPoolId=pool-Xyz9 ");
        oauth.setProperty("clientCertFile", "/etc/client.pem");
        oauth.setProperty("clientKeyFile", "/etc/client.key");
        oauth.setProperty("clientKeyPassword", "kp");
        whileRegistered(oauth, () -> {
            List<String> settings = KafkaConnection.lookup("oauth", "s").settings();
            assertEquals(List.of("bootstrap.servers", "broker1:9093", "security.protocol", "SASL_SSL",
                    "sasl.mechanism", "OAUTHBEARER", "sasl.oauthbearer.method", "oidc",
                    "sasl.oauthbearer.token.endpoint.url", "https://idp/token", "sasl.oauthbearer.client.id",
                    "loadtest", "sasl.oauthbearer.client.secret", " secret ", "sasl.oauthbearer.scope", "kafka",
                    "sasl.oauthbearer.extensions", "logicalCluster=lkc-abc12,identityPoolId=pool-Xyz9",
                    "ssl.ca.location", "/etc/ca.pem", "ssl.certificate.location", "/etc/client.pem",
                    "ssl.key.location", "/etc/client.key", "ssl.key.password", "kp"), settings);
        });
    }

    @Test
    void oauthSettingsApplyOnlyToOauthbearer() {
        KafkaConnection plain = connection("sasl-plain");
        plain.setProperty("saslMechanism", "PLAIN");
        plain.setProperty("tokenEndpointUrl", "https://idp/token");
        plain.setProperty("oauthScope", "kafka");
        plain.setProperty("oauthExtensions", "logicalCluster=lkc-abc12");
        whileRegistered(plain, () -> {
            List<String> settings = KafkaConnection.lookup("sasl-plain", "s").settings();
            assertEquals(List.of("bootstrap.servers", "broker1:9093", "security.protocol", "SASL_SSL",
                    "sasl.mechanism", "PLAIN", "sasl.username", "alice", "sasl.password", "s3cret",
                    "ssl.ca.location", "/etc/ca.pem"), settings);
        });
    }

    @Test
    void emptyOauthScopeAndExtensionsAreNotPassed() {
        KafkaConnection oauth = connection("bare");
        oauth.setProperty("saslMechanism", "OAUTHBEARER");
        oauth.setProperty("tokenEndpointUrl", "https://idp/token");
        oauth.setProperty("oauthClientId", "loadtest");
        oauth.setProperty("oauthClientSecret", "secret");
        oauth.setProperty("oauthScope", "");
        oauth.setProperty("oauthExtensions", "  ");
        whileRegistered(oauth, () -> {
            List<String> settings = KafkaConnection.lookup("bare", "s").settings();
            assertTrue(settings.contains("sasl.oauthbearer.client.id"), settings.toString());
            assertFalse(settings.contains("sasl.oauthbearer.scope"), settings.toString());
            assertFalse(settings.contains("sasl.oauthbearer.extensions"), settings.toString());
        });
    }

    @Test
    void twoConnectionsOfOneNameAreRefusedNotChosenBetween() {
        KafkaConnection first = connection("kafka");
        KafkaConnection second = connection("kafka");
        second.setProperty("bootstrapServers", "other:9092");
        first.testStarted();
        second.testStarted();
        try {
            KafkaProducer producer = using(new KafkaProducer(), "kafka");
            producer.setProperty("topic", "orders");
            EngineException e = assertThrows(EngineException.class, producer::engineConfig);
            assertEquals("CONFIG_ERROR", e.code());
            assertTrue(e.getMessage().contains("more than one Kafka Connection named 'kafka'"), e.getMessage());
        } finally {
            first.testEnded();
            second.testEnded();
        }
        whileRegistered(connection("kafka"), () -> KafkaConnection.lookup("kafka", "s"));
    }

    @Test
    void aPasswordIsPassedAsTypedSpacesIncluded() {
        KafkaConnection cluster = connection("spaced");
        cluster.setProperty("password", " pw ");
        whileRegistered(cluster, () -> {
            List<String> settings = KafkaConnection.lookup("spaced", "s").settings();
            assertEquals(" pw ", settings.get(settings.indexOf("sasl.password") + 1));
        });
    }
}
