//! Protobuf: `.proto` files compiled in pure Rust (`protox`), messages built and encoded dynamically
//! (`prost-reflect`), JSON values mapped with the Protobuf JSON mapping.
//!
//! Generation fills every field with a random value of its type (one member of each `oneof`; proto3
//! `optional` fields are left unset at the `null` ratio). `google.protobuf.Timestamp` and `Duration` get
//! valid values (a time within the past year; nanos below 10^9).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use prost::Message as _;
use prost_reflect::{
    DescriptorPool, DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, SerializeOptions, Value,
};
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};
use serde_json::Value as Json;

use super::generator::{join, Generator, Plan, PlanError, Rule, RuleValue, Walk};
use super::rules::{pick_len, random_text, FieldRules, Rules, ValueRule};
use crate::error::{Code, EngineError};
use crate::files;

/// Default share of unset proto3 `optional` fields without a `null` rule.
pub const DEFAULT_NULL_RATIO: f64 = 0.1;
const MAX_DEPTH: usize = 12;
/// The file name under which a registry's schema text is compiled.
const REGISTRY_FILE: &str = "registry-schema.proto";

/// One message type of a compiled `.proto` file.
pub struct ProtoSchema {
    message: MessageDescriptor,
    /// The `.proto` source of the file (what is registered).
    text: String,
}

/// Serves one in-memory file (a schema text from the registry) to the compiler.
struct TextResolver {
    text: String,
}

impl FileResolver for TextResolver {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        if name == REGISTRY_FILE {
            File::from_source(name, &self.text)
        } else {
            Err(protox::Error::file_not_found(name))
        }
    }
}

/// Serves a schema file (already read) and the `.proto` files it imports from its folder, each read through
/// [`files::read_text`] (a FIFO or a huge file named by an import cannot hang or fill the JMeter thread).
struct DirResolver {
    dir: PathBuf,
    root: String,
    text: String,
}

impl FileResolver for DirResolver {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        if name == self.root {
            return File::from_source(name, &self.text);
        }
        if !name.ends_with(".proto") {
            // protox would parse it as Protobuf and fail on its first token ("invalid group name").
            return Err(protox::Error::new(format!(
                "import \"{name}\" is not a .proto file; Protobuf imports only .proto files (an Avro or JSON schema \
                 cannot be imported)"
            )));
        }
        let path = self.dir.join(name);
        if !path.exists() {
            return Err(protox::Error::file_not_found(name));
        }
        let what = format!("import \"{name}\"");
        let text = files::read_text(&path.to_string_lossy(), &what, files::Limit::fixed(files::MAX_DOCUMENT))
            .map_err(protox::Error::new)?;
        File::from_source(name, &text)
    }
}

impl ProtoSchema {
    /// Compiles a `.proto` file (imports are looked up beside it) and picks `message` (full name, or
    /// the simple name when unique; default: the file's first message).
    pub fn from_file(path: &str, message: Option<&str>) -> Result<ProtoSchema, EngineError> {
        let limit = files::Limit::fixed(files::MAX_DOCUMENT);
        let text = files::read_text(path, "schema file", limit).map_err(|e| EngineError::new(Code::SchemaError, e))?;
        let p = Path::new(path);
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let mut resolver = ChainFileResolver::new();
        resolver.add(DirResolver { dir, root: name.clone(), text: text.clone() });
        resolver.add(GoogleFileResolver::new());
        let mut compiler = protox::Compiler::with_file_resolver(resolver);
        compiler.include_imports(true);
        compiler
            .open_file(&name)
            .map_err(|e| EngineError::new(Code::SchemaError, format!("{path}: does not compile: {e}")))?;
        let pool = compiler.descriptor_pool();
        let file_name = compiler.files().find(|f| !f.is_import()).map(|f| f.name().to_string()).unwrap_or(name);
        Ok(ProtoSchema { message: pick(&pool, &file_name, message, path)?, text })
    }

    /// Compiles a schema text (from the registry); well-known imports (`google/protobuf/*.proto`) resolve.
    pub fn from_text(text: &str, origin: &str, message: Option<&str>) -> Result<ProtoSchema, EngineError> {
        let pool = compile_text(text, origin)?;
        Ok(ProtoSchema { message: pick(&pool, REGISTRY_FILE, message, origin)?, text: text.to_string() })
    }

