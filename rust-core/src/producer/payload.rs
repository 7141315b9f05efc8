//! Keys and values generated in native memory, so large or numerous messages never touch the JVM heap.
//!
//! Value modes: `fixed` (`record.size` random letters, made once and reused like kafka-producer-perf-test's
//! `--record-size`), `template` (text with placeholders), `file` (lines of `payload.file`, like
//! `--payload-file`, taken in turn), `jmeter` (the value JMeter evaluated for this sample: functions and
//! CSV Data Set keep working), `avro` / `json-schema` / `protobuf` (records from a schema, see [`crate::schema`]).
//! Key modes: `none`, `sequence`, `random`, `fixed`, `template`, and the three schema modes.
//! Placeholders: `{seq}` (message number within the thread), `{thread}` (JMeter thread number),
//! `{uuid}`, `{timestamp}` (epoch milliseconds).

use std::collections::BTreeMap;
use std::io::Write;

use crate::client::settings::number;
use crate::error::EngineError;
use crate::files;
use crate::schema::{EncoderSettings, Input, RecordEncoder, Role};
use crate::template::{self, Template};

/// Sets the largest `payload.file` a thread reads.
pub const MAX_BYTES_KEY: &str = "payload.file.max.bytes";
/// Every thread holds the whole file: 64 MB each is already a lot of memory at a few hundred threads.
const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// How a producer sample's value is made (`value.mode` and its settings).
#[derive(Debug, Clone, PartialEq)]
pub enum ValueSpec {
    /// `fixed`: random bytes of one size, made once.
    Fixed {
        /// Bytes per value.
        size: usize,
    },
    /// `template`: text with `{seq}`-style placeholders.
    Template(Template),
    /// `file`: a file's content as every value.
    File {
        /// The file's path.
        path: String,
        /// `payload.file.max.bytes`: the file is read whole, by every thread.
        max_bytes: u64,
    },
    /// `jmeter`: the sample's value as JMeter gives it.
    Jmeter,
    /// Avro, JSON Schema or Protobuf records (generated, or the sample's JSON encoded).
    Schema(Box<EncoderSettings>),
}

/// How a producer sample's key is made (`key.mode` and `key`).
#[derive(Debug, Clone, PartialEq)]
pub enum KeySpec {
    /// No key (librdkafka's partitioner spreads the records).
    None,
    /// The record's sequence number.
    Sequence,
    /// 16 random hex digits per record.
    Random,
    /// The same key for every record.
    Fixed(String),
    /// Text with `{seq}`-style placeholders.
    Template(Template),
    /// Keys from a schema: generated, or with `key.schema.input=jmeter` the `key` parameter (JSON), encoded when the
    /// thread starts and again when a sample's key field changes ([`PayloadGen::set_key`]).
    Schema(Box<EncoderSettings>, Option<String>),
}

impl ValueSpec {
    /// The value's settings from the sampler's keys.
    pub fn parse(sampler: &BTreeMap<&str, &str>) -> Result<ValueSpec, EngineError> {
        if let Some(settings) = EncoderSettings::parse(sampler, Role::Value)? {
            return Ok(ValueSpec::Schema(Box::new(settings)));
        }
        match sampler.get("value.mode").copied().unwrap_or("fixed") {
            "fixed" => {
                let raw = sampler.get("record.size").copied().unwrap_or("1024");
                let size = raw.parse::<usize>().ok().filter(|n| *n <= 100 * 1024 * 1024).ok_or_else(|| {
                    EngineError::config(format!(
                        "record.size: '{raw}' is not valid; use a number of bytes from 0 to 104857600"
                    ))
                })?;
                Ok(ValueSpec::Fixed { size })
            }
            "template" => match sampler.get("value.template") {
                Some(t) => Ok(ValueSpec::Template(Template::parse(t, "value.template", template::MESSAGE)?)),
                None => Err(EngineError::config(
                    "value.template: missing; value.mode=template needs a template, e.g. order-{seq}",
                )),
            },
            "file" => match sampler.get("payload.file") {
                Some(p) => Ok(ValueSpec::File {
                    path: p.to_string(),
                    max_bytes: number(sampler, MAX_BYTES_KEY, DEFAULT_MAX_BYTES, 1, i64::MAX)?,
                }),
                None => Err(EngineError::config(
                    "payload.file: missing; value.mode=file needs the path of a file with one payload per line",
                )),
            },
            "jmeter" => Ok(ValueSpec::Jmeter),
            other => Err(EngineError::config(format!(
                "value.mode: '{other}' is not valid; use fixed, template, file, jmeter, avro, json-schema or protobuf"
            ))),
        }
    }
}

