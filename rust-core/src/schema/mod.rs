//! Schema-aware records: Avro, JSON Schema and Protobuf values generated natively from a schema (random
//! values per field type, shaped by [`rules`]) or encoded from a JMeter-given JSON value, framed in the
//! schema registry's wire format ([`wire`]) with ids from a real registry ([`registry`]); and the consumer's
//! side, a [`RecordDecoder`] that resolves a record's schema id, decodes it and checks a field.
//!
//! Settings use the sampler's key/value names (`value.` or `key.` prefix, see [`Role`]):
//!
//! | setting | meaning |
//! |---|---|
//! | `value.mode` | `avro`, `json-schema` or `protobuf` |
//! | `value.schema.file` | `.avsc`, JSON Schema `.json` or `.proto` file |
//! | `value.schema.message` | Protobuf message (full) name; default: the file's first message |
//! | `value.schema.subject` + `value.schema.version` | schema from the registry instead (`latest` or a number) |
//! | `value.schema.rules` / `value.schema.rules.file` | field rules (see [`rules`]) |
//! | `value.schema.input` | `generate` (default) or `jmeter` (encode the sample's JSON value) |
//! | `key.schema.input` | `generate` (default) or `jmeter` (encode the `key` parameter's JSON, again when a sample's key changes) |
//! | `value.subject.name.strategy` | `topic` (default), `record` or `topic-record` |
//! | `value.schema.framing` | `registry` (magic byte + id; default with a registry URL) or `none` |
//! | `schema.registry.url` | Confluent-compatible API, e.g. `http://host:8081/apis/ccompat/v7` |
//! | `schema.registry.username` / `.password` | basic authentication |
//! | `schema.registry.ssl.ca.location` | PEM file of the CA that signed the registry's certificate |
//! | `schema.registry.ssl.certificate.location` / `.key.location` / `.key.password` | client certificate (mTLS) |
//! | `schema.registry.auth` | `basic` (username/password) or `oauthbearer` (token of the Kafka connection's OIDC client) |
//! | `auto.register.schemas` | `true` (default): register file schemas; `false`: they must be registered |
//! | `schema.registry.timeout.ms` | per request, default 10000 |
//! | consumer: `value.decode` | `avro`, `json-schema`, `protobuf` or `none` (default) |
//! | consumer: `value.assert` | `field.path=expected` checked on every decoded record |

pub mod avro;
mod avro_binary;
pub mod generator;
pub mod json_schema;
pub mod protobuf;
pub mod registry;
pub mod rules;
pub mod wire;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value as Json;

use crate::error::{Code, EngineError};
use avro::{AvroGenerator, AvroSchema};
use json_schema::{JsonGenerator, JsonSchemaDoc};
use protobuf::{ProtoGenerator, ProtoSchema};
use registry::{RegistryClient, RegistryConfig};
use rules::Rules;

/// The producer's schema settings (beside `value.mode` / `key.mode`), for the sampler's list of own keys.
pub const PRODUCER_KEYS: &[&str] = &[
    "value.schema.file",
    "value.schema.message",
    "value.schema.subject",
    "value.schema.version",
    "value.schema.rules",
    "value.schema.rules.file",
    "value.schema.input",
    "value.subject.name.strategy",
    "value.schema.framing",
    "key.schema.file",
    "key.schema.message",
    "key.schema.subject",
    "key.schema.version",
    "key.schema.rules",
    "key.schema.rules.file",
    "key.schema.input",
    "key.subject.name.strategy",
    "key.schema.framing",
    "schema.registry.url",
    "schema.registry.username",
    "schema.registry.password",
    "schema.registry.ssl.ca.location",
    "schema.registry.ssl.certificate.location",
    "schema.registry.ssl.key.location",
    "schema.registry.ssl.key.password",
    "schema.registry.auth",
    "schema.registry.timeout.ms",
    "auto.register.schemas",
];

/// The consumer's decoding settings, for the sampler's list of own keys.
pub const CONSUMER_KEYS: &[&str] = &[
    "value.decode",
    "value.schema.file",
    "value.schema.message",
    "value.schema.framing",
    "value.assert",
    "key.decode",
    "key.schema.file",
    "key.schema.message",
    "key.schema.framing",
    "key.assert",
    "schema.registry.url",
    "schema.registry.username",
    "schema.registry.password",
    "schema.registry.ssl.ca.location",
    "schema.registry.ssl.certificate.location",
    "schema.registry.ssl.key.location",
    "schema.registry.ssl.key.password",
    "schema.registry.auth",
    "schema.registry.timeout.ms",
];

