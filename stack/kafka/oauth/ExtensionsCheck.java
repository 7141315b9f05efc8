package io.kafkanative.stack;

import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.UnsupportedCallbackException;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerExtensionsValidatorCallback;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local stack's OAUTHBEARER listeners (scripts/kafka start --oauth): Kafka's own token checks, plus SASL
 * extensions as a cluster like Confluent Cloud's uses them. An extension {@code logicalCluster}, when a client sends
 * one, must name this cluster ({@value #CLUSTER}), else the broker refuses the authentication; every client's
 * extensions are logged with its token's expiry, so a test sees what the broker got at each (re-)authentication.
 * Kafka's own handler accepts any extension and logs none.
 */
public class ExtensionsCheck extends OAuthBearerValidatorCallbackHandler {
    /** The logical cluster this broker is. */
    public static final String CLUSTER = "lkc-local";

    private static final Logger LOG = LoggerFactory.getLogger(ExtensionsCheck.class);

    @Override
    public void handle(Callback[] callbacks) throws IOException, UnsupportedCallbackException {
        for (Callback callback : callbacks) {
            if (callback instanceof OAuthBearerExtensionsValidatorCallback) {
                check((OAuthBearerExtensionsValidatorCallback) callback);
            } else {
                super.handle(new Callback[] {callback});
            }
        }
    }

    private static void check(OAuthBearerExtensionsValidatorCallback callback) {
        Map<String, String> given = callback.inputExtensions().map();
        if (given.isEmpty()) {
            return;
        }
        LOG.info("SASL extensions of {} (token expiring {}): {}", callback.token().principalName(),
                callback.token().lifetimeMs(), new TreeMap<>(given));
        given.forEach((key, value) -> {
            if (key.equals("logicalCluster") && !value.equals(CLUSTER)) {
                callback.error(key, "this broker is logical cluster " + CLUSTER + ", not " + value);
            } else {
                callback.valid(key);
            }
        });
    }
}
