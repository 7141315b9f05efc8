//! Avro: records generated from a schema (random values per type, field rules), JSON encoded against a
//! schema, and datums decoded: the `apache-avro` crate parses schemas and decodes, [`super::avro_binary`] encodes.
//!
//! The schema is turned once into a plan (a tree of [`Node`]s with the rules attached and fixed/choice
//! values already encoded), so generating a record walks the plan, never the rules text, and writes Avro's
//! binary encoding straight into the record's buffer: no value tree and no writer per record (at 100 records
//! per sample, building an `apache_avro::Value` tree and a `GenericDatumWriter` for each record cost 3× the
//! send itself; bench/results/avro-run.md).

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use apache_avro::schema::{DecimalSchema, InnerDecimalSchema, Name, RecordField, UnionSchema, UuidSchema};
use apache_avro::types::Value;
use apache_avro::Schema;
use serde_json::Value as Json;

use super::avro_binary as binary;
use super::generator::{join, Generator, Rule, RuleValue, Walk};
use super::rules::{pick_len, FieldRules, Rules};
use crate::error::{Code, EngineError};
use crate::template::random_uuid;

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
                Code::SchemaError,
                format!("{origin}: not a JSON document ({e}); an Avro schema (.avsc) is JSON"),
            )
        })?;
        let schema = Schema::parse(&json)
            .map_err(|e| EngineError::new(Code::SchemaError, format!("{origin}: not a valid Avro schema: {e}")))?;
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
            EngineError::new(
                Code::RecordInvalid,
                format!("the value is not JSON ({e}), so it cannot be encoded as Avro"),
            )
        })?;
        let value = from_json(parsed, &self.schema, self)?;
        self.write(&value, out)
    }

    fn write(&self, value: &Value, out: &mut Vec<u8>) -> Result<(), EngineError> {
        binary::value(out, value, &self.schema, &self.names).map_err(|e| {
            EngineError::new(Code::RecordInvalid, format!("the record does not match the Avro schema: {e}"))
        })
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

    /// The schema a name refers to (any other schema as it is).
    pub(super) fn resolve<'a>(&'a self, schema: &'a Schema) -> &'a Schema {
        binary::resolve(&self.names, schema)
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
        EngineError::new(
            Code::RecordInvalid,
            format!("the record does not match the Avro schema: {shown} is not {what}"),
        )
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
                                Code::RecordInvalid,
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
                    Code::RecordInvalid,
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
            let generic = Value::try_from(json).map_err(|e| EngineError::new(Code::RecordInvalid, e.to_string()))?;
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
    EngineError::named(e.code, message)
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
    let be = unscaled.to_be_bytes();
    Some(Value::Decimal(apache_avro::Decimal::from(binary::shortest_twos_complement(&be))))
}

/// One node of the Avro generation plan: the field rule's value chooser, tried first, and how to write a value
/// otherwise. Values are written in Avro's binary encoding straight into the record's buffer.
pub struct Node {
    leaf: Leaf,
    random: Random,
}

/// How a node writes a random value.
enum Random {
    Null,
    Boolean,
    /// A whole number in the range (int, long, date, time or timestamp: all zig-zag varints); `int` narrows it to 32
    /// bits first.
    Whole {
        range: (i64, i64),
        int: bool,
    },
    Float((f64, f64)),
    Double((f64, f64)),
    Bytes((usize, usize)),
    Str((usize, usize)),
    Uuid(UuidSchema),
    /// An enum of this many symbols.
    Enum(usize),
    Fixed(usize),
    /// A decimal: `scale` digits after the point, a value in `range`; on a fixed of `fixed` bytes or on bytes.
    Decimal {
        scale: i32,
        range: (f64, f64),
        fixed: Option<usize>,
    },
    Duration,
    Record(Vec<Node>),
    Array((usize, usize), Box<Node>),
    Map((usize, usize), Box<Node>),
    /// A union: the null branch (if any) with its ratio, and the other branches.
    Union {
        null: Option<(i64, f64)>,
        branches: Vec<(i64, Node)>,
    },
}

/// One value of a field rule (`fixed`, `choice`), already in Avro's binary encoding for its field.
#[derive(Clone)]
pub struct Encoded(Vec<u8>);

/// A node's value rule (None: the node draws at random); an optional field's rule holds values of the whole union,
/// and its `null(…)` ratio is drawn first.
type Leaf = Option<(Rule<Encoded, SeqKind>, Option<(i64, f64)>)>;

#[derive(Clone, Copy)]
enum SeqKind {
    Int,
    Long,
    Float,
    Double,
    Str,
}

/// The plan of a whole record: the tree of nodes and a scratch buffer for the texts of templates.
pub struct AvroPlan {
    root: Node,
    scratch: Vec<u8>,
}

/// A generator of random Avro records for one schema.
pub type AvroGenerator = Generator<AvroPlan>;

impl AvroGenerator {
    /// Builds the plan; fails on a rule that does not fit its field or names no field.
    pub fn new(schema: &AvroSchema, rules: &Rules, what: &str) -> Result<AvroGenerator, EngineError> {
        let mut planner = Planner { all: schema, walk: Walk::new(rules), what, union_value: None };
        let root = planner.plan(&schema.schema, "", 0)?;
        planner.walk.finish(what)?;
        Ok(Generator::of(AvroPlan { root, scratch: Vec::new() }))
    }

    /// The next record, encoded, appended to `out`: written from the plan, no value tree in between.
    pub fn next_into(&mut self, out: &mut Vec<u8>) {
        self.next_with(|plan, rng, seq| write(&mut plan.root, rng, seq, out, &mut plan.scratch));
    }
}

fn now_millis() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// What planning needs besides the node at hand: the schema's names, the rules and the fields met, and the setting's
/// name for errors.
struct Planner<'a> {
    all: &'a AvroSchema,
    walk: Walk<'a>,
    what: &'a str,
    /// The path of the optional field being planned whose union took the field's value rule.
    union_value: Option<String>,
}