    /// Compiles a schema text and picks the message at a wire-format index path (`[0]` = first message).
    pub fn from_text_at(text: &str, origin: &str, indexes: &[i32]) -> Result<ProtoSchema, EngineError> {
        let pool = compile_text(text, origin)?;
        let file = pool.get_file_by_name(REGISTRY_FILE).expect("the compiled file is in its pool");
        let missing =
            || EngineError::new(Code::DecodeError, format!("{origin} has no message at index path {indexes:?}"));
        let first = *indexes.first().ok_or_else(missing)?;
        let mut message = file.messages().nth(usize::try_from(first).map_err(|_| missing())?).ok_or_else(missing)?;
        for i in &indexes[1..] {
            let index = usize::try_from(*i).map_err(|_| missing())?;
            let child = message.child_messages().filter(|m| !m.is_map_entry()).nth(index);
            message = child.ok_or_else(missing)?;
        }
        Ok(ProtoSchema { message, text: text.to_string() })
    }

    /// The `.proto` source to register.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The message's full name (`package.Message`).
    pub fn record_name(&self) -> String {
        self.message.full_name().to_string()
    }

    /// The message's index path within its file, as the wire format carries it.
    pub fn message_indexes(&self) -> Vec<i32> {
        let mut path = Vec::new();
        let mut current = self.message.clone();
        loop {
            match current.parent_message() {
                Some(parent) => {
                    // map entries are synthetic nested types: Confluent's index paths (from the .proto text) skip them
                    let i = parent
                        .child_messages()
                        .filter(|m| !m.is_map_entry())
                        .position(|m| m.full_name() == current.full_name())
                        .unwrap_or(0);
                    path.push(i as i32);
                    current = parent;
                }
                None => {
                    let file = current.parent_file();
                    let i = file.messages().position(|m| m.full_name() == current.full_name()).unwrap_or(0);
                    path.push(i as i32);
                    break;
                }
            }
        }
        path.reverse();
        path
    }

    /// Encodes a JSON text (Protobuf JSON mapping; proto field names or lowerCamelCase) as a message.
    pub fn encode_json(&self, json: &str, out: &mut Vec<u8>) -> Result<(), EngineError> {
        let mut de = serde_json::Deserializer::from_str(json);
        let message = DynamicMessage::deserialize(self.message.clone(), &mut de)
            .and_then(|m| de.end().map(|_| m))
            .map_err(|e| {
                EngineError::new(
                    Code::RecordInvalid,
                    format!("the record does not match the Protobuf message {}: {e}", self.record_name()),
                )
            })?;
        message.encode(out).map_err(|e| EngineError::new(Code::RecordInvalid, e.to_string()))
    }

    /// Decodes a message (the index path already removed) to JSON with proto field names.
    pub fn decode(&self, bytes: &[u8]) -> Result<Json, String> {
        let message = DynamicMessage::decode(self.message.clone(), bytes).map_err(|e| e.to_string())?;
        to_json(&message)
    }
}

/// The JSON form used for assertions: proto field names, 64-bit integers as numbers.
fn to_json(message: &DynamicMessage) -> Result<Json, String> {
    let options = SerializeOptions::new().use_proto_field_name(true).stringify_64_bit_integers(false);
    message.serialize_with_options(serde_json::value::Serializer, &options).map_err(|e| e.to_string())
}

fn compile_text(text: &str, origin: &str) -> Result<DescriptorPool, EngineError> {
    let mut resolver = ChainFileResolver::new();
    resolver.add(TextResolver { text: text.to_string() });
    resolver.add(GoogleFileResolver::new());
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true);
    compiler.open_file(REGISTRY_FILE).map_err(|e| {
        EngineError::new(Code::SchemaError, format!("{origin}: the Protobuf schema does not compile: {e}"))
    })?;
    Ok(compiler.descriptor_pool())
}

fn pick(
    pool: &DescriptorPool,
    file: &str,
    message: Option<&str>,
    origin: &str,
) -> Result<MessageDescriptor, EngineError> {
    let file = pool.get_file_by_name(file).expect("the compiled file is in its pool");
    let names = || file.messages().map(|m| m.full_name().to_string()).collect::<Vec<_>>().join(", ");
    match message {
        None => file
            .messages()
            .next()
            .ok_or_else(|| EngineError::new(Code::SchemaError, format!("{origin} declares no message"))),
        Some(name) => pool
            .get_message_by_name(name)
            .or_else(|| {
                let mut simple = pool.all_messages().filter(|m| m.name() == name);
                match (simple.next(), simple.next()) {
                    (Some(m), None) => Some(m),
                    _ => None,
                }
            })
            .ok_or_else(|| {
                EngineError::config(format!(
                    "schema.message: {origin} has no message '{name}'; its messages are: {}",
                    names()
                ))
            }),
    }
}

