//! JSON Schema: records generated from a schema, JSON values checked against it (the `jsonschema` crate
//! validates), and the payload is the JSON text itself (Confluent's JSON Schema serializer writes the same).
//!
//! Generation understands the keywords that shape data: `type` (also `["string", "null"]`), `properties`,
//! `required` (optional properties are left out at the `null` ratio), `enum`, `const`, `minimum`/`maximum`
//! (and the exclusive ones), `minLength`/`maxLength`, `format` (`date-time`, `date`, `time`, `uuid`, `email`,
//! `uri`, `ipv4`), `items`, `minItems`/`maxItems`, local `$ref`s (`#/$defs/…`, `#/definitions/…`) and
//! `oneOf`/`anyOf` (a branch at random). A `pattern` cannot be generated at random: such a field needs a rule.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Number, Value as Json};

use super::generator::{join, ruled, Generator, Plan, PlanError, Rule, RuleValue, Walk};
use super::rules::{pick_len, random_text, FieldRules, Rules};
use crate::error::{Code, EngineError};
use crate::template::random_uuid;

/// Default share of absent (or null) optional properties without a `null` rule.
pub const DEFAULT_NULL_RATIO: f64 = 0.1;
const MAX_DEPTH: usize = 12;

/// A parsed and compiled JSON Schema.
pub struct JsonSchemaDoc {
    schema: Json,
    validator: jsonschema::Validator,
    text: String,
}

impl JsonSchemaDoc {
    /// Parses and compiles a JSON Schema text.
    pub fn parse(text: &str, origin: &str) -> Result<JsonSchemaDoc, EngineError> {
        let schema: Json = serde_json::from_str(text)
            .map_err(|e| EngineError::new(Code::SchemaError, format!("{origin}: not a JSON document ({e})")))?;
        let validator = jsonschema::validator_for(&schema)
            .map_err(|e| EngineError::new(Code::SchemaError, format!("{origin}: not a valid JSON Schema: {e}")))?;
        Ok(JsonSchemaDoc { text: schema.to_string(), schema, validator })
    }

    /// The text to register (compact JSON).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The schema's `title`, the record name of the record subject strategies.
    pub fn record_name(&self) -> Option<String> {
        self.schema.get("title").and_then(Json::as_str).map(str::to_string)
    }

    /// Validates a JSON text and appends it (compacted) to `out`.
    pub fn encode_json(&self, json: &str, out: &mut Vec<u8>) -> Result<(), EngineError> {
        let value: Json = serde_json::from_str(json)
            .map_err(|e| EngineError::new(Code::RecordInvalid, format!("the value is not JSON ({e})")))?;
        self.check(&value).map_err(|e| EngineError::new(Code::RecordInvalid, e))?;
        serde_json::to_writer(out, &value).map_err(|e| EngineError::new(Code::RecordInvalid, e.to_string()))
    }

    /// Parses and validates a payload.
    pub fn decode(&self, bytes: &[u8]) -> Result<Json, String> {
        let value: Json = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
        self.check(&value)?;
        Ok(value)
    }

    fn check(&self, value: &Json) -> Result<(), String> {
        self.validator.validate(value).map_err(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { "the record".to_string() } else { format!("at {at}") };
            format!("the record does not match the JSON Schema: {at}: {e}")
        })
    }

    fn resolve<'a>(&'a self, node: &'a Json) -> Result<&'a Json, String> {
        let mut node = node;
        for _ in 0..MAX_DEPTH {
            let Some(reference) = node.get("$ref").and_then(Json::as_str) else { return Ok(node) };
            let pointer = reference
                .strip_prefix('#')
                .ok_or_else(|| format!("only local references (#/$defs/…) are supported, not '{reference}'"))?;
            node = self.schema.pointer(pointer).ok_or_else(|| format!("the reference '{reference}' points nowhere"))?;
        }
        Err("references nest too deep".to_string())
    }
}