/// The three schema languages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Apache Avro binary encoding.
    Avro,
    /// JSON text validated by a JSON Schema.
    JsonSchema,
    /// Protocol Buffers binary encoding.
    Protobuf,
}

impl Format {
    /// The format of a `value.mode` / `key.mode` (None for the non-schema modes).
    pub fn from_mode(mode: &str) -> Option<Format> {
        match mode {
            "avro" => Some(Format::Avro),
            "json-schema" => Some(Format::JsonSchema),
            "protobuf" => Some(Format::Protobuf),
            _ => None,
        }
    }

    /// The name as a mode (`avro`, `json-schema`, `protobuf`).
    pub fn mode(self) -> &'static str {
        match self {
            Format::Avro => "avro",
            Format::JsonSchema => "json-schema",
            Format::Protobuf => "protobuf",
        }
    }

    /// The registry's `schemaType`.
    pub fn registry_type(self) -> &'static str {
        match self {
            Format::Avro => "AVRO",
            Format::JsonSchema => "JSON",
            Format::Protobuf => "PROTOBUF",
        }
    }

    /// From the registry's `schemaType` (absent means AVRO).
    pub fn from_registry_type(t: Option<&str>) -> Result<Format, EngineError> {
        match t.unwrap_or("AVRO") {
            "AVRO" => Ok(Format::Avro),
            "JSON" => Ok(Format::JsonSchema),
            "PROTOBUF" => Ok(Format::Protobuf),
            other => Err(EngineError::new(
                Code::SchemaError,
                format!("the registry's schema type '{other}' is not supported"),
            )),
        }
    }
}

/// Whether settings are for the record's key or its value (the prefix of their names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `key.*` settings, subject suffix `-key`.
    Key,
    /// `value.*` settings, subject suffix `-value`.
    Value,
}

impl Role {
    fn prefix(self) -> &'static str {
        match self {
            Role::Key => "key.",
            Role::Value => "value.",
        }
    }
}

/// Where the schema comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaSource {
    /// A file (`.avsc`, `.json`, `.proto`).
    File(String),
    /// A registry subject and version (`latest` or a number).
    Registry {
        /// The subject.
        subject: String,
        /// `latest` or a version number.
        version: String,
    },
}

/// How the subject of a file schema is named (Confluent's `*.subject.name.strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubjectStrategy {
    /// `<topic>-value` / `<topic>-key`.
    Topic,
    /// The record's full name.
    Record,
    /// `<topic>-<record full name>`.
    TopicRecord,
}

/// Where a generator's values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Random records from the schema and the rules.
    Generate,
    /// The sample's value (JSON) encoded against the schema.
    Jmeter,
}

/// Everything a [`RecordEncoder`] needs, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct EncoderSettings {
    /// Key or value.
    pub role: Role,
    /// Schema language.
    pub format: Format,
    /// Schema origin.
    pub source: SchemaSource,
    /// Protobuf message name (None: the first message of the file).
    pub message: Option<String>,
    /// Field rules.
    pub rules: Rules,
    /// Generate or encode JMeter's JSON.
    pub input: Input,
    /// The registry, if any.
    pub registry: Option<RegistryConfig>,
    /// Subject naming of file schemas.
    pub strategy: SubjectStrategy,
    /// Register file schemas (true) or only look them up (false).
    pub auto_register: bool,
    /// Prepend the registry header (magic byte + id).
    pub framed: bool,
}

fn get<'a>(s: &BTreeMap<&str, &'a str>, key: &str) -> Option<&'a str> {
    s.get(key).map(|v| v.trim()).filter(|v| !v.is_empty())
}