/// A generator of random messages for one message type (one per thread).
pub type ProtoGenerator = Generator<MessagePlan>;

/// The generation plan of one message type: its fields (and oneofs) with their rules.
pub struct MessagePlan {
    desc: MessageDescriptor,
    /// Plain fields, in order.
    fields: Vec<FieldPlan>,
    /// Each real oneof: one of its fields is set.
    oneofs: Vec<Vec<FieldPlan>>,
    special: Special,
}

#[derive(Clone, Copy, PartialEq)]
enum Special {
    None,
    Timestamp,
    Duration,
}

struct FieldPlan {
    field: FieldDescriptor,
    /// proto3 `optional` (or proto2 optional): unset at this ratio.
    unset_ratio: Option<f64>,
    shape: Shape,
}

enum Shape {
    Single(Gen),
    List((usize, usize), Gen),
    Map((usize, usize), Gen, Gen),
}

enum Gen {
    Rule(Leaf),
    Bool,
    Int { range: (i64, i64), kind: Kind },
    Float { range: (f64, f64), double: bool },
    Str((usize, usize)),
    Bytes((usize, usize)),
    Enum(Vec<i32>),
    Message(Box<MessagePlan>),
}

type Leaf = Rule<Value, Kind>;

impl ProtoGenerator {
    /// Builds the plan; fails on rules that do not fit.
    pub fn new(schema: &ProtoSchema, rules: &Rules, what: &str) -> Result<ProtoGenerator, EngineError> {
        let mut walk = Walk::new(rules);
        let root = plan_message(&schema.message, &mut walk, "", 0)
            .map_err(|(path, m)| EngineError::config(format!("{what}: {path}: {m}")))?;
        walk.finish(what)?;
        Ok(Generator::of(root))
    }

    /// The next message, encoded, appended to `out`.
    pub fn next_into(&mut self, _schema: &ProtoSchema, out: &mut Vec<u8>) -> Result<(), EngineError> {
        let message = self.next_record();
        message.encode(out).map_err(|e| EngineError::new(Code::RecordInvalid, e.to_string()))
    }
}

impl Plan for MessagePlan {
    type Record = DynamicMessage;

    fn generate(&mut self, rng: &mut fastrand::Rng, seq: u64) -> DynamicMessage {
        gen_message(self, rng, seq)
    }
}

fn plan_message(desc: &MessageDescriptor, walk: &mut Walk, path: &str, depth: usize) -> Result<MessagePlan, PlanError> {
    let special = match desc.full_name() {
        "google.protobuf.Timestamp" => Special::Timestamp,
        "google.protobuf.Duration" => Special::Duration,
        _ => Special::None,
    };
    let mut plan = MessagePlan { desc: desc.clone(), fields: Vec::new(), oneofs: Vec::new(), special };
    if special != Special::None {
        return Ok(plan);
    }
    if depth > MAX_DEPTH {
        return Err((path.to_string(), format!("messages nest deeper than {MAX_DEPTH} levels (recursive?)")));
    }
    let mut oneofs: HashMap<String, Vec<FieldPlan>> = HashMap::new();
    let mut oneof_order = Vec::new();
    for field in desc.fields() {
        let field_path = join(path, field.name());
        walk.visit(&field_path);
        let r = walk.at(&field_path);
        let err = |m: String| (field_path.clone(), m);
        let shape = if field.is_map() {
            let Kind::Message(entry) = field.kind() else { unreachable!("a map field's kind is its entry message") };
            let key = plan_single(&entry.map_entry_key_field(), walk.at(""), walk, &field_path, depth)?;
            let value = plan_single(&entry.map_entry_value_field(), r, walk, &field_path, depth)?;
            Shape::Map(r.size.unwrap_or((1, 3)), key, value)
        } else if field.is_list() {
            Shape::List(r.size.unwrap_or((1, 3)), plan_single(&field, r, walk, &field_path, depth)?)
        } else {
            Shape::Single(plan_single(&field, r, walk, &field_path, depth)?)
        };
        let real_oneof = field.containing_oneof().filter(|o| !o.is_synthetic());
        let optional = field.supports_presence() && real_oneof.is_none() && !matches!(field.kind(), Kind::Message(_));
        let unset_ratio = if optional || (matches!(field.kind(), Kind::Message(_)) && r.null_ratio.is_some()) {
            Some(r.null_ratio.unwrap_or(DEFAULT_NULL_RATIO))
        } else if r.null_ratio.is_some() {
            return Err(err("null(…) needs an optional field".into()));
        } else {
            None
        };
        let fp = FieldPlan { field: field.clone(), unset_ratio, shape };
        match real_oneof {
            Some(o) => {
                let name = o.name().to_string();
                if !oneofs.contains_key(&name) {
                    oneof_order.push(name.clone());
                }
                oneofs.entry(name).or_default().push(fp);
            }
            None => plan.fields.push(fp),
        }
    }
    for name in oneof_order {
        plan.oneofs.push(oneofs.remove(&name).unwrap_or_default());
    }
    Ok(plan)
}