impl KeySpec {
    /// The key's settings from the sampler's keys.
    pub fn parse(sampler: &BTreeMap<&str, &str>) -> Result<KeySpec, EngineError> {
        let key = sampler.get("key").copied();
        if let Some(settings) = EncoderSettings::parse(sampler, Role::Key)? {
            let json = match settings.input {
                Input::Generate => None,
                Input::Jmeter => Some(key.filter(|k| !k.trim().is_empty()).map(str::to_string).ok_or_else(|| {
                    EngineError::config(
                        "key: missing; key.schema.input=jmeter encodes the key parameter against the key schema, so \
                         it needs a JSON record there, e.g. {\"customer\": \"${user}\"}",
                    )
                })?),
            };
            return Ok(KeySpec::Schema(Box::new(settings), json));
        }
        match sampler.get("key.mode").copied().unwrap_or("none") {
            "none" => Ok(KeySpec::None),
            "sequence" => Ok(KeySpec::Sequence),
            "random" => Ok(KeySpec::Random),
            "fixed" => key
                .map(|k| KeySpec::Fixed(k.to_string()))
                .ok_or_else(|| EngineError::config("key: missing; key.mode=fixed needs the key text")),
            "template" => match key {
                Some(k) => Ok(KeySpec::Template(Template::parse(k, "key", template::MESSAGE)?)),
                None => {
                    Err(EngineError::config("key: missing; key.mode=template needs a template, e.g. user-{thread}"))
                }
            },
            other => Err(EngineError::config(format!(
                "key.mode: '{other}' is not valid; use none, sequence, random, fixed, template, avro, json-schema or protobuf"
            ))),
        }
    }
}

enum ValueSource {
    Fixed(Box<[u8]>),
    Template(Template),
    Lines(Vec<Vec<u8>>),
    Jmeter,
    Schema(Box<RecordEncoder>),
}

/// What JMeter evaluated for one sample and passes with it. Each field is `None` unless the plan supplies it per
/// sample; a field holds the text as JMeter evaluated it, and the engine parses it again only when it changed.
#[derive(Debug, Default, Clone, Copy)]
pub struct SampleInput<'a> {
    /// The value for value.mode=jmeter, or the JSON of a schema mode with schema input jmeter.
    pub value: Option<&'a [u8]>,
    /// The `key` field: the key of key.mode=fixed, the template of key.mode=template, the JSON of
    /// key.schema.input=jmeter (the other key modes do not read it).
    pub key: Option<&'a str>,
    /// The `headers` field, `k=v;k2=v2`.
    pub headers: Option<&'a str>,
}

impl<'a> SampleInput<'a> {
    /// A sample that passes only a value.
    pub fn value(value: &'a [u8]) -> SampleInput<'a> {
        SampleInput { value: Some(value), ..SampleInput::default() }
    }
}

/// One message's key and value, borrowed from the generator's buffers until the next message.
pub struct Record<'a> {
    /// The key, if the record has one.
    pub key: Option<&'a [u8]>,
    /// The value.
    pub value: &'a [u8],
}