/// The registry settings (`schema.registry.*`), None when no URL is set.
pub fn registry_config(s: &BTreeMap<&str, &str>) -> Result<Option<RegistryConfig>, EngineError> {
    let Some(url) = get(s, "schema.registry.url") else { return Ok(None) };
    let timeout_ms = match get(s, "schema.registry.timeout.ms") {
        None => 10_000,
        Some(t) => t.parse::<u64>().ok().filter(|t| (1..=600_000).contains(t)).ok_or_else(|| {
            EngineError::config(format!(
                "schema.registry.timeout.ms: '{t}' is not a number of milliseconds from 1 to 600000"
            ))
        })?,
    };
    let username = get(s, "schema.registry.username").map(str::to_string);
    let oauth = match get(s, "schema.registry.auth") {
        None => None,
        Some(a) if a.eq_ignore_ascii_case("basic") => {
            if username.is_none() && !url.contains('@') {
                return Err(EngineError::config(
                    "schema.registry.auth=basic needs schema.registry.username (and schema.registry.password)",
                ));
            }
            None
        }
        Some(a) if a.eq_ignore_ascii_case("oauthbearer") => {
            if username.is_some() {
                return Err(EngineError::config(
                    "schema.registry.auth=oauthbearer sends a bearer token, schema.registry.username basic \
                     authentication: leave schema.registry.username and schema.registry.password empty, or set \
                     schema.registry.auth=basic",
                ));
            }
            Some(connection_oidc(s)?)
        }
        Some(other) => {
            return Err(EngineError::config(format!(
                "schema.registry.auth: '{}' is not valid; use basic (schema.registry.username and \
                 schema.registry.password) or oauthbearer (a token of the Kafka connection's OIDC client)",
                crate::echo::clip(other)
            )))
        }
    };
    let certificate = get(s, "schema.registry.ssl.certificate.location").map(str::to_string);
    let key = get(s, "schema.registry.ssl.key.location").map(str::to_string);
    match (&certificate, &key) {
        (Some(_), None) => {
            return Err(EngineError::config(
                "schema.registry.ssl.certificate.location is set without schema.registry.ssl.key.location: a client \
                 certificate needs its private key (PEM)",
            ))
        }
        (None, Some(_)) => {
            return Err(EngineError::config(
                "schema.registry.ssl.key.location is set without schema.registry.ssl.certificate.location: a client \
                 key needs its certificate (PEM)",
            ))
        }
        _ => {}
    }
    Ok(Some(RegistryConfig {
        url: url.to_string(),
        username,
        password: s.get("schema.registry.password").filter(|p| !p.is_empty()).map(|p| p.to_string()),
        ca_file: get(s, "schema.registry.ssl.ca.location").map(str::to_string),
        certificate,
        key,
        key_password: s.get("schema.registry.ssl.key.password").filter(|p| !p.is_empty()).map(|p| p.to_string()),
        oauth,
        timeout: Duration::from_millis(timeout_ms),
    }))
}

/// The Kafka connection's settings that `schema.registry.auth=oauthbearer` reads: its OIDC client.
const CONNECTION_OIDC_KEYS: &[&str] = &["sasl.mechanism", "sasl.mechanisms"];

/// The sampler's settings with the Kafka connection's OIDC client settings (from the client properties) added:
/// `schema.registry.auth=oauthbearer` takes its token from the same client, and the same token source.
pub fn with_connection<'a>(
    sampler: &BTreeMap<&'a str, &'a str>,
    client: &'a BTreeMap<String, String>,
) -> BTreeMap<&'a str, &'a str> {
    let mut s = sampler.clone();
    for (k, v) in client {
        if crate::client::oauth::KEYS.contains(&k.as_str()) || CONNECTION_OIDC_KEYS.contains(&k.as_str()) {
            s.entry(k.as_str()).or_insert(v.as_str());
        }
    }
    s
}

/// The Kafka connection's OIDC client, for `schema.registry.auth=oauthbearer`.
fn connection_oidc(s: &BTreeMap<&str, &str>) -> Result<crate::client::oauth::Oidc, EngineError> {
    let props: BTreeMap<String, String> = s
        .iter()
        .filter(|(k, _)| crate::client::oauth::KEYS.contains(k) || CONNECTION_OIDC_KEYS.contains(k))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match crate::client::oauth::split(&props)? {
        (_, Some(oidc)) => Ok(oidc),
        (_, None) => Err(EngineError::config(
            "schema.registry.auth=oauthbearer takes its token from the Kafka connection's OIDC client: set \
             sasl.mechanism=OAUTHBEARER, sasl.oauthbearer.method=oidc, sasl.oauthbearer.token.endpoint.url, \
             sasl.oauthbearer.client.id and sasl.oauthbearer.client.secret (the Kafka Connection's OAuth fields)",
        )),
    }
}