fn plan_single(
    field: &FieldDescriptor,
    r: &FieldRules,
    walk: &mut Walk,
    path: &str,
    depth: usize,
) -> Result<Gen, PlanError> {
    let err = |m: String| (path.to_string(), m);
    let kind = field.kind();
    if let Some(rule) = &r.value {
        return Ok(Gen::Rule(leaf_for(rule, &kind).map_err(err)?));
    }
    let int_range = |default: (i64, i64)| r.range.map(|(a, b)| (a.round() as i64, b.round() as i64)).unwrap_or(default);
    Ok(match &kind {
        Kind::Bool => Gen::Bool,
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 | Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
            Gen::Int { range: int_range((0, 1_000_000)), kind: kind.clone() }
        }
        Kind::Uint32 | Kind::Fixed32 | Kind::Uint64 | Kind::Fixed64 => {
            let range = int_range((0, 1_000_000));
            if range.0 < 0 {
                return Err(err("range below 0 for an unsigned field".into()));
            }
            Gen::Int { range, kind: kind.clone() }
        }
        Kind::Float => Gen::Float { range: r.range.unwrap_or((0.0, 1000.0)), double: false },
        Kind::Double => Gen::Float { range: r.range.unwrap_or((0.0, 1000.0)), double: true },
        Kind::String => Gen::Str(r.length.unwrap_or((8, 16))),
        Kind::Bytes => Gen::Bytes(r.length.unwrap_or((8, 16))),
        Kind::Enum(e) => Gen::Enum(e.values().map(|v| v.number()).collect()),
        Kind::Message(m) => Gen::Message(Box::new(plan_message(m, walk, path, depth + 1)?)),
    })
}

fn leaf_for(rule: &ValueRule, kind: &Kind) -> Result<Leaf, String> {
    let convert = |text: &str| -> Result<Value, String> {
        Ok(match kind {
            Kind::Bool => Value::Bool(text.parse().map_err(|_| format!("'{text}' is not true or false"))?),
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
                Value::I32(text.parse().map_err(|_| format!("'{text}' is not an int32"))?)
            }
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
                Value::I64(text.parse().map_err(|_| format!("'{text}' is not an int64"))?)
            }
            Kind::Uint32 | Kind::Fixed32 => Value::U32(text.parse().map_err(|_| format!("'{text}' is not a uint32"))?),
            Kind::Uint64 | Kind::Fixed64 => Value::U64(text.parse().map_err(|_| format!("'{text}' is not a uint64"))?),
            Kind::Float => Value::F32(text.parse().map_err(|_| format!("'{text}' is not a number"))?),
            Kind::Double => Value::F64(text.parse().map_err(|_| format!("'{text}' is not a number"))?),
            Kind::String => Value::String(text.to_string()),
            Kind::Bytes => Value::Bytes(prost::bytes::Bytes::copy_from_slice(text.as_bytes())),
            Kind::Enum(e) => match e.get_value_by_name(text) {
                Some(v) => Value::EnumNumber(v.number()),
                None => {
                    let names: Vec<String> = e.values().map(|v| v.name().to_string()).collect();
                    return Err(format!("'{text}' is not a value of enum {} ({})", e.full_name(), names.join(", ")));
                }
            },
            Kind::Message(m) => {
                let mut de = serde_json::Deserializer::from_str(text);
                Value::Message(DynamicMessage::deserialize(m.clone(), &mut de).map_err(|e| format!("'{text}': {e}"))?)
            }
        })
    };
    let seq = match kind {
        Kind::Message(_) | Kind::Bool | Kind::Bytes | Kind::Enum(_) => None,
        k => Some(k.clone()),
    };
    Rule::plan(rule, convert, seq, matches!(kind, Kind::String))
}

