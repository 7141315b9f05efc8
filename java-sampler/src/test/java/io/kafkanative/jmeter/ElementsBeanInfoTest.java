package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.beans.BeanInfo;
import java.beans.IntrospectionException;
import java.beans.Introspector;
import java.beans.PropertyDescriptor;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.ResourceBundle;
import java.util.Set;
import java.util.stream.Collectors;

import org.apache.jmeter.testbeans.TestBeanHelper;
import org.apache.jmeter.testbeans.gui.GenericTestBeanCustomizer;
import org.apache.jmeter.util.JMeterUtils;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What JMeter's TestBean GUI will show for each Kafka element, read through the same java.beans introspection the
 * GUI uses: every setting is a grouped property with a display name and a tooltip of its own, shows its default,
 * and an enum setting offers exactly the values of {@link Choices} (ChoicesTest holds those against the engine).
 */
class ElementsBeanInfoTest {

    /** BeanInfoSupport reads the Resources in JMeter's locale: without one (JMeter not started) it finds none. */
    @BeforeAll
    static void jmeter() {
        TestJMeter.init();
        JMeterUtils.initLocale();
    }

    private static final Map<Class<?>, List<ElementSetting>> ELEMENTS = Map.of(
            KafkaProducer.class, KafkaProducer.SETTINGS,
            KafkaConsumer.class, KafkaConsumer.SETTINGS,
            KafkaLagMonitor.class, KafkaLagMonitor.SETTINGS,
            KafkaConnection.class, KafkaConnection.SETTINGS);

    private static BeanInfo beanInfo(Class<?> element) throws IntrospectionException {
        // As JMeter's TestBeanGUI asks: the JDK merges the element's own <Element>BeanInfo into what it returns.
        BeanInfo info = Introspector.getBeanInfo(element);
        assertTrue(Arrays.stream(info.getPropertyDescriptors()).anyMatch(p -> p.getValue(GenericTestBeanCustomizer.GROUP) != null),
                element + ": its BeanInfo (" + element.getName() + "BeanInfo) was not found");
        return info;
    }

    private static Map<String, PropertyDescriptor> shown(BeanInfo info) {
        return Arrays.stream(info.getPropertyDescriptors())
                .filter(p -> !p.isHidden() && p.getValue(GenericTestBeanCustomizer.GROUP) != null)
                .collect(Collectors.toMap(PropertyDescriptor::getName, p -> p));
    }

    @ParameterizedTest
    @ValueSource(classes = {KafkaProducer.class, KafkaConsumer.class, KafkaLagMonitor.class, KafkaConnection.class})
    void everySettingIsShownWithANameATooltipAndItsDefault(Class<?> element) throws IntrospectionException {
        BeanInfo info = beanInfo(element);
        List<ElementSetting> settings = ELEMENTS.get(element);
        Map<String, PropertyDescriptor> shown = shown(info);

        assertEquals(settings.stream().map(ElementSetting::property).collect(Collectors.toSet()), shown.keySet(),
                element.getSimpleName() + ": the form shows exactly the table's settings");
        String title = ResourceBundle.getBundle(element.getName() + "Resources").getString("displayName");
        assertTrue(title.startsWith("Kafka "), title);
        assertEquals(title, info.getBeanDescriptor().getDisplayName(), "the element's name in JMeter's Add menu");
        Set<String> names = new LinkedHashSet<>();
        Set<String> tooltips = new LinkedHashSet<>();
        for (ElementSetting setting : settings) {
            PropertyDescriptor p = shown.get(setting.property());
            String where = element.getSimpleName() + "." + setting.property();
            assertNotNull(p.getWriteMethod(), where + " has a setter");
            assertFalse(p.getDisplayName().equals(setting.property()), where + ": no display name in Resources");
            assertFalse(p.getShortDescription().equals(p.getDisplayName()), where + ": no tooltip in Resources");
            assertFalse(p.getShortDescription().isBlank(), where + ": blank tooltip");
            assertTrue(names.add(p.getDisplayName()), where + ": display name shared: " + p.getDisplayName());
            assertTrue(tooltips.add(p.getShortDescription()), where + ": tooltip shared: " + p.getShortDescription());
            assertEquals(Boolean.TRUE, p.getValue(GenericTestBeanCustomizer.NOT_UNDEFINED), where);
            assertEquals(setting.defaultValue(), p.getValue(GenericTestBeanCustomizer.DEFAULT), where + " default");
            assertEquals(setting.group(), p.getValue(GenericTestBeanCustomizer.GROUP), where + " group");
            if (setting.defaultValue().isEmpty() && setting.key() != null) {
                assertTrue(p.getShortDescription().contains("empty"),
                        where + ": an empty field's meaning belongs in its tooltip: " + p.getShortDescription());
            }
        }
    }