/// Per-thread generator: buffers are reused, so steady-state generation allocates nothing.
pub struct PayloadGen {
    value: ValueSource,
    key: KeySpec,
    /// key.mode=avro|json-schema|protobuf: the key's encoder (generated keys, or the `key` field's JSON).
    key_encoder: Option<Box<RecordEncoder>>,
    /// The `key` field's text the key was last made from (the thread's first sample's, then as samples change it);
    /// None until a template key's first sample.
    key_text: Option<String>,
    thread: u32,
    seq: u64,
    rng: fastrand::Rng,
    value_buf: Vec<u8>,
    key_buf: Vec<u8>,
}

impl PayloadGen {
    /// A generator for one thread; schema modes read their schema (file or registry) and get its id here, once.
    pub fn new(value: &ValueSpec, key: &KeySpec, thread: u32, topic: &str) -> Result<PayloadGen, EngineError> {
        let mut rng = fastrand::Rng::new();
        let value = match value {
            ValueSpec::Fixed { size } => {
                ValueSource::Fixed((0..*size).map(|_| rng.u8(b'A'..=b'Z')).collect::<Vec<u8>>().into())
            }
            ValueSpec::Template(t) => ValueSource::Template(t.clone()),
            ValueSpec::File { path, max_bytes } => ValueSource::Lines(read_lines(path, *max_bytes)?),
            ValueSpec::Jmeter => ValueSource::Jmeter,
            ValueSpec::Schema(settings) => ValueSource::Schema(Box::new(RecordEncoder::new(settings, topic)?)),
        };
        let mut key_buf = Vec::new();
        let key_encoder = match key {
            KeySpec::Schema(settings, json) => {
                let mut encoder = Box::new(RecordEncoder::new(settings, topic)?);
                if let Some(json) = json {
                    // the same key for every message until a sample's key field changes: encoded (and checked) here
                    encoder.next_into(Some(json.as_bytes()), &mut key_buf)?;
                }
                Some(encoder)
            }
            _ => None,
        };
        let key_text = match key {
            KeySpec::Fixed(text) | KeySpec::Schema(_, Some(text)) => Some(text.clone()),
            _ => None,
        };
        Ok(PayloadGen {
            value,
            key: key.clone(),
            key_encoder,
            key_text,
            thread,
            seq: 0,
            rng,
            value_buf: Vec::new(),
            key_buf,
        })
    }

    /// Takes the `key` field as JMeter evaluated it for this sample (e.g. `${user}` from a CSV Data Set): the key
    /// modes that read it make their keys from it until it changes again; the others ignore it.
    pub fn set_key(&mut self, text: &str) -> Result<(), EngineError> {
        // trimmed, as the thread's settings are
        let text = text.trim();
        if self.key_text.as_deref() == Some(text) {
            return Ok(());
        }
        match &mut self.key {
            KeySpec::Fixed(key) => {
                if text.is_empty() {
                    return Err(EngineError::config(
                        "key: this sample's key is empty; key.mode=fixed needs the key text (is its variable set?)",
                    ));
                }
                text.clone_into(key);
            }
            KeySpec::Template(t) => *t = Template::parse(text, "key", template::MESSAGE)?,
            KeySpec::Schema(_, Some(json)) => {
                let encoder = self.key_encoder.as_mut().expect("a schema key has its encoder");
                // into a new buffer: a record that does not match must not leave half a key for the next sample
                let mut encoded = Vec::with_capacity(self.key_buf.len());
                encoder.next_into(Some(text.as_bytes()), &mut encoded)?;
                self.key_buf = encoded;
                text.clone_into(json);
            }
            KeySpec::None | KeySpec::Sequence | KeySpec::Random | KeySpec::Schema(_, None) => return Ok(()),
        }
        self.key_text = Some(text.to_owned());
        Ok(())
    }