impl RuleValue<Kind> for Value {
    fn of_seq(n: i64, kind: &Kind) -> Value {
        int_value(n, kind)
    }

    fn of_text(text: String) -> Value {
        Value::String(text)
    }
}

fn int_value(n: i64, kind: &Kind) -> Value {
    match kind {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Value::I32(n as i32),
        Kind::Uint32 | Kind::Fixed32 => Value::U32(n as u32),
        Kind::Uint64 | Kind::Fixed64 => Value::U64(n as u64),
        Kind::Float => Value::F32(n as f32),
        Kind::Double => Value::F64(n as f64),
        Kind::String => Value::String(n.to_string()),
        _ => Value::I64(n),
    }
}

fn gen_value(g: &mut Gen, rng: &mut fastrand::Rng, seq: u64) -> Value {
    match g {
        Gen::Rule(rule) => rule.value(rng, seq),
        Gen::Bool => Value::Bool(rng.bool()),
        Gen::Int { range, kind } => int_value(rng.i64(range.0..=range.1), kind),
        Gen::Float { range, double } => {
            let x = range.0 + rng.f64() * (range.1 - range.0);
            if *double {
                Value::F64(x)
            } else {
                Value::F32(x as f32)
            }
        }
        Gen::Str(len) => {
            let n = pick_len(rng, *len);
            Value::String(random_text(rng, n))
        }
        Gen::Bytes(len) => {
            let n = pick_len(rng, *len);
            Value::Bytes((0..n).map(|_| rng.u8(..)).collect::<Vec<u8>>().into())
        }
        Gen::Enum(numbers) => Value::EnumNumber(numbers[rng.usize(..numbers.len())]),
        Gen::Message(plan) => Value::Message(gen_message(plan, rng, seq)),
    }
}

fn map_key(v: Value) -> MapKey {
    match v {
        Value::Bool(b) => MapKey::Bool(b),
        Value::I32(i) => MapKey::I32(i),
        Value::I64(i) => MapKey::I64(i),
        Value::U32(i) => MapKey::U32(i),
        Value::U64(i) => MapKey::U64(i),
        Value::String(s) => MapKey::String(s),
        other => MapKey::String(format!("{other:?}")),
    }
}

fn set_field(message: &mut DynamicMessage, f: &mut FieldPlan, rng: &mut fastrand::Rng, seq: u64) {
    if let Some(ratio) = f.unset_ratio {
        if rng.f64() < ratio {
            return;
        }
    }
    let value = match &mut f.shape {
        Shape::Single(g) => gen_value(g, rng, seq),
        Shape::List(size, g) => {
            let n = pick_len(rng, *size);
            Value::List((0..n).map(|_| gen_value(g, rng, seq)).collect())
        }
        Shape::Map(size, k, v) => {
            let n = pick_len(rng, *size);
            Value::Map((0..n).map(|_| (map_key(gen_value(k, rng, seq)), gen_value(v, rng, seq))).collect())
        }
    };
    message.set_field(&f.field, value);
}