enum Node {
    Ruled(Rule<Json, bool>),
    Null,
    Bool,
    Integer {
        range: (i64, i64),
        leaf: Leaf,
    },
    Number {
        range: (f64, f64),
        leaf: Leaf,
    },
    Str {
        kind: StrKind,
        len: (usize, usize),
        leaf: Leaf,
    },
    Object {
        props: Vec<Prop>,
    },
    Array {
        size: (usize, usize),
        items: Box<Node>,
    },
    OneOf(Vec<Node>),
    /// `["string", "null"]` and the like: null at the ratio, else the other type.
    Nullable {
        ratio: f64,
        inner: Box<Node>,
    },
}

struct Prop {
    name: String,
    /// None for required properties; the share of records that leave it out otherwise.
    absent_ratio: Option<f64>,
    node: Node,
}

/// A node's value rule (None: the node draws at random); a sequence gives numbers, or text when `true`.
type Leaf = Option<Rule<Json, bool>>;

#[derive(Clone, Copy)]
enum StrKind {
    Plain,
    DateTime,
    Date,
    Time,
    Uuid,
    Email,
    Uri,
    Ipv4,
}

/// A generator of random records for one JSON Schema.
pub type JsonGenerator = Generator<JsonPlan>;

/// The generation plan of a JSON Schema: its root node.
pub struct JsonPlan(Node);

impl JsonGenerator {
    /// Builds the plan; fails on rules that do not fit or keywords that cannot be generated.
    pub fn new(doc: &JsonSchemaDoc, rules: &Rules, what: &str) -> Result<JsonGenerator, EngineError> {
        let mut walk = Walk::new(rules);
        let root = plan(doc, &doc.schema, &mut walk, "", 0).map_err(|(path, m)| {
            EngineError::config(format!(
                "{what}: {}{m}",
                if path.is_empty() { String::new() } else { format!("{path}: ") }
            ))
        })?;
        walk.finish(what)?;
        Ok(Generator::of(JsonPlan(root)))
    }

    /// The next record as JSON text appended to `out`.
    pub fn next_into(&mut self, _doc: &JsonSchemaDoc, out: &mut Vec<u8>) -> Result<(), EngineError> {
        let value = self.next_record();
        serde_json::to_writer(out, &value).map_err(|e| EngineError::new(Code::RecordInvalid, e.to_string()))
    }
}

impl Plan for JsonPlan {
    type Record = Json;

    fn generate(&mut self, rng: &mut fastrand::Rng, seq: u64) -> Json {
        generate(&mut self.0, rng, seq)
    }
}

fn types_of(node: &Json) -> Vec<&str> {
    match node.get("type") {
        Some(Json::String(t)) => vec![t.as_str()],
        Some(Json::Array(ts)) => ts.iter().filter_map(Json::as_str).collect(),
        _ if node.get("properties").is_some() => vec!["object"],
        _ if node.get("items").is_some() => vec!["array"],
        _ => vec![],
    }
}