impl Planner<'_> {
    fn error(&self, path: &str, msg: impl std::fmt::Display) -> EngineError {
        EngineError::config(format!("{}: {path}: {msg}", self.what))
    }

    fn plan(&mut self, schema: &Schema, path: &str, depth: usize) -> Result<Node, EngineError> {
        let all = self.all;
        let schema = all.resolve(schema);
        let r = self.walk.at(path);
        // the branches of an optional field whose union holds the value rule draw nothing from it themselves
        let union_owns_value = self.union_value.as_deref() == Some(path);
        let leaf = |kind: Option<SeqKind>| match union_owns_value {
            true => Ok(None),
            false => leaf_for(r, schema, all, kind, None).map_err(|m| self.error(path, m)),
        };
        let range_i =
            |default: (i64, i64)| r.range.map(|(a, b)| (a.round() as i64, b.round() as i64)).unwrap_or(default);
        let now = now_millis();
        let year_ms = 365 * 24 * 3_600_000i64;
        // dates and timestamps: within a year before now, so that they look like production data; `per_ms` is the
        // unit
        let within_year =
            |per_ms: i64| Random::Whole { range: range_i(((now - year_ms) * per_ms, now * per_ms)), int: false };
        let whole = |default: (i64, i64), int: bool| Random::Whole { range: range_i(default), int };
        let (leaf, random) = match schema {
            Schema::Null => (None, Random::Null),
            Schema::Boolean => (leaf(None)?, Random::Boolean),
            Schema::Int => (leaf(Some(SeqKind::Int))?, whole((0, 1_000_000), true)),
            Schema::Long => (leaf(Some(SeqKind::Long))?, whole((0, 1_000_000_000), false)),
            Schema::Float => (leaf(Some(SeqKind::Float))?, Random::Float(r.range.unwrap_or((0.0, 1000.0)))),
            Schema::Double => (leaf(Some(SeqKind::Double))?, Random::Double(r.range.unwrap_or((0.0, 1000.0)))),
            Schema::Bytes => (leaf(None)?, Random::Bytes(r.length.unwrap_or((8, 16)))),
            Schema::String => (leaf(Some(SeqKind::Str))?, Random::Str(r.length.unwrap_or((8, 16)))),
            Schema::Uuid(form) => (leaf(None)?, Random::Uuid(form.clone())),
            Schema::Enum(e) => (leaf(None)?, Random::Enum(e.symbols.len())),
            Schema::Fixed(f) => (leaf(None)?, Random::Fixed(f.size)),
            Schema::Decimal(d) => {
                let max_digits = d.precision.saturating_sub(d.scale).min(12) as i32;
                let top = 10f64.powi(max_digits) - 1.0;
                let fixed = match &d.inner {
                    InnerDecimalSchema::Fixed(f) => Some(f.size),
                    InnerDecimalSchema::Bytes => None,
                };
                let range = r.range.unwrap_or((0.0, top.max(0.0)));
                (leaf(None)?, Random::Decimal { scale: d.scale as i32, range, fixed })
            }
            Schema::BigDecimal => {
                return Err(
                    self.error(path, "the big-decimal logical type is not supported for generation; use decimal")
                )
            }
            Schema::Date => (leaf(None)?, whole(((now - year_ms) / 86_400_000, now / 86_400_000), true)),
            Schema::TimeMillis => (leaf(None)?, whole((0, 86_399_999), true)),
            Schema::TimeMicros => (leaf(None)?, whole((0, 86_399_999_999), false)),
            Schema::TimestampMillis | Schema::LocalTimestampMillis => (leaf(None)?, within_year(1)),
            Schema::TimestampMicros | Schema::LocalTimestampMicros => (leaf(None)?, within_year(1000)),
            Schema::TimestampNanos | Schema::LocalTimestampNanos => (leaf(None)?, within_year(1_000_000)),
            Schema::Duration(_) => (leaf(None)?, Random::Duration),
            Schema::Record(rec) => {
                let leaf = leaf(None)?;
                if depth > MAX_DEPTH {
                    return Err(self.error(path, format!(
                        "records nest deeper than {MAX_DEPTH} levels (a recursive schema?); make the recursive field optional"
                    )));
                }
                let mut fields = Vec::with_capacity(rec.fields.len());
                for RecordField { name, schema: field_schema, .. } in &rec.fields {
                    let field_path = join(path, name);
                    self.walk.visit(&field_path);
                    let optional =
                        matches!(all.resolve(field_schema), Schema::Union(u) if binary::null_index(u).is_some());
                    if !optional && self.walk.at(&field_path).null_ratio.is_some() {
                        return Err(self.error(&field_path, "null(…) needs an optional field (a union with null)"));
                    }
                    fields.push(self.plan(field_schema, &field_path, depth + 1)?);
                }
                (leaf, Random::Record(fields))
            }
            Schema::Array(a) => {
                let item = self.plan(&a.items, path, depth + 1)?;
                (None, Random::Array(r.size.unwrap_or((1, 3)), Box::new(item)))
            }
            Schema::Map(m) => {
                let value = self.plan(&m.types, path, depth + 1)?;
                (None, Random::Map(r.size.unwrap_or((1, 3)), Box::new(value)))
            }
            Schema::Union(u) => return self.plan_union(u, schema, r, path, depth),
            Schema::Ref { name } => {
                return Err(self.error(path, format!("the schema refers to an unknown type '{name}'")))
            }
        };
        Ok(Node { leaf, random })
    }

    fn plan_union(
        &mut self,
        u: &UnionSchema,
        schema: &Schema,
        r: &FieldRules,
        path: &str,
        depth: usize,
    ) -> Result<Node, EngineError> {
        let null = binary::null_index(u);
        if null.is_none() && r.null_ratio.is_some() {
            return Err(self.error(path, "null(…) needs an optional field (a union with null)"));
        }
        // a fixed/choice rule on an optional field holds values of the whole union (so `fixed(null)` works); an
        // explicit null(…) beside it still makes that share of nulls
        let explicit_null = null.zip(r.null_ratio);
        let leaf = leaf_for(r, schema, self.all, None, explicit_null).map_err(|m| self.error(path, m))?;
        let outer = self.union_value.take();
        if leaf.is_some() {
            self.union_value = Some(path.to_string());
        }
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
            branches.push((i as i64, self.plan(v, path, depth + 1)?));
        }
        self.union_value = outer;
        let ratio = if branches.is_empty() { 1.0 } else { r.null_ratio.unwrap_or(DEFAULT_NULL_RATIO) };
        Ok(Node { leaf, random: Random::Union { null: null.map(|n| (n, ratio)), branches } })
    }
}