fn parse_bool(s: &BTreeMap<&str, &str>, key: &str, default: bool) -> Result<bool, EngineError> {
    match get(s, key) {
        None => Ok(default),
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(other) => Err(EngineError::config(format!("{key}: '{other}' is not valid; use true or false"))),
    }
}

fn framing(s: &BTreeMap<&str, &str>, p: &str, has_registry: bool) -> Result<bool, EngineError> {
    let key = format!("{p}schema.framing");
    match get(s, &key) {
        None => Ok(has_registry),
        Some("registry") if has_registry => Ok(true),
        Some("registry") => Err(EngineError::config(format!(
            "{key}=registry needs schema.registry.url (the header carries the registry's schema id)"
        ))),
        Some("none") => Ok(false),
        Some(other) => Err(EngineError::config(format!("{key}: '{other}' is not valid; use registry or none"))),
    }
}

impl EncoderSettings {
    /// Reads the settings of `role`; None when its mode is not a schema mode.
    pub fn parse(s: &BTreeMap<&str, &str>, role: Role) -> Result<Option<EncoderSettings>, EngineError> {
        let p = role.prefix();
        let mode_key = format!("{p}mode");
        let Some(format) = get(s, &mode_key).and_then(Format::from_mode) else { return Ok(None) };
        let registry = registry_config(s)?;
        let file = get(s, &format!("{p}schema.file"));
        let subject = get(s, &format!("{p}schema.subject"));
        let source = match (file, subject) {
            (Some(_), Some(_)) => {
                return Err(EngineError::config(format!(
                    "{p}schema.file and {p}schema.subject are both set; give the schema one way (a file, or a registry subject)"
                )))
            }
            (Some(f), None) => SchemaSource::File(f.to_string()),
            (None, Some(sub)) => {
                if registry.is_none() {
                    return Err(EngineError::config(format!(
                        "{p}schema.subject needs schema.registry.url (where to read subject '{sub}' from)"
                    )));
                }
                SchemaSource::Registry {
                    subject: sub.to_string(),
                    version: get(s, &format!("{p}schema.version")).unwrap_or("latest").to_string(),
                }
            }
            (None, None) => {
                return Err(EngineError::config(format!(
                    "{mode_key}={} needs a schema: set {p}schema.file (e.g. order.{}) or {p}schema.subject with schema.registry.url",
                    format.mode(),
                    match format {
                        Format::Avro => "avsc",
                        Format::JsonSchema => "json",
                        Format::Protobuf => "proto",
                    }
                )))
            }
        };
        let input_key = format!("{p}schema.input");
        let input = match get(s, &input_key).unwrap_or("generate") {
            "generate" => Input::Generate,
            "jmeter" => Input::Jmeter,
            other => {
                return Err(EngineError::config(format!("{input_key}: '{other}' is not valid; use generate or jmeter")))
            }
        };
        let strategy_key = format!("{p}subject.name.strategy");
        let strategy = match get(s, &strategy_key).unwrap_or("topic") {
            "topic" | "TopicNameStrategy" => SubjectStrategy::Topic,
            "record" | "RecordNameStrategy" => SubjectStrategy::Record,
            "topic-record" | "TopicRecordNameStrategy" => SubjectStrategy::TopicRecord,
            other => {
                return Err(EngineError::config(format!(
                    "{strategy_key}: '{other}' is not valid; use topic, record or topic-record"
                )))
            }
        };
        let framed = framing(s, p, registry.is_some())?;
        Ok(Some(EncoderSettings {
            role,
            format,
            source,
            message: get(s, &format!("{p}schema.message")).map(str::to_string),
            rules: Rules::from_settings(s, p)?,
            input,
            auto_register: parse_bool(s, "auto.register.schemas", true)?,
            registry,
            strategy,
            framed,
        }))
    }
}

/// A parsed schema of any of the three languages.
pub enum ParsedSchema {
    /// Avro.
    Avro(AvroSchema),
    /// JSON Schema.
    Json(JsonSchemaDoc),
    /// Protobuf (one message type of a compiled file).
    Proto(ProtoSchema),
}

impl ParsedSchema {
    /// Parses `text` of `format`; `origin` names it in errors; `message` picks a Protobuf message.
    pub fn parse(format: Format, text: &str, origin: &str, message: Option<&str>) -> Result<ParsedSchema, EngineError> {
        Ok(match format {
            Format::Avro => ParsedSchema::Avro(AvroSchema::parse(text, origin)?),
            Format::JsonSchema => ParsedSchema::Json(JsonSchemaDoc::parse(text, origin)?),
            Format::Protobuf => ParsedSchema::Proto(ProtoSchema::from_text(text, origin, message)?),
        })
    }

