package io.kafkanative.jmeter;

import java.util.List;

/**
 * One setting of a Kafka element (a TestBean): its bean property, the engine key it becomes, the group the GUI shows
 * it in, its default, and for an enum setting the values the engine allows ({@link Choices}). The elements' BeanInfo
 * classes build their forms from these tables and the elements build the engine's configuration from them, so a
 * setting is declared once.
 *
 * @param property     the bean property (camelCase of the key; its getter/setter exist on the element)
 * @param key          the engine's name for it (e.g. {@code messages.per.sample}); null for a Java-only setting
 * @param group        the form's group: topic, message, delivery, timing, checks, client
 * @param defaultValue what a new element shows; blank when blank means "the engine or librdkafka decides"
 * @param choices      the dropdown's values (exactly the engine's allowed values), or an empty list for a text field
 * @param editor       a JMeter property editor class for a text area, file or password field, or null
 * @param perSample    whether the element reads it for every sample (the producer's value, key and headers, which
 *                     may hold a variable); every other setting is read once, at a thread's first sample
 */
record ElementSetting(String property, String key, String group, String defaultValue, List<String> choices,
        Class<?> editor, boolean perSample) {

    static ElementSetting text(String property, String key, String group, String defaultValue) {
        return new ElementSetting(property, key, group, defaultValue, List.of(), null, false);
    }

    static ElementSetting choice(String property, String key, String group, String defaultValue, List<String> choices) {
        return new ElementSetting(property, key, group, defaultValue, choices, null, false);
    }

    static ElementSetting edited(String property, String key, String group, String defaultValue, Class<?> editor) {
        return new ElementSetting(property, key, group, defaultValue, List.of(), editor, false);
    }

    /** A Java-only text field the element reads for every sample (typically {@code ${payload}}). */
    static ElementSetting perSample(String property, String group) {
        return new ElementSetting(property, null, group, "", List.of(), null, true);
    }

    /**
     * A setting the engine reads at a thread's first sample that the element also passes with every sample, as JMeter
     * evaluated it (the producer's key and headers: {@code ${user}} from a CSV Data Set).
     */
    static ElementSetting variable(String property, String key, String group) {
        return new ElementSetting(property, key, group, "", List.of(), null, true);
    }

    /** One form's table from its parts, in order (a part shared by elements is declared once). */
    @SafeVarargs
    static List<ElementSetting> concat(List<ElementSetting>... parts) {
        return java.util.Arrays.stream(parts).flatMap(List::stream).toList();
    }
}