/// Converts a field's value rule into a [`Leaf`] for a node of `schema`: fixed and choice values encoded once, here.
fn leaf_for(
    r: &FieldRules,
    schema: &Schema,
    all: &AvroSchema,
    seq: Option<SeqKind>,
    null: Option<(i64, f64)>,
) -> Result<Leaf, String> {
    let convert = |text: &str| -> Result<Encoded, String> {
        // a rule value is JSON when it parses as JSON (numbers, null, objects), otherwise text
        let json = serde_json::from_str::<Json>(text).unwrap_or_else(|_| Json::String(text.to_string()));
        let json = match (schema, json) {
            // "007" for a string field stays text, not the number 7
            (Schema::String | Schema::Uuid(UuidSchema::String) | Schema::Enum(_), Json::Number(_)) => {
                Json::String(text.to_string())
            }
            (_, j) => j,
        };
        let value = json_to_value(json, schema, all)
            .map_err(|e| e.message.replace("the record does not match the Avro schema: ", ""))?;
        let mut bytes = Vec::new();
        binary::value(&mut bytes, &value, schema, &all.names)?;
        Ok(Encoded(bytes))
    };
    let rule = r.value.as_ref().map(|rule| Rule::plan(rule, convert, seq, matches!(schema, Schema::String)));
    Ok(rule.transpose()?.map(|rule| (rule, null)))
}