    /// Reads and parses a schema file.
    pub fn from_file(format: Format, path: &str, message: Option<&str>) -> Result<ParsedSchema, EngineError> {
        if format == Format::Protobuf {
            return Ok(ParsedSchema::Proto(ProtoSchema::from_file(path, message)?));
        }
        let limit = crate::files::Limit::fixed(crate::files::MAX_DOCUMENT);
        let text =
            crate::files::read_text(path, "schema file", limit).map_err(|e| EngineError::new(Code::SchemaError, e))?;
        ParsedSchema::parse(format, &text, path, message)
    }

    /// The language.
    pub fn format(&self) -> Format {
        match self {
            ParsedSchema::Avro(_) => Format::Avro,
            ParsedSchema::Json(_) => Format::JsonSchema,
            ParsedSchema::Proto(_) => Format::Protobuf,
        }
    }

    /// The text to register.
    pub fn text(&self) -> &str {
        match self {
            ParsedSchema::Avro(s) => s.text(),
            ParsedSchema::Json(s) => s.text(),
            ParsedSchema::Proto(s) => s.text(),
        }
    }

    /// The record's full name (Avro record name, JSON Schema `title`, Protobuf message name).
    pub fn record_name(&self) -> Option<String> {
        match self {
            ParsedSchema::Avro(s) => s.record_name(),
            ParsedSchema::Json(s) => s.record_name(),
            ParsedSchema::Proto(s) => Some(s.record_name()),
        }
    }

    /// Encodes a JSON text against the schema, appending to `out`.
    pub fn encode_json(&self, json: &str, out: &mut Vec<u8>) -> Result<(), EngineError> {
        match self {
            ParsedSchema::Avro(s) => s.encode_json(json, out),
            ParsedSchema::Json(s) => s.encode_json(json, out),
            ParsedSchema::Proto(s) => s.encode_json(json, out),
        }
    }

    /// Decodes a payload (no header) to JSON; the error text says why it does not decode.
    pub fn decode(&self, bytes: &[u8]) -> Result<Json, String> {
        match self {
            ParsedSchema::Avro(s) => s.decode(bytes),
            ParsedSchema::Json(s) => s.decode(bytes),
            ParsedSchema::Proto(s) => s.decode(bytes),
        }
    }
}

enum Generator {
    Avro(AvroGenerator),
    Json(JsonGenerator),
    Proto(ProtoGenerator),
}

/// Turns settings into framed records, one thread's worth (counters and RNG are its own).
pub struct RecordEncoder {
    schema: ParsedSchema,
    generator: Option<Generator>,
    /// Magic byte, id and (Protobuf) message indexes; empty without framing.
    header: Vec<u8>,
    id: Option<u32>,
    subject: Option<String>,
}

impl RecordEncoder {
    /// Reads the schema (file or registry), registers or looks it up when framing needs an id, and
    /// builds the generator. All network and file access happens here, none per record.
    pub fn new(settings: &EncoderSettings, topic: &str) -> Result<RecordEncoder, EngineError> {
        let p = settings.role.prefix();
        let client = settings.registry.as_ref().map(RegistryClient::new).transpose()?;
        let (schema, registered) = match &settings.source {
            SchemaSource::File(path) => {
                (ParsedSchema::from_file(settings.format, path, settings.message.as_deref())?, None)
            }
            SchemaSource::Registry { subject, version } => {
                let client = client.as_ref().expect("a registry source is only accepted with a registry URL");
                let found = client.version(subject, version)?;
                if found.format != settings.format {
                    return Err(EngineError::config(format!(
                        "{p}mode={} but subject '{subject}' holds a {} schema",
                        settings.format.mode(),
                        found.format.mode()
                    )));
                }
                let origin = format!("subject '{subject}' version {version}");
                (
                    ParsedSchema::parse(found.format, &found.text, &origin, settings.message.as_deref())?,
                    Some((found.id, subject.clone())),
                )
            }
        };
        let (id, subject) = match (registered, settings.framed, &client) {
            (Some((id, subject)), _, _) => (Some(id), Some(subject)),
            (None, true, Some(client)) => {
                let subject = subject_name(settings, topic, &schema)?;
                let id = if settings.auto_register {
                    client.register(&subject, schema.format(), schema.text())?
                } else {
                    client.lookup(&subject, schema.format(), schema.text())?
                };
                (Some(id), Some(subject))
            }
            _ => (None, None),
        };
        let mut header = Vec::new();
        if let (true, Some(id)) = (settings.framed, id) {
            let indexes = match &schema {
                ParsedSchema::Proto(s) => Some(s.message_indexes()),
                _ => None,
            };
            wire::write_header(&mut header, id, indexes.as_deref());
        }
        let what = format!("{p}schema.rules");
        let generator = match settings.input {
            Input::Jmeter => None,
            Input::Generate => Some(match &schema {
                ParsedSchema::Avro(s) => Generator::Avro(AvroGenerator::new(s, &settings.rules, &what)?),
                ParsedSchema::Json(s) => Generator::Json(JsonGenerator::new(s, &settings.rules, &what)?),
                ParsedSchema::Proto(s) => Generator::Proto(ProtoGenerator::new(s, &settings.rules, &what)?),
            }),
        };
        Ok(RecordEncoder { schema, generator, header, id, subject })
    }