fn gen_message(plan: &mut MessagePlan, rng: &mut fastrand::Rng, seq: u64) -> DynamicMessage {
    let mut message = DynamicMessage::new(plan.desc.clone());
    match plan.special {
        Special::Timestamp => {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
            message.set_field_by_name("seconds", Value::I64(now - rng.i64(0..365 * 86_400)));
            message.set_field_by_name("nanos", Value::I32(rng.i32(0..1_000_000_000)));
        }
        Special::Duration => {
            message.set_field_by_name("seconds", Value::I64(rng.i64(0..86_400)));
            message.set_field_by_name("nanos", Value::I32(rng.i32(0..1_000_000_000)));
        }
        Special::None => {
            for f in plan.fields.iter_mut() {
                set_field(&mut message, f, rng, seq);
            }
            for group in plan.oneofs.iter_mut() {
                if group.is_empty() {
                    continue;
                }
                let i = rng.usize(..group.len());
                set_field(&mut message, &mut group[i], rng, seq);
            }
        }
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORDER: &str = r#"syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";

message Order {
  int64 id = 1;
  string code = 2;
  Status status = 3;
  optional string note = 4;
  repeated Line lines = 5;
  map<string, int32> counts = 6;
  google.protobuf.Timestamp created = 7;
  oneof payment { string card = 8; string iban = 9; }
  message Line { string sku = 1; uint32 qty = 2; }
}
enum Status { NEW = 0; PAID = 1; }
message Other { string x = 1; }
"#;

    #[test]
    fn generated_messages_round_trip_and_obey_rules() {
        let schema = ProtoSchema::from_text(ORDER, "order.proto", None).unwrap();
        assert_eq!(schema.record_name(), "shop.Order");
        assert_eq!(schema.message_indexes(), vec![0]);
        let rules = Rules::parse("id = seq(5)\ncode = template(P-{seq})\nstatus = choice(PAID)\nlines = size(2)\nlines.qty = range(1,3)\nnote = null(1)", "r").unwrap();
        let mut g = ProtoGenerator::new(&schema, &rules, "r").unwrap().with_seed(9);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
        for i in 0..100 {
            let mut out = Vec::new();
            g.next_into(&schema, &mut out).unwrap();
            let json = schema.decode(&out).unwrap();
            assert_eq!(json["id"], 5 + i);
            assert_eq!(json["code"], format!("P-{i}"));
            assert_eq!(json["status"], "PAID");
            assert!(json.get("note").is_none(), "{json}");
            let lines = json["lines"].as_array().unwrap();
            assert_eq!(lines.len(), 2);
            assert!(lines.iter().all(|l| (1..=3).contains(&l["qty"].as_u64().unwrap())), "{json}");
            assert!(json.get("card").is_some() != json.get("iban").is_some(), "one member of the oneof: {json}");
            // the timestamp is valid and recent (the JSON mapping prints it as RFC 3339)
            let created = json["created"].as_str().unwrap();
            let year: i64 = created[..4].parse().unwrap();
            assert!(
                (1970 + (now - 366 * 86_400) / 31_557_600..=1970 + now / 31_557_600 + 1).contains(&year),
                "{created}"
            );
        }
    }

    #[test]
    fn nested_messages_have_index_paths_and_decode_by_path() {
        let nested = ProtoSchema::from_text(ORDER, "order.proto", Some("shop.Order.Line")).unwrap();
        assert_eq!(nested.message_indexes(), vec![0, 0]);
        let other = ProtoSchema::from_text(ORDER, "order.proto", Some("Other")).unwrap();
        assert_eq!(other.message_indexes(), vec![1]);
        let mut out = Vec::new();
        other.encode_json(r#"{"x": "hello"}"#, &mut out).unwrap();
        let by_path = ProtoSchema::from_text_at(ORDER, "id 1", &[1]).unwrap();
        assert_eq!(by_path.decode(&out).unwrap()["x"], "hello");
        assert!(ProtoSchema::from_text_at(ORDER, "id 1", &[5]).is_err());
    }

    #[test]
    fn errors_are_explained() {
        let e = ProtoSchema::from_text("syntax = \"proto3\"; message {", "x.proto", None).err().unwrap();
        assert_eq!(e.code, Code::SchemaError);
        assert!(e.message.starts_with("x.proto: the Protobuf schema does not compile"), "{}", e.message);
        let e = ProtoSchema::from_text(ORDER, "x.proto", Some("Nope")).err().unwrap();
        assert!(e.message.contains("no message 'Nope'; its messages are: shop.Order, shop.Other"), "{}", e.message);
        let schema = ProtoSchema::from_text(ORDER, "x.proto", None).unwrap();
        let e = schema.encode_json(r#"{"id": "x1"}"#, &mut Vec::new()).unwrap_err();
        assert_eq!(e.code, Code::RecordInvalid);
        let e = ProtoGenerator::new(&schema, &Rules::parse("status = fixed(LOST)", "r").unwrap(), "r").err().unwrap();
        assert!(e.message.contains("'LOST' is not a value of enum shop.Status"), "{}", e.message);
    }
}