impl RuleValue<SeqKind> for Encoded {
    fn of_seq(n: i64, kind: &SeqKind) -> Encoded {
        let mut out = Vec::new();
        write_seq(&mut out, n, *kind);
        Encoded(out)
    }

    fn of_text(text: String) -> Encoded {
        let mut out = Vec::new();
        binary::bytes(&mut out, text.as_bytes());
        Encoded(out)
    }
}

/// Sequence number `n` as a value of `kind`.
fn write_seq(out: &mut Vec<u8>, n: i64, kind: SeqKind) {
    match kind {
        SeqKind::Int => binary::long(out, i64::from(n as i32)),
        SeqKind::Long => binary::long(out, n),
        SeqKind::Float => out.extend_from_slice(&(n as f32).to_le_bytes()),
        SeqKind::Double => out.extend_from_slice(&(n as f64).to_le_bytes()),
        SeqKind::Str => {
            let mut digits = [0u8; 20];
            let mut w = &mut digits[..];
            // 20 bytes hold any i64 in decimal
            let _ = std::io::Write::write_fmt(&mut w, format_args!("{n}"));
            let len = 20 - w.len();
            binary::bytes(out, &digits[..len]);
        }
    }
}

fn uniform_f64(rng: &mut fastrand::Rng, (lo, hi): (f64, f64)) -> f64 {
    lo + rng.f64() * (hi - lo)
}

/// Writes a rule's value for record number `seq`; `scratch` holds a template's text before its length is known.
fn write_rule(
    rule: &mut Rule<Encoded, SeqKind>,
    rng: &mut fastrand::Rng,
    seq: u64,
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) {
    match rule {
        Rule::Fixed(v) => out.extend_from_slice(&v.0),
        Rule::Choice(items) => out.extend_from_slice(&items[rng.usize(..items.len())].0),
        Rule::Seq(state, kind) => write_seq(out, state.advance(), *kind),
        Rule::Template(t) => {
            t.render_into(scratch, seq, 0, rng);
            binary::bytes(out, scratch);
        }
    }
}

/// Letters and digits, as `rules::random_text` makes them, written as an Avro string.
fn write_text(out: &mut Vec<u8>, rng: &mut fastrand::Rng, n: usize) {
    binary::long(out, n as i64);
    out.extend((0..n).map(|_| rng.alphanumeric() as u8));
}