    /// The registry's id of the schema (None without a registry).
    pub fn schema_id(&self) -> Option<u32> {
        self.id
    }

    /// The subject the schema is registered under (None without a registry).
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The parsed schema.
    pub fn schema(&self) -> &ParsedSchema {
        &self.schema
    }

    /// Writes the next record into `out` (cleared first): generated, or `jmeter_value` encoded when
    /// the input is `jmeter`.
    pub fn next_into(&mut self, jmeter_value: Option<&[u8]>, out: &mut Vec<u8>) -> Result<(), EngineError> {
        out.clear();
        out.extend_from_slice(&self.header);
        match (&mut self.generator, &self.schema) {
            (Some(Generator::Avro(g)), ParsedSchema::Avro(_)) => {
                g.next_into(out);
                Ok(())
            }
            (Some(Generator::Json(g)), ParsedSchema::Json(s)) => g.next_into(s, out),
            (Some(Generator::Proto(g)), ParsedSchema::Proto(s)) => g.next_into(s, out),
            (None, schema) => {
                let raw = jmeter_value.ok_or_else(|| {
                    EngineError::config(
                        "schema.input=jmeter but the sample has no value; set it to a JSON record, e.g. ${record}",
                    )
                })?;
                let text = std::str::from_utf8(raw).map_err(|_| {
                    EngineError::new(Code::RecordInvalid, "the sample's value is not UTF-8 text, so not JSON")
                })?;
                schema.encode_json(text, out)
            }
            _ => unreachable!("the generator is built from the same schema"),
        }
    }
}

fn subject_name(settings: &EncoderSettings, topic: &str, schema: &ParsedSchema) -> Result<String, EngineError> {
    let suffix = match settings.role {
        Role::Key => "key",
        Role::Value => "value",
    };
    let record = || {
        schema.record_name().ok_or_else(|| {
            EngineError::config(format!(
                "{}subject.name.strategy needs a record name, and the schema has none (Avro: a named record; JSON \
                 Schema: a \"title\")",
                settings.role.prefix()
            ))
        })
    };
    Ok(match settings.strategy {
        SubjectStrategy::Topic => format!("{topic}-{suffix}"),
        SubjectStrategy::Record => record()?,
        SubjectStrategy::TopicRecord => format!("{topic}-{}", record()?),
    })
}

/// A check on one field of every decoded record: `path=expected` (dotted path; the expected value is
/// compared with the field's JSON form: text without quotes, numbers, `true`, `null`).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldAssertion {
    path: Vec<String>,
    expected: String,
}

impl FieldAssertion {
    /// Parses `path=expected`.
    pub fn parse(text: &str, what: &str) -> Result<FieldAssertion, EngineError> {
        let (path, expected) = text.split_once('=').ok_or_else(|| {
            EngineError::config(format!("{what}: '{text}' is not 'field=expected', e.g. status=PAID"))
        })?;
        let path: Vec<String> = path.trim().split('.').map(str::to_string).collect();
        if path.iter().any(String::is_empty) {
            return Err(EngineError::config(format!("{what}: '{text}' has an empty field name")));
        }
        Ok(FieldAssertion { path, expected: expected.trim().to_string() })
    }