fn plan(doc: &JsonSchemaDoc, node: &Json, walk: &mut Walk, path: &str, depth: usize) -> Result<Node, PlanError> {
    let err = |m: String| (path.to_string(), m);
    if depth > MAX_DEPTH {
        return Err(err(format!(
            "the schema nests deeper than {MAX_DEPTH} levels (recursive?); give the field a rule"
        )));
    }
    let node = doc.resolve(node).map_err(err)?;
    let r = walk.at(path);
    if let Some(c) = node.get("const") {
        return Ok(Node::Ruled(Rule::Fixed(c.clone())));
    }
    let types = types_of(node);
    let nullable = types.contains(&"null") && types.len() > 1;
    let main = types.iter().copied().find(|t| *t != "null");
    let leaf = match leaf_for(r, main).map_err(err)? {
        Some(rule) if !nullable => return Ok(Node::Ruled(rule)),
        leaf => leaf,
    };
    if let Some(Json::Array(values)) = node.get("enum") {
        if values.is_empty() {
            return Err(err("an empty enum cannot be generated".into()));
        }
        return Ok(wrap_nullable(nullable, r, Node::Ruled(Rule::Choice(values.clone()))));
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Json::Array(branches)) = node.get(key) {
            let nodes = branches.iter().map(|b| plan(doc, b, walk, path, depth + 1)).collect::<Result<Vec<_>, _>>()?;
            if nodes.is_empty() {
                return Err(err(format!("an empty {key} cannot be generated")));
            }
            return Ok(Node::OneOf(nodes));
        }
    }
    let num = |k: &str| node.get(k).and_then(Json::as_f64);
    let inner = match main {
        None if types.contains(&"null") => Node::Null,
        Some("boolean") => Node::Bool,
        Some("integer") => {
            let lo =
                num("minimum").map(|v| v.ceil()).or(num("exclusiveMinimum").map(|v| v.floor() + 1.0)).unwrap_or(0.0);
            let hi = num("maximum")
                .map(|v| v.floor())
                .or(num("exclusiveMaximum").map(|v| v.ceil() - 1.0))
                .unwrap_or(lo.max(0.0) + 1_000_000.0);
            let range = r.range.map(|(a, b)| (a.round() as i64, b.round() as i64)).unwrap_or((lo as i64, hi as i64));
            if range.0 > range.1 {
                return Err(err("minimum is above maximum".into()));
            }
            Node::Integer { range, leaf }
        }
        Some("number") => {
            let lo = num("minimum").or(num("exclusiveMinimum")).unwrap_or(0.0);
            let hi = num("maximum").or(num("exclusiveMaximum")).unwrap_or(lo.max(0.0) + 1000.0);
            Node::Number { range: r.range.unwrap_or((lo, hi)), leaf }
        }
        Some("string") => {
            if node.get("pattern").is_some() && leaf.is_none() {
                return Err(err("a string with a \"pattern\" cannot be generated at random; give it a rule such as fixed(…), choice(…) or template(…)".into()));
            }
            let kind = match node.get("format").and_then(Json::as_str) {
                Some("date-time") => StrKind::DateTime,
                Some("date") => StrKind::Date,
                Some("time") => StrKind::Time,
                Some("uuid") => StrKind::Uuid,
                Some("email") => StrKind::Email,
                Some("uri") => StrKind::Uri,
                Some("ipv4") => StrKind::Ipv4,
                _ => StrKind::Plain,
            };
            let min = node.get("minLength").and_then(Json::as_u64).map(|v| v as usize);
            let max = node.get("maxLength").and_then(Json::as_u64).map(|v| v as usize);
            let len = r.length.unwrap_or(match (min, max) {
                (Some(a), Some(b)) => (a, b),
                (Some(a), None) => (a, a.max(8) + 8),
                (None, Some(b)) => (b.min(8), b),
                (None, None) => (8, 16),
            });
            Node::Str { kind, len, leaf }
        }
        Some("array") => {
            let items = match node.get("items") {
                Some(i) => plan(doc, i, walk, path, depth + 1)?,
                None => Node::Str { kind: StrKind::Plain, len: (8, 16), leaf: None },
            };
            let min = node.get("minItems").and_then(Json::as_u64).map(|v| v as usize);
            let max = node.get("maxItems").and_then(Json::as_u64).map(|v| v as usize);
            let size = r.size.unwrap_or(match (min, max) {
                (Some(a), Some(b)) => (a, b),
                (Some(a), None) => (a, a + 2),
                (None, Some(b)) => (b.min(1), b),
                (None, None) => (1, 3),
            });
            Node::Array { size, items: Box::new(items) }
        }
        Some("object") => {
            let required: BTreeSet<&str> = node
                .get("required")
                .and_then(Json::as_array)
                .map(|a| a.iter().filter_map(Json::as_str).collect())
                .unwrap_or_default();
            let mut props = Vec::new();
            if let Some(Json::Object(map)) = node.get("properties") {
                for (name, sub) in map {
                    let sub_path = join(path, name);
                    walk.visit(&sub_path);
                    let child = plan(doc, sub, walk, &sub_path, depth + 1)?;
                    let ratio = walk.at(&sub_path).null_ratio.unwrap_or(DEFAULT_NULL_RATIO);
                    let child_nullable = matches!(child, Node::Nullable { .. });
                    let absent_ratio = (!required.contains(name.as_str()) && !child_nullable).then_some(ratio);
                    props.push(Prop { name: name.clone(), absent_ratio, node: child });
                }
            }
            Node::Object { props }
        }
        Some(other) => return Err(err(format!("the type '{other}' cannot be generated"))),
        None => return Err(err("the schema gives no type (type, properties, items, enum or const)".into())),
    };
    Ok(wrap_nullable(nullable, r, inner))
}

