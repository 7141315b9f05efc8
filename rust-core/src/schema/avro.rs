//! Avro: records generated from a schema (random values per type, field rules), JSON encoded against a
//! schema, and datums decoded — with the `apache-avro` crate doing the binary encoding and decoding.
//!
//! The schema is turned once into a plan (a tree of [`Node`]s with the rules attached and fixed/choice
//! values already converted to Avro values), so generating a record walks the plan, never the rules text.

use std::collections::{BTreeSet, HashMap};
use std::time::{SystemTime, UNIX_EPOCH};

use apache_avro::schema::{DecimalSchema, InnerDecimalSchema, Name, RecordField, UnionSchema, UuidSchema};
use apache_avro::types::Value;
use apache_avro::Schema;
use serde_json::Value as Json;

use super::generator::{ruled, Generator, Plan, Rule, RuleValue};
use super::rules::{pick_len, random_text, random_uuid, FieldRules, Rules};
use super::{RECORD_INVALID, SCHEMA_ERROR};
use crate::error::EngineError;

/// Default share of nulls for optional fields without a `null` rule.
pub const DEFAULT_NULL_RATIO: f64 = 0.1;
/// Named types deeper than this are cut (recursive schemas: a linked list ends in null).
const MAX_DEPTH: usize = 12;

/// A parsed Avro schema with the names its references point to.
pub struct AvroSchema {
    schema: Schema,
    names: HashMap<Name, Schema>,
    /// The compact JSON text (what is registered).
    text: String,
}

impl AvroSchema {
    /// Parses an `.avsc` text; `origin` names the file or subject in errors.
    pub fn parse(text: &str, origin: &str) -> Result<AvroSchema, EngineError> {
        let json: Json = serde_json::from_str(text).map_err(|e| {
            EngineError::new(
                SCHEMA_ERROR,
                format!("{origin}: not a JSON document ({e}); an Avro schema (.avsc) is JSON"),
            )
        })?;
        let schema = Schema::parse(&json)
            .map_err(|e| EngineError::new(SCHEMA_ERROR, format!("{origin}: not a valid Avro schema: {e}")))?;
        let mut names = HashMap::new();
        collect_names(&schema, &mut names);
        Ok(AvroSchema { schema, names, text: json.to_string() })
    }

    /// The schema text to register (compact JSON, attributes such as logicalType kept).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The full name of the top-level record (for the record and topic-record subject strategies).
    pub fn record_name(&self) -> Option<String> {
        match &self.schema {
            Schema::Record(r) => Some(r.name.fullname(None)),
            _ => None,
        }
    }

    /// Encodes a JSON value (e.g. built by JMeter from a CSV line) against the schema.
    /// Plain JSON values are accepted for unions (`"x"` or `null`, not Avro's `{"string": "x"}`).
    pub fn encode_json(&self, json: &str, out: &mut Vec<u8>) -> Result<(), EngineError> {
        let parsed: Json = serde_json::from_str(json).map_err(|e| {
            EngineError::new(RECORD_INVALID, format!("the value is not JSON ({e}), so it cannot be encoded as Avro"))
        })?;
        let value = from_json(parsed, &self.schema, self)?;
        self.write(&value, out)
    }

    fn write(&self, value: &Value, out: &mut Vec<u8>) -> Result<(), EngineError> {
        let invalid = |e: apache_avro::Error| {
            EngineError::new(RECORD_INVALID, format!("the record does not match the Avro schema: {e}"))
        };
        let writer = apache_avro::writer::datum::GenericDatumWriter::builder(&self.schema).build().map_err(invalid)?;
        writer.write_value_ref(out, value).map_err(invalid)?;
        Ok(())
    }

    /// Decodes one datum written with this schema to JSON (for assertions and for the user's eyes).
    pub fn decode(&self, bytes: &[u8]) -> Result<Json, String> {
        let mut reader = bytes;
        let datum_reader =
            apache_avro::reader::datum::GenericDatumReader::builder(&self.schema).build().map_err(|e| e.to_string())?;
        let value = datum_reader.read_value(&mut reader).map_err(|e| e.to_string())?;
        if !reader.is_empty() {
            return Err(format!("{} bytes left over after the record", reader.len()));
        }
        Json::try_from(value).map_err(|e| e.to_string())
    }