    /// Ok when the record's field has the expected value.
    pub fn check(&self, record: &Json) -> Result<(), EngineError> {
        let mut at = record;
        for step in &self.path {
            at = match at {
                // Avro unions of several types decode as {"type": value} in other tools; ours decode plainly.
                Json::Object(map) => map.get(step).unwrap_or(&Json::Null),
                Json::Array(items) => step.parse::<usize>().ok().and_then(|i| items.get(i)).unwrap_or(&Json::Null),
                _ => &Json::Null,
            };
        }
        let actual = match at {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        };
        if actual == self.expected {
            Ok(())
        } else {
            Err(EngineError::new(
                Code::AssertionFailed,
                format!("field '{}' is {actual}, expected {}", self.path.join("."), self.expected),
            ))
        }
    }
}

/// Settings of the consumer's decoding.
#[derive(Debug, Clone, PartialEq)]
pub struct DecoderSettings {
    /// Expected language.
    pub format: Format,
    /// A schema file for records without registry framing.
    pub file: Option<String>,
    /// Protobuf message name for `file`.
    pub message: Option<String>,
    /// The registry resolving framed records' ids.
    pub registry: Option<RegistryConfig>,
    /// Records carry the registry header.
    pub framed: bool,
    /// Optional check on every record.
    pub assertion: Option<FieldAssertion>,
}

impl DecoderSettings {
    /// Reads `<role>.decode`, `<role>.schema.file`, `<role>.assert`; None when decoding is off.
    pub fn parse(s: &BTreeMap<&str, &str>, role: Role) -> Result<Option<DecoderSettings>, EngineError> {
        let p = role.prefix();
        let key = format!("{p}decode");
        let format = match get(s, &key).unwrap_or("none") {
            "none" => return Ok(None),
            mode => Format::from_mode(mode).ok_or_else(|| {
                EngineError::config(format!("{key}: '{mode}' is not valid; use none, avro, json-schema or protobuf"))
            })?,
        };
        let registry = registry_config(s)?;
        let file = get(s, &format!("{p}schema.file")).map(str::to_string);
        let framed = framing(s, p, registry.is_some())?;
        if !framed && file.is_none() {
            return Err(EngineError::config(format!(
                "{key}={} needs schema.registry.url (records with the registry header) or {p}schema.file",
                format.mode()
            )));
        }
        let assertion =
            get(s, &format!("{p}assert")).map(|a| FieldAssertion::parse(a, &format!("{p}assert"))).transpose()?;
        Ok(Some(DecoderSettings {
            format,
            file,
            message: get(s, &format!("{p}schema.message")).map(str::to_string),
            registry,
            framed,
            assertion,
        }))
    }
}

/// One decoded record.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The schema id from the header (None without framing).
    pub schema_id: Option<u32>,
    /// The record as JSON.
    pub record: Json,
}

/// The consumer's decoder, one per thread: schemas by id are fetched once (process-wide cache in
/// [`registry`]) and kept parsed here.
pub struct RecordDecoder {
    settings: DecoderSettings,
    client: Option<RegistryClient>,
    fixed: Option<ParsedSchema>,
    by_id: HashMap<(u32, Vec<i32>), Arc<ParsedSchema>>,
}

impl RecordDecoder {
    /// Reads the schema file (if any) and prepares the registry client.
    pub fn new(settings: &DecoderSettings) -> Result<RecordDecoder, EngineError> {
        let fixed = match &settings.file {
            Some(f) if !settings.framed => {
                Some(ParsedSchema::from_file(settings.format, f, settings.message.as_deref())?)
            }
            _ => None,
        };
        let client = settings.registry.as_ref().map(RegistryClient::new).transpose()?;
        Ok(RecordDecoder { settings: settings.clone(), client, fixed, by_id: HashMap::new() })
    }

