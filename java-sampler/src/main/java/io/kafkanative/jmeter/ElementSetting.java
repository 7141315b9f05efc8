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
 */
record ElementSetting(String property, String key, String group, String defaultValue, List<String> choices,
        Class<?> editor) {

    static ElementSetting text(String property, String key, String group, String defaultValue) {
        return new ElementSetting(property, key, group, defaultValue, List.of(), null);
    }

    static ElementSetting choice(String property, String key, String group, String defaultValue, List<String> choices) {
        return new ElementSetting(property, key, group, defaultValue, choices, null);
    }

    static ElementSetting edited(String property, String key, String group, String defaultValue, Class<?> editor) {
        return new ElementSetting(property, key, group, defaultValue, List.of(), editor);
    }

    /** One form's table from its parts, in order (a part shared by elements is declared once). */
    @SafeVarargs
    static List<ElementSetting> concat(List<ElementSetting>... parts) {
        return java.util.Arrays.stream(parts).flatMap(List::stream).toList();
    }
}