fn wrap_nullable(nullable: bool, r: &FieldRules, inner: Node) -> Node {
    if nullable {
        Node::Nullable { ratio: r.null_ratio.unwrap_or(DEFAULT_NULL_RATIO), inner: Box::new(inner) }
    } else {
        inner
    }
}

fn leaf_for(r: &FieldRules, main: Option<&str>) -> Result<Leaf, String> {
    let convert = |text: &str| match main {
        Some("string") => Json::String(text.to_string()),
        _ => serde_json::from_str(text).unwrap_or_else(|_| Json::String(text.to_string())),
    };
    let seq = match main {
        Some("integer" | "number") => Some(false),
        Some("string") => Some(true),
        _ => None,
    };
    r.value.as_ref().map(|rule| Rule::plan(rule, |t| Ok(convert(t)), seq, main == Some("string"))).transpose()
}

impl RuleValue<bool> for Json {
    fn of_seq(n: i64, as_text: &bool) -> Json {
        if *as_text {
            Json::String(n.to_string())
        } else {
            Json::Number(n.into())
        }
    }

    fn of_text(text: String) -> Json {
        Json::String(text)
    }
}

fn generate(node: &mut Node, rng: &mut fastrand::Rng, seq: u64) -> Json {
    match node {
        Node::Ruled(rule) => rule.value(rng, seq),
        Node::Null => Json::Null,
        Node::Bool => Json::Bool(rng.bool()),
        Node::Integer { range, leaf } => {
            ruled(leaf, rng, seq).unwrap_or_else(|| Json::Number(rng.i64(range.0..=range.1).into()))
        }
        Node::Number { range, leaf } => ruled(leaf, rng, seq).unwrap_or_else(|| {
            let x = range.0 + rng.f64() * (range.1 - range.0);
            // two decimals: what a price or a measure looks like, and exact in the JSON text
            Number::from_f64((x * 100.0).round() / 100.0).map(Json::Number).unwrap_or(Json::Null)
        }),
        Node::Str { kind, len, leaf } => {
            ruled(leaf, rng, seq).unwrap_or_else(|| Json::String(random_string(*kind, *len, rng)))
        }
        Node::Object { props } => {
            let mut map = Map::new();
            for p in props.iter_mut() {
                if let Some(ratio) = p.absent_ratio {
                    if rng.f64() < ratio {
                        continue;
                    }
                }
                map.insert(p.name.clone(), generate(&mut p.node, rng, seq));
            }
            Json::Object(map)
        }
        Node::Array { size, items } => {
            let n = pick_len(rng, *size);
            Json::Array((0..n).map(|_| generate(items, rng, seq)).collect())
        }
        Node::OneOf(branches) => {
            let i = rng.usize(..branches.len());
            generate(&mut branches[i], rng, seq)
        }
        Node::Nullable { ratio, inner } => {
            if rng.f64() < *ratio {
                Json::Null
            } else {
                generate(inner, rng, seq)
            }
        }
    }
}

fn random_string(kind: StrKind, len: (usize, usize), rng: &mut fastrand::Rng) -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let secs = now - rng.i64(0..365 * 86_400);
    match kind {
        StrKind::Plain => {
            let n = pick_len(rng, len);
            random_text(rng, n)
        }
        StrKind::Uuid => random_uuid(rng).to_string(),
        StrKind::DateTime => {
            let (y, m, d, hh, mm, ss) = civil(secs);
            format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
        }
        StrKind::Date => {
            let (y, m, d, ..) = civil(secs);
            format!("{y:04}-{m:02}-{d:02}")
        }
        StrKind::Time => {
            let (.., hh, mm, ss) = civil(secs);
            format!("{hh:02}:{mm:02}:{ss:02}Z")
        }
        StrKind::Email => format!("{}@example.com", random_text(rng, 8).to_lowercase()),
        StrKind::Uri => format!("https://example.com/{}", random_text(rng, 8).to_lowercase()),
        StrKind::Ipv4 => {
            let mut s = String::new();
            let _ = write!(s, "10.{}.{}.{}", rng.u8(..), rng.u8(..), rng.u8(1..255));
            s
        }
    }
}