    /// Decodes one record: header, schema by id, payload. Failures are `DECODE_ERROR` (or the
    /// registry's codes when the id does not resolve).
    pub fn decode(&mut self, bytes: &[u8]) -> Result<Decoded, EngineError> {
        let bad = |why: String| EngineError::new(Code::DecodeError, why);
        if let Some(schema) = &self.fixed {
            let record = schema
                .decode(bytes)
                .map_err(|e| bad(format!("the record does not decode as {}: {e}", schema.format().mode())))?;
            return Ok(Decoded { schema_id: None, record });
        }
        let framed = wire::read_header(bytes)?;
        let (indexes, payload) = match self.settings.format {
            Format::Protobuf => wire::read_message_indexes(framed.payload)?,
            _ => (Vec::new(), framed.payload),
        };
        let key = (framed.id, indexes);
        let schema = match self.by_id.get(&key) {
            Some(s) => s.clone(),
            None => {
                let client = self.client.as_ref().expect("framed decoding is only accepted with a registry URL");
                let found = client.by_id(framed.id)?;
                if found.format != self.settings.format {
                    return Err(bad(format!(
                        "the record's schema id {} is a {} schema, not {}",
                        framed.id,
                        found.format.mode(),
                        self.settings.format.mode()
                    )));
                }
                let origin = format!("schema id {}", framed.id);
                let parsed = match found.format {
                    Format::Protobuf => ParsedSchema::Proto(ProtoSchema::from_text_at(&found.text, &origin, &key.1)?),
                    f => ParsedSchema::parse(f, &found.text, &origin, None)?,
                };
                let parsed = Arc::new(parsed);
                self.by_id.insert(key.clone(), parsed.clone());
                parsed
            }
        };
        let record = schema
            .decode(payload)
            .map_err(|e| bad(format!("the record does not decode with its schema id {}: {e}", framed.id)))?;
        Ok(Decoded { schema_id: Some(framed.id), record })
    }

    /// Decodes and applies the field assertion, if any.
    pub fn check(&mut self, bytes: &[u8]) -> Result<Decoded, EngineError> {
        let decoded = self.decode(bytes)?;
        if let Some(a) = &self.settings.assertion {
            a.check(&decoded.record)?;
        }
        Ok(decoded)
    }
}

/// Settings as the sampler hands them over, from `(name, value)` pairs (tests of the schema settings and payloads).
#[cfg(test)]
pub(crate) fn settings_of(items: &[(&'static str, &'static str)]) -> BTreeMap<&'static str, &'static str> {
    items.iter().copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::settings_of as map;

    #[test]
    fn settings_explain_what_is_missing() {
        let e = EncoderSettings::parse(&map(&[("value.mode", "avro")]), Role::Value).unwrap_err();
        assert!(e.message.contains("needs a schema: set value.schema.file (e.g. order.avsc)"), "{}", e.message);
        let e =
            EncoderSettings::parse(&map(&[("key.mode", "avro"), ("key.schema.subject", "s")]), Role::Key).unwrap_err();
        assert!(e.message.contains("key.schema.subject needs schema.registry.url"), "{}", e.message);
        let e = EncoderSettings::parse(
            &map(&[("value.mode", "avro"), ("value.schema.file", "a.avsc"), ("value.subject.name.strategy", "nope")]),
            Role::Value,
        )
        .unwrap_err();
        assert!(e.message.contains("use topic, record or topic-record"), "{}", e.message);
        assert!(EncoderSettings::parse(&map(&[("value.mode", "fixed")]), Role::Value).unwrap().is_none());
    }

    #[test]
    fn framing_follows_the_registry() {
        let s = EncoderSettings::parse(&map(&[("value.mode", "avro"), ("value.schema.file", "a.avsc")]), Role::Value)
            .unwrap()
            .unwrap();
        assert!(!s.framed && s.auto_register && s.input == Input::Generate);
        let s = EncoderSettings::parse(
            &map(&[
                ("value.mode", "protobuf"),
                ("value.schema.file", "a.proto"),
                ("schema.registry.url", "http://r:8081"),
                ("auto.register.schemas", "false"),
            ]),
            Role::Value,
        )
        .unwrap()
        .unwrap();
        assert!(s.framed && !s.auto_register);
    }

    #[test]
    fn field_assertions_compare_json_forms() {
        let a = FieldAssertion::parse("customer.tier = gold", "value.assert").unwrap();
        let record: Json = serde_json::json!({"customer": {"tier": "gold", "n": 3}});
        assert!(a.check(&record).is_ok());
        let e = FieldAssertion::parse("customer.n=4", "x").unwrap().check(&record).unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            (Code::AssertionFailed.as_str(), "field 'customer.n' is 3, expected 4")
        );
        assert!(FieldAssertion::parse("customer.missing=null", "x").unwrap().check(&record).is_ok());
    }
}