    /** The settings JMeter sets on the element before every sample, as the form of {@code beanInfo} declares them. */
    private static Set<String> preparedBeforeEverySample(Class<?> element, boolean nonGui) throws IntrospectionException {
        Set<String> settings = ELEMENTS.get(element).stream().map(ElementSetting::property).collect(Collectors.toSet());
        // JMeter's own flag for a jmeter -n run (JMeter.isNonGUI()), set before any plan is loaded.
        if (nonGui) {
            System.setProperty("JMeter.NonGui", "true");
        }
        // As JMeter's TestBeanHelper asks, with the JDK's cached answers dropped before and after (an inherited
        // setting's descriptor is the superclass's cached one).
        Introspector.flushCaches();
        try {
            BeanInfo info = Introspector.getBeanInfo(element);
            return Arrays.stream(info.getPropertyDescriptors())
                    .filter(p -> !TestBeanHelper.isDescriptorIgnored(p))
                    .map(PropertyDescriptor::getName)
                    .filter(settings::contains)
                    .collect(Collectors.toSet());
        } finally {
            System.clearProperty("JMeter.NonGui");
            Introspector.flushCaches();
        }
    }

    /**
     * Outside the GUI, JMeter's preparation before every sample (each property evaluated again and set by reflection)
     * covers only the fields the element reads per sample; the GUI keeps every setting (its form lists only those).
     */
    @ParameterizedTest
    @ValueSource(classes = {KafkaProducer.class, KafkaConsumer.class, KafkaLagMonitor.class})
    void outsideTheGuiOnlyPerSampleFieldsArePreparedBeforeEverySample(Class<?> element) throws IntrospectionException {
        Set<String> perSample = ELEMENTS.get(element).stream()
                .filter(ElementSetting::perSample)
                .map(ElementSetting::property)
                .collect(Collectors.toSet());
        assertEquals(element == KafkaProducer.class ? Set.of("value", "key", "headers") : Set.of(), perSample,
                element.getSimpleName());
        assertEquals(perSample, preparedBeforeEverySample(element, true), element.getSimpleName() + " under jmeter -n");
        assertEquals(ELEMENTS.get(element).stream().map(ElementSetting::property).collect(Collectors.toSet()),
                preparedBeforeEverySample(element, false), element.getSimpleName() + " in the GUI: every setting");
    }

    /** A jmeter-server engine (which JMeter does not flag as non-GUI) is recognised from its command line. */
    @Test
    void aRemoteEngineIsAJvmWithoutGui() {
        assertTrue(KafkaBeanInfo.serverEngine("/opt/jmeter/bin/ApacheJMeter.jar -Dserver_port=1099 -s -j s.log"));
        assertTrue(KafkaBeanInfo.serverEngine("ApacheJMeter.jar --server"));
        assertFalse(KafkaBeanInfo.serverEngine("/opt/jmeter/bin/ApacheJMeter.jar -t plan.jmx"));
        assertFalse(KafkaBeanInfo.serverEngine("ApacheJMeter.jar -n -t plan-s.jmx -Jname=-s-x"));
        assertFalse(KafkaBeanInfo.serverEngine(""));
    }

    /** The Connection's fields are filled by JMeter's preparation before it registers: it keeps every one. */
    @Test
    void theConnectionIsPreparedInFullAlsoOutsideTheGui() throws IntrospectionException {
        assertEquals(KafkaConnection.SETTINGS.stream().map(ElementSetting::property).collect(Collectors.toSet()),
                preparedBeforeEverySample(KafkaConnection.class, true));
    }

    /**
     * Each element's form keeps its own texts and defaults once JMeter has built every form: the JDK shares the
     * descriptor of a property inherited from a superclass between subclasses, so such a property would show the
     * last-built element's tooltip and default in every form.
     */
    @Test
    void noElementShowsAnotherElementsTextsOrDefaults() throws IntrospectionException {
        Map<Class<?>, BeanInfo> infos = new java.util.LinkedHashMap<>();
        for (Class<?> element : List.of(KafkaProducer.class, KafkaConsumer.class, KafkaLagMonitor.class,
                KafkaConnection.class)) {
            infos.put(element, beanInfo(element));
        }
        infos.forEach((element, info) -> {
            ResourceBundle texts = ResourceBundle.getBundle(element.getName() + "Resources");
            Map<String, PropertyDescriptor> shown = shown(info);
            for (ElementSetting setting : ELEMENTS.get(element)) {
                PropertyDescriptor p = shown.get(setting.property());
                String where = element.getSimpleName() + "." + setting.property();
                assertEquals(texts.getString(setting.property() + ".shortDescription"), p.getShortDescription(), where);
                assertEquals(setting.defaultValue(), p.getValue(GenericTestBeanCustomizer.DEFAULT), where);
            }
        });
    }