    /// The next message; `jmeter_value` is the sample's value when value.mode=jmeter.
    pub fn next<'a>(&'a mut self, jmeter_value: Option<&'a [u8]>) -> Result<Record<'a>, EngineError> {
        let seq = self.seq;
        self.seq += 1;
        let value: &[u8] = match &mut self.value {
            ValueSource::Fixed(bytes) => bytes,
            ValueSource::Template(t) => {
                t.render_into(&mut self.value_buf, seq, self.thread, &mut self.rng);
                &self.value_buf
            }
            ValueSource::Lines(lines) => &lines[(seq % lines.len() as u64) as usize],
            ValueSource::Schema(encoder) => {
                encoder.next_into(jmeter_value, &mut self.value_buf)?;
                &self.value_buf
            }
            // An empty value is what a missing `value` parameter (or an unset variable) gives: a mistake, not a
            // message to send.
            ValueSource::Jmeter => jmeter_value.filter(|v| !v.is_empty()).ok_or_else(|| {
                EngineError::config(
                    "value: value.mode=jmeter but the sample's value is empty; set the value parameter, e.g. ${payload} \
                     from a CSV Data Set",
                )
            })?,
        };
        let key = match &self.key {
            KeySpec::None => None,
            KeySpec::Fixed(k) => Some(k.as_bytes()),
            KeySpec::Sequence => {
                self.key_buf.clear();
                let _ = write!(self.key_buf, "{seq}");
                Some(&self.key_buf[..])
            }
            KeySpec::Random => {
                self.key_buf.clear();
                let _ = write!(self.key_buf, "{:016x}", self.rng.u64(..));
                Some(&self.key_buf[..])
            }
            KeySpec::Template(t) => {
                t.render_into(&mut self.key_buf, seq, self.thread, &mut self.rng);
                Some(&self.key_buf[..])
            }
            KeySpec::Schema(_, json) => {
                // a generated key per message; a JMeter key was encoded into key_buf by new() or set_key()
                if let (None, Some(encoder)) = (json, self.key_encoder.as_mut()) {
                    encoder.next_into(None, &mut self.key_buf)?;
                }
                Some(&self.key_buf[..])
            }
        };
        Ok(Record { key, value })
    }
}