    fn resolve<'a>(&'a self, schema: &'a Schema) -> &'a Schema {
        match schema {
            Schema::Ref { name } => self.names.get(name).unwrap_or(schema),
            other => other,
        }
    }
}

fn collect_names(schema: &Schema, names: &mut HashMap<Name, Schema>) {
    match schema {
        Schema::Record(r) => {
            names.insert(r.name.clone(), schema.clone());
            for f in &r.fields {
                collect_names(&f.schema, names);
            }
        }
        Schema::Enum(e) => {
            names.insert(e.name.clone(), schema.clone());
        }
        Schema::Fixed(f) => {
            names.insert(f.name.clone(), schema.clone());
        }
        Schema::Array(a) => collect_names(&a.items, names),
        Schema::Map(m) => collect_names(&m.types, names),
        Schema::Union(u) => u.variants().iter().for_each(|v| collect_names(v, names)),
        _ => {}
    }
}

/// JSON → Avro value that matches `schema` (ints narrowed, unions picked by the value's kind, logical types).
fn from_json(json: Json, schema: &Schema, all: &AvroSchema) -> Result<Value, EngineError> {
    let schema = all.resolve(schema);
    let value = json_to_value(json, schema, all)?;
    Ok(value)
}

fn json_to_value(json: Json, schema: &Schema, all: &AvroSchema) -> Result<Value, EngineError> {
    let mismatch = |json: &Json, what: &str| {
        let mut shown = json.to_string();
        if shown.len() > 80 {
            shown.truncate(80);
            shown.push('…');
        }
        EngineError::new(RECORD_INVALID, format!("the record does not match the Avro schema: {shown} is not {what}"))
    };
    let schema = all.resolve(schema);
    Ok(match (schema, json) {
        (Schema::Union(u), json) => {
            let variants = u.variants();
            let pick = variants
                .iter()
                .position(|v| json_fits(&json, all.resolve(v)))
                .ok_or_else(|| mismatch(&json, &format!("any of the union's types ({})", variants.len())))?;
            Value::Union(pick as u32, Box::new(json_to_value(json, &variants[pick], all)?))
        }
        (Schema::Record(r), Json::Object(mut map)) => {
            let mut fields = Vec::with_capacity(r.fields.len());
            for f in &r.fields {
                let v = match map.remove(&f.name) {
                    Some(v) => json_to_value(v, &f.schema, all).map_err(|e| prefix(e, &f.name))?,
                    None => match &f.default {
                        Some(d) => json_to_value(d.clone(), &f.schema, all).map_err(|e| prefix(e, &f.name))?,
                        None => {
                            return Err(EngineError::new(
                                RECORD_INVALID,
                                format!(
                                "the record does not match the Avro schema: field '{}' is missing and has no default",
                                f.name
                            ),
                            ))
                        }
                    },
                };
                fields.push((f.name.clone(), v));
            }
            if let Some(extra) = map.keys().next() {
                return Err(EngineError::new(
                    RECORD_INVALID,
                    format!("the record does not match the Avro schema: it has no field '{extra}'"),
                ));
            }
            Value::Record(fields)
        }
        (Schema::Array(a), Json::Array(items)) => {
            Value::Array(items.into_iter().map(|i| json_to_value(i, &a.items, all)).collect::<Result<_, _>>()?)
        }
        (Schema::Map(m), Json::Object(map)) => Value::Map(
            map.into_iter()
                .map(|(k, v)| Ok((k, json_to_value(v, &m.types, all)?)))
                .collect::<Result<_, EngineError>>()?,
        ),
        (Schema::Enum(e), Json::String(s)) => match e.symbols.iter().position(|x| *x == s) {
            Some(i) => Value::Enum(i as u32, s),
            None => return Err(mismatch(&Json::String(s), &format!("one of the symbols {:?}", e.symbols))),
        },
        (Schema::Uuid(_), Json::String(s)) => match uuid::Uuid::parse_str(&s) {
            Ok(u) => Value::Uuid(u),
            Err(_) => return Err(mismatch(&Json::String(s), "a UUID")),
        },
        (Schema::Decimal(d), json @ (Json::Number(_) | Json::String(_))) => {
            let text = match &json {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            };
            decimal_from_text(&text, d).ok_or_else(|| mismatch(&json, &format!("a decimal with scale {}", d.scale)))?
        }
        (schema, json) => {
            // the scalar cases: let apache-avro convert and check (Long→Int, timestamps, bytes from text, ...)
            let shown = json.clone();
            let generic = Value::try_from(json).map_err(|e| EngineError::new(RECORD_INVALID, e.to_string()))?;
            let generic = match (schema, generic) {
                (Schema::Bytes | Schema::Fixed(_), Value::String(s)) => Value::Bytes(s.into_bytes()),
                (_, g) => g,
            };
            generic
                .resolve(schema)
                .map_err(|_| mismatch(&shown, &format!("{:?}", apache_avro::schema::SchemaKind::from(schema))))?
        }
    })
}

