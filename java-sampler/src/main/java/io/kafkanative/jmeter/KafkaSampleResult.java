package io.kafkanative.jmeter;

import java.nio.charset.StandardCharsets;

import org.apache.jmeter.samplers.SampleResult;

/**
 * One sample: the messages of one native send, as JMeter's listeners will show them.
 *
 * <p>A sample may stand for several messages and several errors. JMeter 5.6.3 honours {@code setSampleCount} but
 * ignores {@code setErrorCount} (it derives the error count from the success flag), so the number of failed
 * messages is reported by overriding {@link #getErrorCount()}. In distributed mode this class travels to the
 * controller, which therefore needs our jar too.
 */
public class KafkaSampleResult extends SampleResult {

    private static final long serialVersionUID = 1L;

    static {
        XmlResults.register();
    }

    private int failedMessages;

    public KafkaSampleResult() {
        setDataType(TEXT);
    }

    /** The failed messages; at least 1 if the sample failed for another reason (configuration, an assertion). */
    @Override
    public int getErrorCount() {
        return isSuccessful() ? 0 : Math.max(1, failedMessages);
    }

    /** How many of the sample's messages failed (the producer reports them per send). */
    void setFailedMessages(int failed) {
        failedMessages = failed;
    }

    /** A sample that made no native call, or whose call threw: a failed setup, a closed handle, an engine fault. */
    void fail(EngineError error) {
        setStampAndTime(System.currentTimeMillis(), 0);
        setSuccessful(false);
        setResponseCode(error.code());
        setResponseMessage(error.message());
        setResponseData(error.code() + ": " + error.message(), StandardCharsets.UTF_8.name());
    }
}