fn read_lines(path: &str, max_bytes: u64) -> Result<Vec<Vec<u8>>, EngineError> {
    let limit = files::Limit { bytes: max_bytes, setting: Some(MAX_BYTES_KEY) };
    let data = files::read(path, "payload.file", limit).map_err(EngineError::config)?;
    let lines: Vec<Vec<u8>> = data
        .split(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    if lines.is_empty() {
        return Err(EngineError::config(format!("payload.file: '{path}' has no non-empty line")));
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;
    use crate::schema::settings_of as spec;

    #[test]
    fn fixed_values_have_the_record_size() {
        let v = ValueSpec::parse(&spec(&[("record.size", "200")])).unwrap();
        let mut g = PayloadGen::new(&v, &KeySpec::None, 0, "t").unwrap();
        let r = g.next(None).unwrap();
        assert_eq!(r.value.len(), 200);
        assert!(r.value.iter().all(u8::is_ascii_uppercase));
        assert!(r.key.is_none());
    }

    #[test]
    fn templates_expand_placeholders() {
        let v = ValueSpec::parse(&spec(&[("value.mode", "template"), ("value.template", "t{thread}-m{seq}-{uuid}")]))
            .unwrap();
        let k = KeySpec::parse(&spec(&[("key.mode", "template"), ("key", "user-{seq}")])).unwrap();
        let mut g = PayloadGen::new(&v, &k, 7, "t").unwrap();
        g.next(None).unwrap();
        let r = g.next(None).unwrap();
        let text = std::str::from_utf8(r.value).unwrap();
        assert!(text.starts_with("t7-m1-"), "{text}");
        assert_eq!(text.len(), "t7-m1-".len() + 36);
        assert_eq!(r.key, Some(&b"user-1"[..]));
    }

    #[test]
    fn unknown_placeholder_is_refused() {
        let e = ValueSpec::parse(&spec(&[("value.mode", "template"), ("value.template", "{sequence}")])).unwrap_err();
        assert!(e.message.contains("unknown placeholder {sequence}"), "{}", e.message);
    }

    #[test]
    fn file_lines_are_taken_in_turn() {
        let path = std::env::temp_dir().join(format!("kn-payload-{}.txt", std::process::id()));
        std::fs::write(&path, "a\r\nbb\n\nccc\n").unwrap();
        let v = ValueSpec::File { path: path.to_string_lossy().into_owned(), max_bytes: 1024 };
        let mut g = PayloadGen::new(&v, &KeySpec::Sequence, 0, "t").unwrap();
        let got: Vec<Vec<u8>> = (0..4).map(|_| g.next(None).unwrap().value.to_vec()).collect();
        assert_eq!(got, vec![b"a".to_vec(), b"bb".to_vec(), b"ccc".to_vec(), b"a".to_vec()]);
        let e = PayloadGen::new(
            &ValueSpec::File { path: "/nonexistent/x".into(), max_bytes: 1024 },
            &KeySpec::None,
            0,
            "t",
        )
        .err()
        .unwrap();
        assert!(e.message.starts_with("payload.file: cannot read '/nonexistent/x'"), "{}", e.message);
    }

    #[test]
    fn jmeter_values_and_keys() {
        let k = KeySpec::parse(&spec(&[("key.mode", "sequence")])).unwrap();
        let mut g = PayloadGen::new(&ValueSpec::Jmeter, &k, 0, "t").unwrap();
        let r = g.next(Some(b"hello")).unwrap();
        assert_eq!((r.key, r.value), (Some(&b"0"[..]), &b"hello"[..]));
        assert!(g.next(None).is_err());
        assert!(g.next(Some(b"")).err().is_some_and(|e| e.message.contains("value is empty")));
    }

    #[test]
    fn schema_modes_make_keys_and_values_from_their_schemas() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/schema/schemas");
        let avsc = format!("{dir}/order.avsc");
        let proto = format!("{dir}/order.proto");
        let settings: BTreeMap<&str, &str> = [
            ("value.mode", "avro"),
            ("value.schema.file", avsc.as_str()),
            ("value.schema.rules", "id = seq(10); currency = fixed(EUR)"),
            ("key.mode", "protobuf"),
            ("key.schema.file", proto.as_str()),
            ("key.schema.message", "shop.v1.Refund"),
            ("key.schema.rules", "order_code = template(K{seq})"),
        ]
        .into();
        let v = ValueSpec::parse(&settings).unwrap();
        let k = KeySpec::parse(&settings).unwrap();
        assert!(matches!((&v, &k), (ValueSpec::Schema(_), KeySpec::Schema(_, None))));
        let mut g = PayloadGen::new(&v, &k, 0, "orders").unwrap();
        let value_schema = crate::schema::ParsedSchema::from_file(crate::schema::Format::Avro, &avsc, None).unwrap();
        let key_schema =
            crate::schema::ParsedSchema::from_file(crate::schema::Format::Protobuf, &proto, Some("shop.v1.Refund"))
                .unwrap();
        for i in 0..3 {
            let r = g.next(None).unwrap();
            // no registry URL: the bare encodings, no header
            let value = value_schema.decode(r.value).unwrap();
            assert_eq!((value["id"].as_i64(), value["currency"].as_str()), (Some(10 + i), Some("EUR")));
            let key = key_schema.decode(r.key.unwrap()).unwrap();
            assert_eq!(key["order_code"], format!("K{i}"));
        }
    }

    #[test]
    fn jmeter_keys_are_encoded_against_the_key_schema() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/schema/schemas");
        let avsc = format!("{dir}/order.avsc");
        let proto = format!("{dir}/order.proto");
        let key_settings = |key: &'static str| -> BTreeMap<&str, String> {
            [
                ("key.mode", "protobuf".to_string()),
                ("key.schema.file", proto.clone()),
                ("key.schema.message", "shop.v1.Refund".to_string()),
                ("key.schema.input", "jmeter".to_string()),
                ("key", key.to_string()),
                ("value.mode", "avro".to_string()),
                ("value.schema.file", avsc.clone()),
            ]
            .into()
        };
        let parse = |key: &'static str| {
            let owned = key_settings(key);
            let s: BTreeMap<&str, &str> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
            (KeySpec::parse(&s), ValueSpec::parse(&s).unwrap())
        };
        let (k, v) = parse(r#"{"order_code": "K-7", "amount": 2.5}"#);
        let mut g = PayloadGen::new(&v, &k.unwrap(), 0, "orders").unwrap();
        let key_schema =
            crate::schema::ParsedSchema::from_file(crate::schema::Format::Protobuf, &proto, Some("shop.v1.Refund"))
                .unwrap();
        for _ in 0..2 {
            let key = key_schema.decode(g.next(None).unwrap().key.unwrap()).unwrap();
            assert_eq!(key["order_code"], "K-7", "{key}");
        }
        // no key JSON, or one that does not match the schema: refused when the thread starts, saying why
        let e = parse("").0.unwrap_err();
        assert!(e.message.starts_with("key: missing; key.schema.input=jmeter"), "{}", e.message);
        let (k, v) = parse(r#"{"order_code": 5}"#);
        let e = PayloadGen::new(&v, &k.unwrap(), 0, "orders").err().unwrap();
        assert_eq!(e.code, Code::RecordInvalid, "{}", e.message);

        // a sample's key JSON (e.g. {"order_code": "${code}"}) is encoded when it changes; a record that does not
        // match fails that sample and leaves the previous key whole
        let (k, v) = parse(r#"{"order_code": "K-1"}"#);
        let mut g = PayloadGen::new(&v, &k.unwrap(), 0, "orders").unwrap();
        g.set_key(r#"{"order_code": "K-2"}"#).unwrap();
        assert_eq!(key_schema.decode(g.next(None).unwrap().key.unwrap()).unwrap()["order_code"], "K-2");
        let e = g.set_key(r#"{"order_code": 6}"#).unwrap_err();
        assert_eq!(e.code, Code::RecordInvalid, "{}", e.message);
        assert_eq!(key_schema.decode(g.next(None).unwrap().key.unwrap()).unwrap()["order_code"], "K-2");
    }

    /// The key field as JMeter evaluates it per sample (`${user}`): the modes that read it follow it.
    #[test]
    fn a_samples_key_field_replaces_the_fixed_key_and_the_template() {
        let fixed = KeySpec::parse(&spec(&[("key.mode", "fixed"), ("key", "alice")])).unwrap();
        let mut g = PayloadGen::new(&ValueSpec::Jmeter, &fixed, 0, "t").unwrap();
        assert_eq!(g.next(Some(b"v")).unwrap().key, Some(&b"alice"[..]));
        g.set_key(" bob ").unwrap();
        assert_eq!(g.next(Some(b"v")).unwrap().key, Some(&b"bob"[..]), "trimmed as the settings are");
        let e = g.set_key("").unwrap_err();
        assert!(e.message.starts_with("key: this sample's key is empty"), "{}", e.message);
        assert_eq!(g.next(Some(b"v")).unwrap().key, Some(&b"bob"[..]), "a refused key changes nothing");

        let template = KeySpec::parse(&spec(&[("key.mode", "template"), ("key", "a-{seq}")])).unwrap();
        let mut g = PayloadGen::new(&ValueSpec::Jmeter, &template, 0, "t").unwrap();
        g.set_key("b-{seq}").unwrap();
        assert_eq!(g.next(Some(b"v")).unwrap().key, Some(&b"b-0"[..]));
        assert!(g.set_key("c-{nope}").is_err());
        assert_eq!(g.next(Some(b"v")).unwrap().key, Some(&b"b-1"[..]));

        // the modes that make their own keys do not read the field
        let sequence = KeySpec::parse(&spec(&[("key.mode", "sequence")])).unwrap();
        let mut g = PayloadGen::new(&ValueSpec::Jmeter, &sequence, 0, "t").unwrap();
        g.set_key("ignored").unwrap();
        assert_eq!(g.next(Some(b"v")).unwrap().key, Some(&b"0"[..]));
    }
}