fn prefix(e: EngineError, field: &str) -> EngineError {
    let message = e.message.replacen(
        "the record does not match the Avro schema: ",
        &format!("the record does not match the Avro schema: field '{field}': "),
        1,
    );
    EngineError::new(e.code, message)
}

/// Whether a JSON value can be a value of `schema` (to pick a union branch).
fn json_fits(json: &Json, schema: &Schema) -> bool {
    match (schema, json) {
        (Schema::Null, Json::Null) => true,
        (Schema::Boolean, Json::Bool(_)) => true,
        (Schema::Int | Schema::Date | Schema::TimeMillis, Json::Number(n)) => {
            n.as_i64().is_some_and(|v| i32::try_from(v).is_ok())
        }
        (
            Schema::Long
            | Schema::TimestampMillis
            | Schema::TimestampMicros
            | Schema::TimestampNanos
            | Schema::LocalTimestampMillis
            | Schema::LocalTimestampMicros
            | Schema::LocalTimestampNanos
            | Schema::TimeMicros,
            Json::Number(n),
        ) => n.as_i64().is_some(),
        (Schema::Float | Schema::Double | Schema::Decimal(_), Json::Number(_)) => true,
        (Schema::String | Schema::Bytes | Schema::Uuid(_) | Schema::Enum(_) | Schema::Fixed(_), Json::String(_)) => {
            true
        }
        (Schema::Decimal(_), Json::String(_)) => true,
        (Schema::Record(_) | Schema::Map(_), Json::Object(_)) => true,
        (Schema::Array(_), Json::Array(_)) => true,
        _ => false,
    }
}

fn decimal_from_text(text: &str, d: &DecimalSchema) -> Option<Value> {
    let (int_part, frac_part) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    if frac_part.len() > d.scale {
        return None;
    }
    let digits = format!("{int_part}{frac_part:0<width$}", width = d.scale);
    let unscaled: i128 = digits.parse().ok()?;
    Some(decimal_value(unscaled))
}

