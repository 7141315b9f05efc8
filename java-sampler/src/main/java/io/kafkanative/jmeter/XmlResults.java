package io.kafkanative.jmeter;

import java.lang.reflect.Field;
import java.util.Properties;

import org.apache.jmeter.samplers.SampleResult;
import org.apache.jmeter.save.SaveService;
import org.apache.jmeter.save.converters.SampleResultConverter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.thoughtworks.xstream.XStream;
import com.thoughtworks.xstream.mapper.Mapper;

/**
 * Lets JMeter's XML result files ({@code jmeter.save.saveservice.output_format=xml}) record our samples.
 *
 * <p>JMeter writes XML results with an XStream whose {@link SampleResultConverter} accepts exactly
 * {@link SampleResult} (and HTTP results); a subclass falls to XStream's reflection converter, which cannot read
 * the JDK's collection internals on Java 17 ("No converter available"): every Kafka row was lost and the file left
 * broken. The same converter is registered here for {@link KafkaSampleResult}, and the class is written under
 * the element name {@code sample}, so the file reads back (listeners, the dashboard) as any JMeter results file;
 * its error count ({@code ec}) is the sample's failed messages. The XStream and its name table are private to
 * {@link SaveService}, so they are reached by reflection once; a JMeter that lays it out otherwise gets one warning, and CSV results are not
 * concerned.
 */
final class XmlResults {

    private static final Logger LOG = LoggerFactory.getLogger(XmlResults.class);

    private XmlResults() {
    }

    /** Registers the converter and the element name; called once, before the first Kafka sample exists. */
    static void register() {
        try {
            Field field = SaveService.class.getDeclaredField("JTLSAVER");
            field.setAccessible(true);
            XStream results = (XStream) field.get(null);
            results.registerConverter(new KafkaResultConverter(results.getMapper()));
            // SaveService names elements from its own table (a class it does not know keeps its class name);
            // <sample> still reads back as SampleResult, through the table the other way.
            Field names = SaveService.class.getDeclaredField("classToAlias");
            names.setAccessible(true);
            ((Properties) names.get(null)).setProperty(KafkaSampleResult.class.getName(),
                    SaveService.classToAlias(SampleResult.class.getName()));
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            LOG.warn("XML result files cannot record Kafka samples in this JMeter ({}): use CSV results, "
                    + "jmeter.save.saveservice.output_format=csv (JMeter's default)", e.toString());
        }
    }

    /** JMeter's own sample converter, for our result class. */
    static final class KafkaResultConverter extends SampleResultConverter {

        KafkaResultConverter(Mapper mapper) {
            super(mapper);
        }

        @Override
        public boolean canConvert(@SuppressWarnings("rawtypes") Class type) {
            return KafkaSampleResult.class.equals(type);
        }
    }
}
