package interop;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.avro.LogicalType;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;

/**
 * The reference side of the Avro interop check. Records travel as files with one base64-encoded, registry-framed
 * record (magic byte 0, 4-byte schema id, Avro binary) per line, so either side can write and the other read.
 *
 * <pre>
 *   decode REGISTRY_URL FILE [--seq FIELD START]   decode every record with the Apache Avro library, the writer
 *                                                  schema fetched by id from the registry's REST API; with --seq,
 *                                                  FIELD must count up from START
 *   encode REGISTRY_URL SUBJECT SCHEMA.avsc COUNT FILE
 *                                                  register the schema, write COUNT random records (field "id" =
 *                                                  0, 1, 2, ...) with the Apache Avro library
 * </pre>
 * Ends with a line "N passed, N failed" (records) and exit status 1 on any failure.
 */
public final class Interop {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private Interop() {}

    public static void main(String[] args) throws Exception {
        if (args.length >= 3 && args[0].equals("decode")) {
            String field = null;
            long start = 0;
            if (args.length == 6 && args[3].equals("--seq")) {
                field = args[4];
                start = Long.parseLong(args[5]);
            }
            System.exit(decode(args[1], Path.of(args[2]), field, start));
        } else if (args.length == 6 && args[0].equals("encode")) {
            System.exit(encode(args[1], args[2], Path.of(args[3]), Integer.parseInt(args[4]), Path.of(args[5])));
        } else {
            System.err.println("usage: decode REGISTRY_URL FILE [--seq FIELD START] | encode REGISTRY_URL SUBJECT SCHEMA COUNT FILE");
            System.exit(2);
        }
    }