fn decimal_value(unscaled: i128) -> Value {
    let bytes = unscaled.to_be_bytes();
    // the shortest two's complement form: drop leading bytes that only repeat the sign
    let mut start = 0;
    while start < 15 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        if (b == 0 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    Value::Decimal(apache_avro::Decimal::from(&bytes[start..]))
}

/// One node of the Avro generation plan: the field rule's value chooser, tried first, and how to make a value
/// otherwise.
pub struct Node {
    leaf: Leaf,
    random: Random,
}

/// How a node makes a random value.
enum Random {
    Null,
    Boolean,
    /// A whole number in the range, made into its Avro type (int, long, date, time or timestamp).
    Whole((i64, i64), fn(i64) -> Value),
    /// A number in the range, made into float or double.
    Real((f64, f64), fn(f64) -> Value),
    Bytes((usize, usize)),
    Str((usize, usize)),
    Uuid,
    Enum(Vec<String>),
    Fixed(usize),
    Decimal(DecimalSchema, (f64, f64)),
    Duration,
    Record(Vec<(String, Node)>),
    Array((usize, usize), Box<Node>),
    Map((usize, usize), Box<Node>),
    /// A union: the null branch (if any) with its ratio, and the other branches.
    Union {
        null: Option<(u32, f64)>,
        branches: Vec<(u32, Node)>,
    },
}

/// A node's value rule (None: the node draws at random).
type Leaf = Option<Rule<Value, SeqKind>>;

#[derive(Clone, Copy)]
enum SeqKind {
    Int,
    Long,
    Float,
    Double,
    Str,
}

/// A generator of random Avro records for one schema.
pub type AvroGenerator = Generator<Node>;

impl AvroGenerator {
    /// Builds the plan; fails on a rule that does not fit its field or names no field.
    pub fn new(schema: &AvroSchema, rules: &Rules, what: &str) -> Result<AvroGenerator, EngineError> {
        let mut known = BTreeSet::new();
        let root = plan(&schema.schema, schema, rules, "", 0, &mut known, what)?;
        rules.check_paths(&known, what)?;
        Ok(Generator::of(root))
    }

    /// The next record, encoded, appended to `out`.
    pub fn next_into(&mut self, schema: &AvroSchema, out: &mut Vec<u8>) -> Result<(), EngineError> {
        let value = self.next_record();
        schema.write(&value, out)
    }
}

impl Plan for Node {
    type Record = Value;

    fn generate(&mut self, rng: &mut fastrand::Rng, seq: u64) -> Value {
        generate(self, rng, seq)
    }
}

fn now_millis() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

#[allow(clippy::too_many_arguments)]
fn plan(
    schema: &Schema,
    all: &AvroSchema,
    rules: &Rules,
    path: &str,
    depth: usize,
    known: &mut BTreeSet<String>,
    what: &str,
) -> Result<Node, EngineError> {
    let schema = all.resolve(schema);
    let empty = FieldRules::default();
    let r = if path.is_empty() { &empty } else { rules.get(path).unwrap_or(&empty) };
    let at = |msg: String| EngineError::config(format!("{what}: {path}: {msg}"));
    let leaf = |kind: Option<SeqKind>| leaf_for(r, schema, all, kind).map_err(at);
    let range_i = |default: (i64, i64)| r.range.map(|(a, b)| (a.round() as i64, b.round() as i64)).unwrap_or(default);
    let now = now_millis();
    let year_ms = 365 * 24 * 3_600_000i64;
    // dates and timestamps: within a year before now, so that they look like production data; `per_ms` is the unit
    let within_year = |per_ms: i64| range_i(((now - year_ms) * per_ms, now * per_ms));
    let (leaf, random) = match schema {
        Schema::Null => (None, Random::Null),
        Schema::Boolean => (leaf(None)?, Random::Boolean),
        Schema::Int => (leaf(Some(SeqKind::Int))?, Random::Whole(range_i((0, 1_000_000)), |n| Value::Int(n as i32))),
        Schema::Long => (leaf(Some(SeqKind::Long))?, Random::Whole(range_i((0, 1_000_000_000)), Value::Long)),
        Schema::Float => {
            (leaf(Some(SeqKind::Float))?, Random::Real(r.range.unwrap_or((0.0, 1000.0)), |x| Value::Float(x as f32)))
        }
        Schema::Double => (leaf(Some(SeqKind::Double))?, Random::Real(r.range.unwrap_or((0.0, 1000.0)), Value::Double)),
        Schema::Bytes => (leaf(None)?, Random::Bytes(r.length.unwrap_or((8, 16)))),
        Schema::String => (leaf(Some(SeqKind::Str))?, Random::Str(r.length.unwrap_or((8, 16)))),
        Schema::Uuid(_) => (leaf(None)?, Random::Uuid),
        Schema::Enum(e) => (leaf(None)?, Random::Enum(e.symbols.clone())),
        Schema::Fixed(f) => (leaf(None)?, Random::Fixed(f.size)),
        Schema::Decimal(d) => {
            let max_digits = d.precision.saturating_sub(d.scale).min(12) as i32;
            let top = 10f64.powi(max_digits) - 1.0;
            (leaf(None)?, Random::Decimal(d.clone(), r.range.unwrap_or((0.0, top.max(0.0)))))
        }
        Schema::BigDecimal => {
            return Err(at("the big-decimal logical type is not supported for generation; use decimal".into()))
        }
        Schema::Date => (
            leaf(None)?,
            Random::Whole(range_i(((now - year_ms) / 86_400_000, now / 86_400_000)), |n| Value::Date(n as i32)),
        ),
        Schema::TimeMillis => (leaf(None)?, Random::Whole(range_i((0, 86_399_999)), |n| Value::TimeMillis(n as i32))),
        Schema::TimeMicros => (leaf(None)?, Random::Whole(range_i((0, 86_399_999_999)), Value::TimeMicros)),
        Schema::TimestampMillis => (leaf(None)?, Random::Whole(within_year(1), Value::TimestampMillis)),
        Schema::TimestampMicros => (leaf(None)?, Random::Whole(within_year(1000), Value::TimestampMicros)),
        Schema::TimestampNanos => (leaf(None)?, Random::Whole(within_year(1_000_000), Value::TimestampNanos)),
        Schema::LocalTimestampMillis => (leaf(None)?, Random::Whole(within_year(1), Value::LocalTimestampMillis)),
        Schema::LocalTimestampMicros => (leaf(None)?, Random::Whole(within_year(1000), Value::LocalTimestampMicros)),
        Schema::LocalTimestampNanos => (leaf(None)?, Random::Whole(within_year(1_000_000), Value::LocalTimestampNanos)),
        Schema::Duration(_) => (leaf(None)?, Random::Duration),
        Schema::Record(rec) => {
            let leaf = leaf(None)?;
            if depth > MAX_DEPTH {
                return Err(at(format!(
                    "records nest deeper than {MAX_DEPTH} levels (a recursive schema?); make the recursive field optional"
                )));
            }
            let mut fields = Vec::with_capacity(rec.fields.len());
            for RecordField { name, schema: field_schema, .. } in &rec.fields {
                let field_path = join(path, name);
                known.insert(field_path.clone());
                let optional = matches!(all.resolve(field_schema), Schema::Union(u) if u.variants().iter().any(|v| matches!(v, Schema::Null)));
                if !optional && rules.get(&field_path).is_some_and(|fr| fr.null_ratio.is_some()) {
                    return Err(EngineError::config(format!(
                        "{what}: {field_path}: null(…) needs an optional field (a union with null)"
                    )));
                }
                fields.push((name.clone(), plan(field_schema, all, rules, &field_path, depth + 1, known, what)?));
            }
            (leaf, Random::Record(fields))
        }
        Schema::Array(a) => {
            let item = plan(&a.items, all, rules, path, depth + 1, known, what)?;
            (None, Random::Array(r.size.unwrap_or((1, 3)), Box::new(item)))
        }
        Schema::Map(m) => {
            let value = plan(&m.types, all, rules, path, depth + 1, known, what)?;
            (None, Random::Map(r.size.unwrap_or((1, 3)), Box::new(value)))
        }
        Schema::Union(u) => return plan_union(u, schema, r, all, rules, path, depth, known, what),
        Schema::Ref { name } => return Err(at(format!("the schema refers to an unknown type '{name}'"))),
    };
    Ok(Node { leaf, random })
}

#[allow(clippy::too_many_arguments)]
fn plan_union(
    u: &UnionSchema,
    schema: &Schema,
    r: &FieldRules,
    all: &AvroSchema,
    rules: &Rules,
    path: &str,
    depth: usize,
    known: &mut BTreeSet<String>,
    what: &str,
) -> Result<Node, EngineError> {
    let null = u.variants().iter().position(|v| matches!(v, Schema::Null)).map(|i| i as u32);
    // a fixed/choice rule on an optional field holds values of the whole union (so `fixed(null)` works)
    let leaf = leaf_for(r, schema, all, None).map_err(|m| EngineError::config(format!("{what}: {path}: {m}")))?;
    let mut branches = Vec::new();
    for (i, v) in u.variants().iter().enumerate() {
        if matches!(v, Schema::Null) {
            continue;
        }
        // Recursion (a record that contains itself through an optional field) ends in null past MAX_DEPTH.
        if depth > MAX_DEPTH && null.is_some() {
            continue;
        }
        // the branch gets the field's own rules (a seq on an optional long is the long's seq)
        branches.push((i as u32, plan(v, all, rules, path, depth + 1, known, what)?));
    }
    let ratio = if branches.is_empty() { 1.0 } else { r.null_ratio.unwrap_or(DEFAULT_NULL_RATIO) };
    if null.is_none() && r.null_ratio.is_some() {
        return Err(EngineError::config(format!(
            "{what}: {path}: null(…) needs an optional field (a union with null)"
        )));
    }
    Ok(Node { leaf, random: Random::Union { null: null.map(|n| (n, ratio)), branches } })
}

/// Converts a field's value rule into a [`Leaf`] for a node of `schema`.
fn leaf_for(r: &FieldRules, schema: &Schema, all: &AvroSchema, seq: Option<SeqKind>) -> Result<Leaf, String> {
    let convert = |text: &str| -> Result<Value, String> {
        // a rule value is JSON when it parses as JSON (numbers, null, objects), otherwise text
        let json = serde_json::from_str::<Json>(text).unwrap_or_else(|_| Json::String(text.to_string()));
        let json = match (schema, json) {
            // "007" for a string field stays text, not the number 7
            (Schema::String | Schema::Uuid(UuidSchema::String) | Schema::Enum(_), Json::Number(_)) => {
                Json::String(text.to_string())
            }
            (_, j) => j,
        };
        json_to_value(json, schema, all)
            .map_err(|e| e.message.replace("the record does not match the Avro schema: ", ""))
    };
    r.value.as_ref().map(|rule| Rule::plan(rule, convert, seq, matches!(schema, Schema::String))).transpose()
}

impl RuleValue<SeqKind> for Value {
    fn of_seq(n: i64, kind: &SeqKind) -> Value {
        match kind {
            SeqKind::Int => Value::Int(n as i32),
            SeqKind::Long => Value::Long(n),
            SeqKind::Float => Value::Float(n as f32),
            SeqKind::Double => Value::Double(n as f64),
            SeqKind::Str => Value::String(n.to_string()),
        }
    }

    fn of_text(text: String) -> Value {
        Value::String(text)
    }
}

fn uniform_f64(rng: &mut fastrand::Rng, (lo, hi): (f64, f64)) -> f64 {
    lo + rng.f64() * (hi - lo)
}

fn generate(node: &mut Node, rng: &mut fastrand::Rng, seq: u64) -> Value {
    if let Some(v) = ruled(&mut node.leaf, rng, seq) {
        return v;
    }
    match &mut node.random {
        Random::Null => Value::Null,
        Random::Boolean => Value::Boolean(rng.bool()),
        Random::Whole((lo, hi), make) => make(rng.i64(*lo..=*hi)),
        Random::Real(range, make) => make(uniform_f64(rng, *range)),
        Random::Bytes(len) => {
            let n = pick_len(rng, *len);
            Value::Bytes((0..n).map(|_| rng.u8(..)).collect())
        }
        Random::Str(len) => {
            let n = pick_len(rng, *len);
            Value::String(random_text(rng, n))
        }
        Random::Uuid => Value::Uuid(random_uuid(rng)),
        Random::Enum(symbols) => {
            let i = rng.usize(..symbols.len());
            Value::Enum(i as u32, symbols[i].clone())
        }
        Random::Fixed(size) => Value::Fixed(*size, (0..*size).map(|_| rng.u8(..)).collect()),
        Random::Decimal(d, range) => {
            let x = uniform_f64(rng, *range);
            let unscaled = (x * 10f64.powi(d.scale as i32)).round() as i128;
            let v = decimal_value(unscaled);
            match (&d.inner, v) {
                // a fixed-size decimal must not need more bytes than the fixed has; clamp to what fits
                (InnerDecimalSchema::Fixed(f), Value::Decimal(dec)) if f.size < 16 => {
                    let max = (1i128 << (8 * f.size as u32 - 1)) - 1;
                    if unscaled.abs() > max {
                        decimal_value(max)
                    } else {
                        Value::Decimal(dec)
                    }
                }
                (_, v) => v,
            }
        }
        Random::Duration => Value::Duration(apache_avro::Duration::new(
            apache_avro::Months::new(rng.u32(0..12)),
            apache_avro::Days::new(rng.u32(0..31)),
            apache_avro::Millis::new(rng.u32(0..86_400_000)),
        )),
        Random::Record(fields) => {
            Value::Record(fields.iter_mut().map(|(name, n)| (name.clone(), generate(n, rng, seq))).collect())
        }
        Random::Array(size, item) => {
            let n = pick_len(rng, *size);
            Value::Array((0..n).map(|_| generate(item, rng, seq)).collect())
        }
        Random::Map(size, value) => {
            let n = pick_len(rng, *size);
            Value::Map((0..n).map(|_| (random_text(rng, 8), generate(value, rng, seq))).collect())
        }
        Random::Union { null, branches } => {
            if let Some((index, ratio)) = null {
                if branches.is_empty() || rng.f64() < *ratio {
                    return Value::Union(*index, Box::new(Value::Null));
                }
            }
            let pick = rng.usize(..branches.len());
            let (index, node) = &mut branches[pick];
            Value::Union(*index, Box::new(generate(node, rng, seq)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORDER: &str = r#"{
      "type": "record", "name": "Order", "namespace": "shop",
      "fields": [
        {"name": "id", "type": "long"},
        {"name": "code", "type": "string"},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]}},
        {"name": "note", "type": ["null", "string"], "default": null},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "updated", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "lines", "type": {"type": "array", "items": {
          "type": "record", "name": "Line", "fields": [
            {"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}]}}},
        {"name": "previous", "type": ["null", "Line"], "default": null}
      ]}"#;

    fn field<'a>(v: &'a Value, name: &str) -> &'a Value {
        match v {
            Value::Record(fields) => &fields.iter().find(|(n, _)| n == name).unwrap().1,
            other => panic!("not a record: {other:?}"),
        }
    }

    fn unwrap_union(v: &Value) -> &Value {
        match v {
            Value::Union(_, inner) => inner,
            other => other,
        }
    }

    #[test]
    fn generated_records_round_trip_and_obey_rules() {
        let schema = AvroSchema::parse(ORDER, "order.avsc").unwrap();
        let rules = Rules::parse(
            "id = seq(1000, 10)\ncode = template(ORD-{seq})\nstatus = choice(NEW, PAID)\nnote = null(1)\n\
             lines = size(2,4)\nlines.sku = length(5)\nlines.qty = range(1, 9)",
            "rules",
        )
        .unwrap();
        let mut generator = AvroGenerator::new(&schema, &rules, "value.schema.rules").unwrap().with_seed(7);
        let now = now_millis();
        for i in 0..200i64 {
            let value = generator.next_record();
            assert!(value.validate(&schema.schema), "invalid record {value:?}");
            assert_eq!(field(&value, "id"), &Value::Long(1000 + 10 * i));
            assert_eq!(field(&value, "code"), &Value::String(format!("ORD-{i}")));
            assert!(matches!(field(&value, "status"), Value::Enum(0 | 1, _)), "{:?}", field(&value, "status"));
            assert_eq!(unwrap_union(field(&value, "note")), &Value::Null);
            let Value::Array(lines) = field(&value, "lines") else { panic!() };
            assert!((2..=4).contains(&lines.len()));
            for line in lines {
                let Value::String(sku) = field(line, "sku") else { panic!() };
                assert_eq!(sku.chars().count(), 5);
                let Value::Int(q) = field(line, "qty") else { panic!() };
                assert!((1..=9).contains(q));
            }
            // logical types hold valid values: a UUID, dates and timestamps of the past year
            assert!(matches!(field(&value, "ref"), Value::Uuid(_)));
            let Value::Date(day) = field(&value, "day") else { panic!() };
            assert!(i64::from(*day) <= now / 86_400_000 && i64::from(*day) > now / 86_400_000 - 366);
            let Value::TimestampMillis(ts) = field(&value, "created") else { panic!() };
            assert!(*ts <= now && *ts > now - 366 * 86_400_000);
            let Value::TimestampMicros(us) = field(&value, "updated") else { panic!() };
            assert!(*us <= now * 1000 + 1000 && *us > (now - 366 * 86_400_000) * 1000);

            // binary round trip through apache-avro's decoder
            let mut bytes = Vec::new();
            schema.write(&value, &mut bytes).unwrap();
            let json = schema.decode(&bytes).unwrap();
            assert_eq!(json["id"], 1000 + 10 * i);
            assert_eq!(json["code"], format!("ORD-{i}"));
        }
    }

    #[test]
    fn optional_fields_follow_the_null_ratio() {
        let schema = AvroSchema::parse(ORDER, "order.avsc").unwrap();
        let rules = Rules::parse("note = null(0.3) length(4)", "r").unwrap();
        let mut generator = AvroGenerator::new(&schema, &rules, "r").unwrap().with_seed(3);
        let nulls = (0..2000).filter(|_| unwrap_union(field(&generator.next_record(), "note")) == &Value::Null).count();
        assert!((450..750).contains(&nulls), "{nulls} nulls in 2000 records with null(0.3)");
    }

    #[test]
    fn decimals_are_valid_for_their_scale() {
        let schema = AvroSchema::parse(ORDER, "order.avsc").unwrap();
        let rules = Rules::parse("amount = range(10.5, 20)", "r").unwrap();
        let mut generator = AvroGenerator::new(&schema, &rules, "r").unwrap();
        for _ in 0..100 {
            let mut bytes = Vec::new();
            generator.next_into(&schema, &mut bytes).unwrap();
            // apache-avro decodes a decimal to its unscaled two's complement bytes
            let reader = apache_avro::reader::datum::GenericDatumReader::builder(&schema.schema).build().unwrap();
            let Value::Record(fields) = reader.read_value(&mut &bytes[..]).unwrap() else { panic!() };
            let Value::Decimal(d) = &fields.iter().find(|(n, _)| n == "amount").unwrap().1 else { panic!() };
            let raw: Vec<u8> = d.try_into().unwrap();
            let mut padded = [if raw[0] & 0x80 != 0 { 0xff } else { 0 }; 16];
            padded[16 - raw.len()..].copy_from_slice(&raw);
            let unscaled = i128::from_be_bytes(padded);
            assert!((1050..=2000).contains(&unscaled), "{unscaled}");
        }
    }

    #[test]
    fn rules_that_do_not_fit_are_refused() {
        let schema = AvroSchema::parse(ORDER, "order.avsc").unwrap();
        let err = |t: &str| AvroGenerator::new(&schema, &Rules::parse(t, "r").unwrap(), "r").err().unwrap().message;
        assert!(err("nope = seq").contains("no field 'nope'"), "{}", err("nope = seq"));
        assert!(err("status = choice(NEW, LOST)").contains("LOST"), "{}", err("status = choice(NEW, LOST)"));
        assert!(err("id = template(x{seq})").contains("template needs a string field"));
        assert!(err("code = null(0.5)").contains("needs an optional field"));
        // nested paths are known, so they are accepted
        assert!(AvroGenerator::new(&schema, &Rules::parse("previous.sku = fixed(X)", "r").unwrap(), "r").is_ok());
    }

    #[test]
    fn json_values_are_encoded_against_the_schema() {
        let schema = AvroSchema::parse(ORDER, "order.avsc").unwrap();
        let json = r#"{"id": 5, "code": "A", "status": "PAID", "note": "hi", "amount": "12.34",
            "ref": "2c8a5b9e-1f8f-4b8f-9a57-1d2f8e3a0b11", "day": 19000, "created": 1700000000000,
            "updated": 1700000000000000, "lines": [{"sku": "S", "qty": 2}]}"#;
        let mut bytes = Vec::new();
        schema.encode_json(json, &mut bytes).unwrap();
        let back = schema.decode(&bytes).unwrap();
        assert_eq!(
            (back["id"].as_i64(), back["status"].as_str(), back["note"].as_str()),
            (Some(5), Some("PAID"), Some("hi"))
        );
        assert!(back["previous"].is_null(), "the default fills a missing optional field: {back}");

        let bad = schema.encode_json(r#"{"id": "five"}"#, &mut Vec::new()).unwrap_err();
        assert_eq!(bad.code, RECORD_INVALID);
        assert!(bad.message.contains("field 'id'"), "{}", bad.message);
        let missing = schema.encode_json(r#"{"id": 1}"#, &mut Vec::new()).unwrap_err();
        assert!(missing.message.contains("field 'code' is missing"), "{}", missing.message);
    }

    #[test]
    fn schema_errors_are_explained() {
        assert_eq!(AvroSchema::parse("{", "x.avsc").err().unwrap().code, SCHEMA_ERROR);
        let e = AvroSchema::parse(r#"{"type": "record", "name": "R"}"#, "x.avsc").err().unwrap();
        assert!(e.message.starts_with("x.avsc: not a valid Avro schema"), "{}", e.message);
    }
}