/// Seconds since the epoch → (year, month, day, hour, minute, second) in UTC
/// (Howard Hinnant's days-from-civil inverse; no date library needed for this one conversion).
fn civil(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, (rem / 3600) as u32, (rem % 3600 / 60) as u32, (rem % 60) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUSTOMER: &str = r##"{
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "title": "shop.Customer",
      "type": "object",
      "required": ["id", "email", "tier", "since", "tags", "address"],
      "properties": {
        "id": {"type": "integer", "minimum": 1, "maximum": 999},
        "email": {"type": "string", "format": "email"},
        "tier": {"enum": ["gold", "silver"]},
        "since": {"type": "string", "format": "date-time"},
        "ref": {"type": "string", "format": "uuid"},
        "nick": {"type": ["string", "null"], "maxLength": 6},
        "score": {"type": "number", "minimum": 0, "maximum": 5},
        "tags": {"type": "array", "items": {"type": "string", "minLength": 2, "maxLength": 4}, "minItems": 1, "maxItems": 3},
        "address": {"$ref": "#/$defs/Address"}
      },
      "$defs": {"Address": {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}}}}
    }"##;

    #[test]
    fn generated_records_are_valid_and_obey_rules() {
        let doc = JsonSchemaDoc::parse(CUSTOMER, "customer.json").unwrap();
        let rules =
            Rules::parse("id = seq(1)\naddress.zip = choice(12345, 54321)\nnick = null(0.5)\ntags = size(2)", "r")
                .unwrap();
        let mut g = JsonGenerator::new(&doc, &rules, "value.schema.rules").unwrap().with_seed(5);
        let mut nulls = 0;
        for i in 0..300 {
            let v = g.next_record();
            let mut out = Vec::new();
            serde_json::to_writer(&mut out, &v).unwrap();
            let back = doc.decode(&out).unwrap_or_else(|e| panic!("{e}: {v}"));
            assert_eq!(back["id"], i + 1);
            assert_eq!(back["tags"].as_array().unwrap().len(), 2);
            if back.get("nick").is_some_and(Json::is_null) {
                nulls += 1;
            }
            let since = back["since"].as_str().unwrap();
            assert_eq!((since.len(), &since[10..11], &since[19..]), (20, "T", "Z"), "{since}");
        }
        assert!((100..200).contains(&nulls), "{nulls} null nicks in 300 with null(0.5)");
    }

    #[test]
    fn patterns_need_a_rule_and_typos_are_refused() {
        let doc = JsonSchemaDoc::parse(CUSTOMER, "customer.json").unwrap();
        let e = JsonGenerator::new(&doc, &Rules::default(), "r").err().unwrap();
        assert!(e.message.contains("address.zip: a string with a \"pattern\""), "{}", e.message);
        let e = JsonGenerator::new(&doc, &Rules::parse("address.zip=fixed(12345)\nemial=fixed(x)", "r").unwrap(), "r")
            .err()
            .unwrap();
        assert!(e.message.contains("no field 'emial'"), "{}", e.message);
    }

    #[test]
    fn json_values_are_validated() {
        let doc = JsonSchemaDoc::parse(CUSTOMER, "customer.json").unwrap();
        let e = doc.encode_json(r#"{"id": 0}"#, &mut Vec::new()).unwrap_err();
        assert_eq!(e.code, Code::RecordInvalid);
        assert!(e.message.contains("does not match the JSON Schema"), "{}", e.message);
        let ok = r#"{"id": 3, "email": "a@b.c", "tier": "gold", "since": "2026-01-01T00:00:00Z", "tags": ["ab"], "address": {"city": "X"}}"#;
        let mut out = Vec::new();
        doc.encode_json(ok, &mut out).unwrap();
        assert_eq!(doc.decode(&out).unwrap()["tier"], "gold");
        assert_eq!(doc.record_name().as_deref(), Some("shop.Customer"));
    }

    #[test]
    fn civil_dates_are_right() {
        assert_eq!(civil(0), (1970, 1, 1, 0, 0, 0));
        assert_eq!(civil(1_709_210_096), (2024, 2, 29, 12, 34, 56));
    }
}