    private static JsonNode http(String method, String url, String body) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
            .header("Content-Type", "application/vnd.schemaregistry.v1+json");
        b = body == null ? b.GET() : b.method(method, HttpRequest.BodyPublishers.ofString(body));
        HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException(method + " " + url + " answered " + r.statusCode() + ": " + r.body());
        }
        return JSON.readTree(r.body());
    }

    static int decode(String registry, Path file, String seqField, long seqStart) throws Exception {
        Map<Integer, Schema> byId = new HashMap<>();
        int passed = 0;
        int failed = 0;
        long line = 0;
        for (String b64 : Files.readAllLines(file, StandardCharsets.US_ASCII)) {
            if (b64.isBlank()) {
                continue;
            }
            try {
                ByteBuffer buf = ByteBuffer.wrap(Base64.getDecoder().decode(b64.trim()));
                byte magic = buf.get();
                if (magic != 0) {
                    throw new IOException("magic byte " + magic + ", not 0");
                }
                int id = buf.getInt();
                Schema schema = byId.get(id);
                if (schema == null) {
                    JsonNode answer = http("GET", registry + "/schemas/ids/" + id, null);
                    schema = new Schema.Parser().parse(answer.get("schema").asText());
                    byId.put(id, schema);
                }
                byte[] payload = new byte[buf.remaining()];
                buf.get(payload);
                BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(payload, null);
                GenericRecord record = new GenericDatumReader<GenericRecord>(schema).read(null, decoder);
                if (!decoder.isEnd()) {
                    throw new IOException("bytes left after the record");
                }
                if (!GenericData.get().validate(schema, record)) {
                    throw new IOException("the decoded record does not validate against its schema");
                }
                if (seqField != null) {
                    long got = ((Number) record.get(seqField)).longValue();
                    if (got != seqStart + line) {
                        throw new IOException(seqField + " is " + got + ", expected " + (seqStart + line));
                    }
                }
                if (passed == 0) {
                    System.out.println("first record (schema id " + id + "): " + record);
                }
                passed++;
            } catch (Exception e) {
                failed++;
                if (failed <= 5) {
                    System.out.println("record " + line + " does not decode: " + e);
                }
            }
            line++;
        }
        System.out.println(passed + " passed, " + failed + " failed");
        return failed == 0 && passed > 0 ? 0 : 1;
    }

    static int encode(String registry, String subject, Path schemaFile, int count, Path out) throws Exception {
        String text = Files.readString(schemaFile);
        Schema schema = new Schema.Parser().parse(text);
        String body = JSON.writeValueAsString(Map.of("schema", schema.toString()));
        int id = http("POST", registry + "/subjects/" + subject + "/versions", body).get("id").asInt();
        Random rnd = new Random(42);
        GenericDatumWriter<Object> writer = new GenericDatumWriter<>(schema);
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Object record = random(schema, rnd);
            if (record instanceof GenericRecord r && schema.getField("id") != null) {
                Schema.Type t = schema.getField("id").schema().getType();
                r.put("id", t == Schema.Type.INT ? (Object) i : (Object) (long) i);
            }
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            bytes.write(0);
            bytes.write(ByteBuffer.allocate(4).putInt(id).array());
            BinaryEncoder enc = EncoderFactory.get().binaryEncoder(bytes, null);
            writer.write(record, enc);
            enc.flush();
            lines.add(Base64.getEncoder().encodeToString(bytes.toByteArray()));
        }
        Files.write(out, lines, StandardCharsets.US_ASCII);
        System.out.println("wrote " + count + " records with schema id " + id + " (subject " + subject + ") to " + out);
        return 0;
    }

    /** A random value of the schema's type, as the Avro Java library represents it (logical types as their base types). */
    static Object random(Schema s, Random rnd) {
        LogicalType logical = s.getLogicalType();
        switch (s.getType()) {
            case NULL: return null;
            case BOOLEAN: return rnd.nextBoolean();
            case INT:
                if (logical instanceof LogicalTypes.Date) {
                    return 19_000 + rnd.nextInt(1000);
                }
                return rnd.nextInt(1_000_000);
            case LONG:
                if (logical instanceof LogicalTypes.TimestampMillis) {
                    return System.currentTimeMillis() - rnd.nextInt(1_000_000);
                }
                if (logical instanceof LogicalTypes.TimestampMicros) {
                    return System.currentTimeMillis() * 1000 - rnd.nextInt(1_000_000);
                }
                return (long) rnd.nextInt(1_000_000);
            case FLOAT: return rnd.nextFloat();
            case DOUBLE: return rnd.nextDouble();
            case STRING:
                if (logical != null && logical.getName().equals("uuid")) {
                    return UUID.randomUUID().toString();
                }
                return "java-" + rnd.nextInt(10_000);
            case BYTES:
                if (logical instanceof LogicalTypes.Decimal) {
                    return ByteBuffer.wrap(java.math.BigInteger.valueOf(rnd.nextInt(100_000)).toByteArray());
                }
                byte[] b = new byte[8];
                rnd.nextBytes(b);
                return ByteBuffer.wrap(b);
            case FIXED: {
                byte[] f = new byte[s.getFixedSize()];
                rnd.nextBytes(f);
                return new GenericData.Fixed(s, f);
            }
            case ENUM: return new GenericData.EnumSymbol(s, s.getEnumSymbols().get(rnd.nextInt(s.getEnumSymbols().size())));
            case ARRAY: {
                List<Object> items = new ArrayList<>();
                for (int i = 0, n = 1 + rnd.nextInt(3); i < n; i++) {
                    items.add(random(s.getElementType(), rnd));
                }
                return new GenericData.Array<>(s, items);
            }
            case MAP: {
                Map<String, Object> m = new HashMap<>();
                for (int i = 0, n = 1 + rnd.nextInt(3); i < n; i++) {
                    m.put("k" + i, random(s.getValueType(), rnd));
                }
                return m;
            }
            case UNION: {
                List<Schema> types = s.getTypes();
                return random(types.get(rnd.nextInt(types.size())), rnd);
            }
            case RECORD: {
                GenericData.Record r = new GenericData.Record(s);
                for (Schema.Field f : s.getFields()) {
                    r.put(f.name(), random(f.schema(), rnd));
                }
                return r;
            }
            default: throw new IllegalArgumentException("unsupported type " + s.getType());
        }
    }
}