    @ParameterizedTest
    @ValueSource(classes = {KafkaProducer.class, KafkaConsumer.class, KafkaLagMonitor.class, KafkaConnection.class})
    void everyEnumOffersExactlyItsAllowedValues(Class<?> element) throws IntrospectionException {
        Map<String, PropertyDescriptor> shown = shown(beanInfo(element));
        int enums = 0;
        for (ElementSetting setting : ELEMENTS.get(element)) {
            Object tags = shown.get(setting.property()).getValue(GenericTestBeanCustomizer.TAGS);
            if (setting.choices().isEmpty()) {
                assertEquals(null, tags, setting.property() + " is a text field");
                continue;
            }
            enums++;
            assertEquals(setting.choices(), List.of((String[]) tags), element.getSimpleName() + "." + setting.property());
            assertTrue(setting.defaultValue().isEmpty() || setting.choices().contains(setting.defaultValue()),
                    setting.property() + "'s default is one of its values");
        }
        assertEquals(ELEMENTS.get(element).stream().filter(s -> !s.choices().isEmpty()).count(), enums,
                element.getSimpleName() + "'s dropdowns");
    }

    @ParameterizedTest
    @ValueSource(classes = {KafkaProducer.class, KafkaConsumer.class, KafkaLagMonitor.class, KafkaConnection.class})
    void everyGroupHasADisplayName(Class<?> element) {
        ResourceBundle bundle = ResourceBundle.getBundle(element.getName() + "Resources");
        for (ElementSetting setting : ELEMENTS.get(element)) {
            assertTrue(bundle.containsKey(setting.group() + ".displayName"), setting.group());
        }
    }

    private static List<ElementSetting> element(String kind) {
        return switch (kind) {
            case "producer" -> KafkaProducer.SETTINGS;
            case "consumer" -> KafkaConsumer.SETTINGS;
            default -> KafkaLagMonitor.SETTINGS;
        };
    }

    /** The Java Request tables and the elements offer the same engine settings (the elements add the Connection). */
    @ParameterizedTest
    @ValueSource(strings = {"producer", "consumer", "lag"})
    void theElementsHaveEverySettingOfTheJavaRequest(String kind) {
        List<ProducerParameters.Parameter> javaRequest = switch (kind) {
            case "producer" -> ProducerParameters.DEFAULTS;
            case "consumer" -> ConsumerParameters.CONSUMER_DEFAULTS;
            default -> ConsumerParameters.LAG_DEFAULTS;
        };
        Set<String> keys = element(kind).stream().map(ElementSetting::key).collect(Collectors.toSet());
        for (ProducerParameters.Parameter parameter : javaRequest) {
            String name = parameter.name();
            boolean inConnection = name.equals("bootstrap.servers");
            boolean perSample = name.equals(ProducerParameters.VALUE);
            assertTrue(keys.contains(name) || inConnection || perSample, kind + " element lacks " + name);
        }
    }

    /**
     * Every setting the engine reads itself (its own key lists, asked through {@link NativeEngine#settingNames}) is a
     * field of the element or of its Connection, so a setting added to the engine and not to the GUI fails here.
     */
    @ParameterizedTest
    @ValueSource(strings = {"producer", "consumer", "lag"})
    void everyEngineSettingHasAField(String kind) {
        Set<String> fields = new LinkedHashSet<>();
        for (ElementSetting setting : element(kind)) {
            fields.add(setting.key());
        }
        KafkaConnection.SETTINGS.forEach(setting -> fields.add(setting.key()));
        // Filled in by the element itself at the thread's first sample.
        Set<String> automatic = Set.of(ProducerParameters.THREAD_NUMBER, ProducerParameters.THREAD_COUNT);
        List<String> engine = List.of(NativeEngine.settingNames(kind));
        assertTrue(engine.contains("topic") && engine.size() > 5, kind + ": " + engine);
        List<String> missing = engine.stream()
                .filter(name -> !fields.contains(name) && !automatic.contains(name))
                .toList();
        assertEquals(List.of(), missing, kind + " element: engine settings without a field");
    }
}