fn write(node: &mut Node, rng: &mut fastrand::Rng, seq: u64, out: &mut Vec<u8>, scratch: &mut Vec<u8>) {
    if let Some((rule, null)) = &mut node.leaf {
        match null {
            Some((index, ratio)) if rng.f64() < *ratio => binary::long(out, *index),
            _ => write_rule(rule, rng, seq, out, scratch),
        }
        return;
    }
    match &mut node.random {
        Random::Null => {}
        Random::Boolean => out.push(u8::from(rng.bool())),
        Random::Whole { range: (lo, hi), int } => {
            let n = rng.i64(*lo..=*hi);
            binary::long(out, if *int { i64::from(n as i32) } else { n });
        }
        Random::Float(range) => out.extend_from_slice(&(uniform_f64(rng, *range) as f32).to_le_bytes()),
        Random::Double(range) => out.extend_from_slice(&uniform_f64(rng, *range).to_le_bytes()),
        Random::Bytes(len) => {
            let n = pick_len(rng, *len);
            binary::long(out, n as i64);
            out.extend((0..n).map(|_| rng.u8(..)));
        }
        Random::Str(len) => {
            let n = pick_len(rng, *len);
            write_text(out, rng, n);
        }
        Random::Uuid(form) => binary::uuid(out, &random_uuid(rng), form),
        Random::Enum(symbols) => binary::long(out, rng.usize(..*symbols) as i64),
        Random::Fixed(size) => out.extend((0..*size).map(|_| rng.u8(..))),
        Random::Decimal { scale, range, fixed } => {
            let x = uniform_f64(rng, *range);
            let mut unscaled = (x * 10f64.powi(*scale)).round() as i128;
            // a fixed-size decimal must not need more bytes than the fixed has; clamp to what fits
            if let Some(size) = fixed.filter(|s| *s < 16) {
                let max = (1i128 << (8 * size as u32 - 1)) - 1;
                unscaled = unscaled.clamp(-max, max);
            }
            binary::decimal(out, unscaled, *fixed);
        }
        Random::Duration => {
            // months, days, milliseconds: three little-endian unsigned ints in a fixed of 12
            for n in [rng.u32(0..12), rng.u32(0..31), rng.u32(0..86_400_000)] {
                out.extend_from_slice(&n.to_le_bytes());
            }
        }
        Random::Record(fields) => fields.iter_mut().for_each(|n| write(n, rng, seq, out, scratch)),
        Random::Array(size, item) => {
            let n = pick_len(rng, *size);
            binary::block_start(out, n);
            (0..n).for_each(|_| write(item, rng, seq, out, scratch));
            binary::block_end(out);
        }
        Random::Map(size, value) => {
            let n = pick_len(rng, *size);
            binary::block_start(out, n);
            for _ in 0..n {
                write_text(out, rng, 8);
                write(value, rng, seq, out, scratch);
            }
            binary::block_end(out);
        }
        Random::Union { null, branches } => {
            if let Some((index, ratio)) = null {
                if branches.is_empty() || rng.f64() < *ratio {
                    binary::long(out, *index);
                    return;
                }
            }
            let pick = rng.usize(..branches.len());
            let (index, node) = &mut branches[pick];
            binary::long(out, *index);
            write(node, rng, seq, out, scratch);
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

    /// Decodes a datum with apache-avro's reader: the whole buffer, a value valid for the schema.
    fn read(schema: &AvroSchema, bytes: &[u8]) -> Value {
        let reader = apache_avro::reader::datum::GenericDatumReader::builder(&schema.schema).build().unwrap();
        let mut rest = bytes;
        let value = reader.read_value(&mut rest).unwrap_or_else(|e| panic!("{e}: {bytes:?}"));
        assert!(rest.is_empty(), "{} bytes left after the record", rest.len());
        assert!(value.validate(&schema.schema), "invalid record {value:?}");
        value
    }

    /// The next generated record, as apache-avro's reader decodes it.
    fn next_value(generator: &mut AvroGenerator, schema: &AvroSchema) -> Value {
        let mut bytes = Vec::new();
        generator.next_into(&mut bytes);
        read(schema, &bytes)
    }

    /// What apache-avro's writer makes of a value.
    fn apache_bytes(schema: &AvroSchema, value: &Value) -> Vec<u8> {
        let writer = apache_avro::writer::datum::GenericDatumWriter::builder(&schema.schema).build().unwrap();
        let mut out = Vec::new();
        writer.write_value_ref(&mut out, value).unwrap();
        out
    }

    /// Generates records and holds them against apache-avro: each decodes with its reader to a valid value, and its
    /// writer encodes that value to the very same bytes.
    fn same_as_apache(text: &str, rules: &str, records: usize) -> Vec<Value> {
        let schema = AvroSchema::parse(text, "schema").unwrap();
        let rules = Rules::parse(rules, "rules").unwrap();
        let mut generator = AvroGenerator::new(&schema, &rules, "rules").unwrap().with_seed(11);
        (0..records)
            .map(|_| {
                let mut bytes = Vec::new();
                generator.next_into(&mut bytes);
                let value = read(&schema, &bytes);
                let theirs = apache_bytes(&schema, &value);
                if has_map_of_several(&value) {
                    // apache-avro's maps are hash maps: their entries come back in another order
                    assert_eq!((read(&schema, &theirs), theirs.len()), (value.clone(), bytes.len()));
                } else {
                    assert_eq!(theirs, bytes, "{value:?}");
                }
                value
            })
            .collect()
    }

    fn has_map_of_several(v: &Value) -> bool {
        match v {
            Value::Map(m) => m.len() > 1 || m.values().any(has_map_of_several),
            Value::Record(fields) => fields.iter().any(|(_, v)| has_map_of_several(v)),
            Value::Array(items) => items.iter().any(has_map_of_several),
            Value::Union(_, v) => has_map_of_several(v),
            _ => false,
        }
    }

    /// Every type, logical type, union form, nesting and container the generator writes.
    const EVERY_TYPE: &str = r#"{
      "type": "record", "name": "All", "namespace": "t",
      "fields": [
        {"name": "n", "type": "null"},
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "neg", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "big", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "raw", "type": "bytes"},
        {"name": "s", "type": "string"},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}},
        {"name": "fx", "type": {"type": "fixed", "name": "F4", "size": 4}},
        {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "ufixed", "type": {"type": "fixed", "name": "U16", "size": 16, "logicalType": "uuid"}},
        {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
        {"name": "negdec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 3}},
        {"name": "decfixed", "type": {"type": "fixed", "name": "D8", "size": 8, "logicalType": "decimal", "precision": 15, "scale": 4}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tms", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "tus", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "ts_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "ts_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "ts_ns", "type": {"type": "long", "logicalType": "timestamp-nanos"}},
        {"name": "lts_ms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "lts_us", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "dur", "type": {"type": "fixed", "name": "Dur", "size": 12, "logicalType": "duration"}},
        {"name": "opt", "type": ["null", "string"], "default": null},
        {"name": "multi", "type": ["null", "int", "string", "E"]},
        {"name": "notnull", "type": ["long", "string"]},
        {"name": "inner", "type": {"type": "record", "name": "Inner", "fields": [
          {"name": "x", "type": "int"}, {"name": "tags", "type": {"type": "array", "items": "string"}}]}},
        {"name": "again", "type": "Inner"},
        {"name": "maybe", "type": ["null", "Inner"], "default": null},
        {"name": "items", "type": {"type": "array", "items": "Inner"}},
        {"name": "empty", "type": {"type": "array", "items": "long"}},
        {"name": "m", "type": {"type": "map", "values": ["null", "double"]}},
        {"name": "nested", "type": {"type": "array", "items": {"type": "map", "values": "F4"}}},
        {"name": "seq_s", "type": "string"},
        {"name": "seq_i", "type": "int"},
        {"name": "seq_f", "type": "float"},
        {"name": "seq_d", "type": "double"},
        {"name": "tpl", "type": "string"},
        {"name": "pick", "type": ["null", "string"]},
        {"name": "fixrec", "type": "Inner"}
      ]}"#;

    const EVERY_RULE: &str = r#"
        neg = range(-100000, -1)
        big = range(-9000000000000, 9000000000000)
        negdec = range(-999, 999)
        decfixed = range(-99999999999, 99999999999)
        empty = size(0)
        items = size(0, 3)
        m = size(0, 4)
        multi = null(0.2)
        seq_s = seq(-5, 7)
        seq_i = seq(2147483640)
        seq_f = seq(1, 3)
        seq_d = seq(10)
        tpl = template(T-{seq}-{uuid})
        pick = choice(a, null, b) null(0.25)
        fixrec = fixed({"x": 7, "tags": ["p", "q"]})
        s = length(0, 300)
    "#;

    #[test]
    fn every_type_is_written_as_apache_avro_writes_it() {
        let values = same_as_apache(EVERY_TYPE, EVERY_RULE, 400);
        // the rules took effect: negative numbers, sequences, templates, the record-valued fixed rule
        for (i, v) in values.iter().enumerate() {
            assert!(matches!(field(v, "neg"), Value::Int(n) if *n < 0));
            assert_eq!(field(v, "seq_s"), &Value::String((-5 + 7 * i as i64).to_string()));
            assert_eq!(
                field(v, "seq_i"),
                &Value::Int((2147483640 + i as i64) as i32),
                "an int seq wraps as the int does"
            );
            assert_eq!(field(v, "seq_f"), &Value::Float((1 + 3 * i) as f32));
            let Value::String(t) = field(v, "tpl") else { panic!() };
            assert!(t.starts_with(&format!("T-{i}-")) && t.len() == format!("T-{i}-").len() + 36, "{t}");
            assert_eq!(
                field(v, "fixrec"),
                &Value::Record(vec![
                    ("x".into(), Value::Int(7)),
                    ("tags".into(), Value::Array(vec![Value::String("p".into()), Value::String("q".into())])),
                ])
            );
            assert_eq!(field(v, "empty"), &Value::Array(vec![]));
        }
        // an explicit null(…) beside a choice on an optional field makes its share of nulls; choice(null) too
        let nulls = values.iter().filter(|v| unwrap_union(field(v, "pick")) == &Value::Null).count();
        assert!((120..260).contains(&nulls), "{nulls} nulls of 400 with null(0.25) and one choice of 3 null");
        // strings of 0 to 300 bytes: length prefixes of one and two varint bytes
        let lens: Vec<usize> = values
            .iter()
            .map(|v| match field(v, "s") {
                Value::String(s) => s.len(),
                _ => 0,
            })
            .collect();
        assert!(lens.contains(&0) || lens.iter().any(|l| *l < 10));
        assert!(lens.iter().any(|l| *l > 200));
    }

    #[test]
    fn the_shipped_schemas_are_written_as_apache_avro_writes_them() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        for (avsc, rules) in [
            ("bench/schemas/order.avsc", "bench/schemas/order.rules"),
            ("tests/schema/schemas/order.avsc", "tests/schema/schemas/order.rules"),
        ] {
            let text = std::fs::read_to_string(format!("{root}/{avsc}")).unwrap();
            let rules = std::fs::read_to_string(format!("{root}/{rules}")).unwrap();
            let values = same_as_apache(&text, &rules, 300);
            assert_eq!(values.len(), 300, "{avsc}");
            let tiers =
                values.iter().filter(|v| unwrap_union(field(field(v, "customer"), "tier")) == &Value::Null).count();
            assert!((50..130).contains(&tiers), "{avsc}: {tiers} null tiers of 300 with null(0.3)");
        }
        let text = std::fs::read_to_string(format!("{root}/bench/schemas/order.avsc")).unwrap();
        same_as_apache(&text, "", 300);
    }

    #[test]
    fn json_records_are_encoded_as_apache_avro_encodes_them() {
        let schema = AvroSchema::parse(EVERY_TYPE, "all.avsc").unwrap();
        let mut generator =
            AvroGenerator::new(&schema, &Rules::parse(EVERY_RULE, "r").unwrap(), "r").unwrap().with_seed(5);
        for _ in 0..100 {
            let value = next_value(&mut generator, &schema);
            let mut ours = Vec::new();
            schema.write(&value, &mut ours).unwrap();
            assert_eq!(ours, apache_bytes(&schema, &value), "{value:?}");
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
            let value = next_value(&mut generator, &schema);
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
        let nulls = (0..2000)
            .filter(|_| unwrap_union(field(&next_value(&mut generator, &schema), "note")) == &Value::Null)
            .count();
        assert!((450..750).contains(&nulls), "{nulls} nulls in 2000 records with null(0.3)");
    }

    #[test]
    fn decimals_are_valid_for_their_scale() {
        let schema = AvroSchema::parse(ORDER, "order.avsc").unwrap();
        let rules = Rules::parse("amount = range(10.5, 20)", "r").unwrap();
        let mut generator = AvroGenerator::new(&schema, &rules, "r").unwrap();
        for _ in 0..100 {
            // apache-avro decodes a decimal to its unscaled two's complement bytes
            let Value::Record(fields) = next_value(&mut generator, &schema) else { panic!() };
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
        assert_eq!(bad.code, Code::RecordInvalid);
        assert!(bad.message.contains("field 'id'"), "{}", bad.message);
        let missing = schema.encode_json(r#"{"id": 1}"#, &mut Vec::new()).unwrap_err();
        assert!(missing.message.contains("field 'code' is missing"), "{}", missing.message);
    }

    #[test]
    fn schema_errors_are_explained() {
        assert_eq!(AvroSchema::parse("{", "x.avsc").err().unwrap().code, Code::SchemaError);
        let e = AvroSchema::parse(r#"{"type": "record", "name": "R"}"#, "x.avsc").err().unwrap();
        assert!(e.message.starts_with("x.avsc: not a valid Avro schema"), "{}", e.message);
    }
}
