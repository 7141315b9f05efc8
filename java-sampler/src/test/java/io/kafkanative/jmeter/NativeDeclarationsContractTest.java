package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The JNI declarations, checked against each other without loading the engine: a Java {@code native} method and
 * the Rust export it binds to must agree in name, argument types and return type, and every class and constructor
 * signature the bridge names in {@code jni_str!} / {@code jni_sig!} must exist in Java. A mismatch would not fail the
 * build; at run time it is an {@link UnsatisfiedLinkError} at best and undefined behaviour at worst.
 *
 * <p>The Rust side is read from {@code rust-core/src/jni/*.rs}, where every export is written through the
 * {@code static_native!} macro as {@code fn Java_io_kafkanative_jmeter_<Class>_<method>(env, name: Type, ...) -> Ret};
 * the Java side is read by reflection, so it is exactly what the JVM binds.
 */
class NativeDeclarationsContractTest {

    private static final Path JNI_SOURCES = Path.of("..", "rust-core", "src", "jni");
    private static final String PACKAGE = "io.kafkanative.jmeter";

    /** An export of the bridge: {@code Class.method(JavaTypes)Ret} as the Rust signature implies it. */
    record Export(String javaClass, String method, List<String> arguments, String result) {
        String key() {
            return javaClass + "." + method;
        }
    }

    private static final Pattern EXPORT = Pattern.compile(
            "fn\\s+Java_io_kafkanative_jmeter_([A-Za-z0-9]+)_([A-Za-z0-9]+)\\s*\\(\\s*(?:mut\\s+)?env\\s*,?(.*?)\\)\\s*(->\\s*([^{]+?))?\\s*\\{",
            Pattern.DOTALL);
    private static final Pattern CONSTRUCTED = Pattern.compile(
            "jni_str!\\(\"([^\"]+)\"\\)\\s*,\\s*jni_sig!\\(\"\\(([^\"]*)\\)V\"\\)");
    private static final Pattern ANY_SIG = Pattern.compile("jni_sig!\\(");

    /** The bridge's Rust parameter types, as the Java types they receive (see {@link #javaTypeOf}). */
    static String javaTypeOf(String rustType) {
        String t = rustType.replaceAll("\\s+", "").replace("'l", "").replace("<>", "").replace("<,", "<");
        return switch (t) {
            case "jlong" -> "long";
            case "jint" -> "int";
            case "jboolean" -> "boolean";
            case "jdouble" -> "double";
            case "JString" -> "java.lang.String";
            case "JLongArray" -> "long[]";
            case "JObjectArray<JString>" -> "java.lang.String[]";
            // An untyped object: the Java side may declare any class of ours (EngineError, LagReading).
            case "JObject" -> "object";
            default -> throw new AssertionError("the bridge uses a parameter or return type this check does not know: "
                    + rustType + " (add it to javaTypeOf)");
        };
    }

    /** Splits a Rust parameter list at its top-level commas (generic arguments keep theirs). */
    static List<String> splitTopLevel(String list) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        StringBuilder current = new StringBuilder();
        for (char c : list.toCharArray()) {
            if (c == '<') {
                depth++;
            } else if (c == '>') {
                depth--;
            }
            if (c == ',' && depth == 0) {
                parts.add(current.toString());
                current.setLength(0);
            } else {
                current.append(c);
            }
        }
        parts.add(current.toString());
        return parts.stream().map(String::strip).filter(s -> !s.isEmpty()).collect(Collectors.toList());
    }

    static List<Export> parseExports(String source) {
        List<Export> exports = new ArrayList<>();
        Matcher m = EXPORT.matcher(source);
        while (m.find()) {
            List<String> arguments = new ArrayList<>();
            for (String parameter : splitTopLevel(m.group(3))) {
                int colon = parameter.indexOf(':');
                assertTrue(colon > 0, "a parameter without a type in " + m.group(1) + "." + m.group(2) + ": " + parameter);
                arguments.add(javaTypeOf(parameter.substring(colon + 1)));
            }
            String result = m.group(5) == null ? "void" : javaTypeOf(m.group(5));
            exports.add(new Export(m.group(1), m.group(2), arguments, result));
        }
        return exports;
    }

    private static String jniSources() throws IOException {
        assertTrue(Files.isDirectory(JNI_SOURCES), "the bridge's sources are not at " + JNI_SOURCES.toAbsolutePath());
        try (Stream<Path> files = Files.list(JNI_SOURCES)) {
            StringBuilder all = new StringBuilder();
            for (Path file : files.filter(f -> f.toString().endsWith(".rs")).sorted().toList()) {
                all.append(Files.readString(file, StandardCharsets.UTF_8)).append('\n');
            }
            return all.toString();
        }
    }

    private static String javaTypeName(Class<?> type) {
        return type.isArray() ? javaTypeName(type.getComponentType()) + "[]" : type.getName();
    }

    private static boolean matches(String expected, Class<?> actual) {
        if (expected.equals("object")) {
            return !actual.isPrimitive() && !actual.isArray() && actual != String.class
                    && actual.getPackageName().equals(PACKAGE);
        }
        return expected.equals(javaTypeName(actual));
    }

    @Test
    void everyJavaNativeHasARustExportOfTheSameTypesAndBack() throws Exception {
        Map<String, Export> rust = new TreeMap<>();
        for (Export e : parseExports(jniSources())) {
            assertFalse(rust.containsKey(e.key()), "exported twice: " + e.key());
            rust.put(e.key(), e);
        }
        assertTrue(rust.size() >= 18, "the parser found only " + rust.size() + " exports: " + rust.keySet());

        Map<String, Method> java = new TreeMap<>();
        for (String className : rust.values().stream().map(Export::javaClass).collect(Collectors.toSet())) {
            Class<?> declaring = Class.forName(PACKAGE + "." + className);
            assertTrue(NativeDeclarations.class.isAssignableFrom(declaring),
                    className + " declares natives, so it must extend NativeDeclarations (which loads the engine)");
            for (Method method : declaring.getDeclaredMethods()) {
                if (Modifier.isNative(method.getModifiers())) {
                    assertTrue(Modifier.isStatic(method.getModifiers()),
                            className + "." + method.getName() + " must be static: the bridge's exports take a jclass");
                    assertFalse(java.containsKey(className + "." + method.getName()),
                            "overloaded native " + className + "." + method.getName() + " (JNI short names cannot tell them apart)");
                    java.put(className + "." + method.getName(), method);
                }
            }
        }

        assertEquals(rust.keySet(), java.keySet(), "natives declared in Java vs exported by rust-core/src/jni");
        for (Export e : rust.values()) {
            Method m = java.get(e.key());
            Class<?>[] parameters = m.getParameterTypes();
            assertEquals(e.arguments().size(), parameters.length, e.key() + ": number of arguments");
            for (int i = 0; i < parameters.length; i++) {
                assertTrue(matches(e.arguments().get(i), parameters[i]), e.key() + " argument " + i + ": Java has "
                        + javaTypeName(parameters[i]) + ", Rust takes " + e.arguments().get(i));
            }
            assertTrue(matches(e.result(), m.getReturnType()),
                    e.key() + " returns " + javaTypeName(m.getReturnType()) + " in Java, " + e.result() + " in Rust");
        }
    }

    @Test
    void everyConstructorTheBridgeCallsExists() throws Exception {
        String sources = jniSources();
        Matcher m = CONSTRUCTED.matcher(sources);
        int checked = 0;
        while (m.find()) {
            Class<?> type = Class.forName(m.group(1).replace('/', '.'));
            Class<?>[] parameters = parseDescriptorList(m.group(2));
            try {
                assertNotNull(type.getDeclaredConstructor(parameters));
            } catch (NoSuchMethodException e) {
                fail("the bridge constructs " + m.group(1) + " with (" + m.group(2) + ")V, which Java does not declare");
            }
            checked++;
        }
        Matcher any = ANY_SIG.matcher(sources);
        int signatures = 0;
        while (any.find()) {
            signatures++;
        }
        assertEquals(signatures, checked, "every jni_sig! must follow its class's jni_str! so that this test can check it");
        assertTrue(checked >= 3, "found only " + checked + " constructor calls");
    }

    /** A JNI descriptor list such as {@code Ljava/lang/String;[JI} as classes. */
    static Class<?>[] parseDescriptorList(String descriptors) throws ClassNotFoundException {
        List<Class<?>> types = new ArrayList<>();
        int i = 0;
        while (i < descriptors.length()) {
            int start = i;
            while (descriptors.charAt(i) == '[') {
                i++;
            }
            if (descriptors.charAt(i) == 'L') {
                i = descriptors.indexOf(';', i);
            }
            String one = descriptors.substring(start, i + 1);
            types.add(switch (one) {
                case "J" -> long.class;
                case "I" -> int.class;
                case "Z" -> boolean.class;
                case "D" -> double.class;
                default -> one.startsWith("L") ? Class.forName(one.substring(1, one.length() - 1).replace('/', '.'))
                        : Class.forName(one.replace('/', '.')); // an array: "[J", "[Ljava.lang.String;"
            });
            i++;
        }
        return types.toArray(new Class<?>[0]);
    }

    /** The parser itself, on a sample in the bridge's own form, so a silent miss cannot pass the checks above. */
    @Test
    void theParserReadsTheMacroForm() {
        List<Export> exports = parseExports("""
                static_native! {
                    fn Java_io_kafkanative_jmeter_NativeX_send(
                        env,
                        handle: jlong,
                        value: JString<'l>,
                        out: JLongArray<'l>,
                    ) -> JObject<'l> {
                        body()
                    }
                }
                static_native! {
                    fn Java_io_kafkanative_jmeter_NativeX_open(env, config: JObjectArray<'l, JString<'l>>) -> jlong { 1 }
                }
                static_native! {
                    fn Java_io_kafkanative_jmeter_NativeX_drain(env) { }
                }
                """);
        assertEquals(List.of(
                new Export("NativeX", "send", List.of("long", "java.lang.String", "long[]"), "object"),
                new Export("NativeX", "open", List.of("java.lang.String[]"), "long"),
                new Export("NativeX", "drain", List.of(), "void")), exports);
    }
}
