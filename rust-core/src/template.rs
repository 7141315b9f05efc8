//! Texts with placeholders, parsed once and expanded for every message or record: the producer's `value.template`
//! and template keys (`{seq}`, `{thread}`, `{uuid}`, `{timestamp}`), and the schema rules' `template(…)` (`{seq}`,
//! `{uuid}`).

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::echo::clip;
use crate::error::EngineError;

/// What a `{name}` in a template expands to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Placeholder {
    /// The message's (record's) number.
    Seq,
    /// The JMeter thread's number.
    Thread,
    /// A random (version 4) UUID.
    Uuid,
    /// Milliseconds since the epoch, now.
    Timestamp,
}

impl Placeholder {
    fn name(self) -> &'static str {
        match self {
            Placeholder::Seq => "seq",
            Placeholder::Thread => "thread",
            Placeholder::Uuid => "uuid",
            Placeholder::Timestamp => "timestamp",
        }
    }
}

/// The placeholders of the producer's value and key templates.
pub const MESSAGE: &[Placeholder] = &[Placeholder::Seq, Placeholder::Thread, Placeholder::Uuid, Placeholder::Timestamp];
/// The placeholders of a schema rule's `template(…)`.
pub const RECORD: &[Placeholder] = &[Placeholder::Seq, Placeholder::Uuid];

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(String),
    Placeholder(Placeholder),
}

/// A text with placeholders, parsed once.
#[derive(Debug, Clone, PartialEq)]
pub struct Template(Vec<Part>);

impl Template {
    /// Parses `text` with the `allowed` placeholders; any other is an error (a typo would otherwise go out verbatim),
    /// and so is a `{` that opens no placeholder (`order-{seq` sent literally gave every record the same key). `{{`
    /// is a literal `{`.
    pub fn parse(text: &str, what: &str, allowed: &[Placeholder]) -> Result<Template, EngineError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            literal.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            if let Some(tail) = after.strip_prefix('{') {
                literal.push('{');
                rest = tail;
                continue;
            }
            // The name ends at the first brace; a `{` first (or none) leaves this one unclosed.
            let Some(close) = after.find(['{', '}']).filter(|c| after.as_bytes()[*c] == b'}') else {
                return Err(EngineError::config(format!(
                    "{what}: '{}' has a {{ that is not closed (at character {}); write {} (a placeholder), or {{{{ \
                     for a literal {{",
                    clip(text),
                    text[..text.len() - rest.len() + open].chars().count() + 1,
                    choices(allowed)
                )));
            };
            let name = &after[..close];
            let Some(&placeholder) = allowed.iter().find(|p| p.name() == name) else {
                return Err(EngineError::config(format!(
                    "{what}: unknown placeholder {{{}}}; use {}, or {{{{ for a literal {{",
                    clip(name),
                    choices(allowed)
                )));
            };
            if !literal.is_empty() {
                parts.push(Part::Text(std::mem::take(&mut literal)));
            }
            parts.push(Part::Placeholder(placeholder));
            rest = &after[close + 1..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            parts.push(Part::Text(literal));
        }
        Ok(Template(parts))
    }

    /// Writes the expansion for message `seq` of JMeter thread `thread` into `out`, reusing its allocation.
    pub fn render_into(&self, out: &mut Vec<u8>, seq: u64, thread: u32, rng: &mut fastrand::Rng) {
        out.clear();
        for part in &self.0 {
            // Writing into a Vec cannot fail.
            let _ = match part {
                Part::Text(t) => out.write_all(t.as_bytes()),
                Part::Placeholder(Placeholder::Seq) => write!(out, "{seq}"),
                Part::Placeholder(Placeholder::Thread) => write!(out, "{thread}"),
                Part::Placeholder(Placeholder::Uuid) => write!(out, "{}", random_uuid(rng)),
                Part::Placeholder(Placeholder::Timestamp) => write!(out, "{}", epoch_millis()),
            };
        }
    }

    /// The expanded text for record number `seq` (a template of [`RECORD`] placeholders).
    pub fn render(&self, seq: u64, rng: &mut fastrand::Rng) -> String {
        let mut out = Vec::new();
        self.render_into(&mut out, seq, 0, rng);
        // Every part is UTF-8 text, so the conversion keeps the bytes as they are.
        String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
}

/// `{a}, {b} or {c}`: the placeholders a template may use.
fn choices(allowed: &[Placeholder]) -> String {
    let names: Vec<String> = allowed.iter().map(|p| format!("{{{}}}", p.name())).collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

fn epoch_millis() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0)
}

/// A random (version 4) UUID: what `{uuid}` becomes, and the schema generators' `uuid` rule.
pub fn random_uuid(rng: &mut fastrand::Rng) -> uuid::Uuid {
    uuid::Builder::from_random_bytes(rng.u128(..).to_le_bytes()).into_uuid()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_expand_and_unknown_ones_are_named() {
        let t = Template::parse("k-{seq}-{thread}", "key", MESSAGE).unwrap();
        let mut out = Vec::new();
        t.render_into(&mut out, 7, 3, &mut fastrand::Rng::with_seed(1));
        assert_eq!(out, b"k-7-3");
        let e = Template::parse("x{thread}", "rule", RECORD).unwrap_err();
        assert_eq!(e.message, "rule: unknown placeholder {thread}; use {seq} or {uuid}, or {{ for a literal {");
        let e = Template::parse("{ts}", "value.template", MESSAGE).unwrap_err();
        assert!(e.message.contains("use {seq}, {thread}, {uuid} or {timestamp},"), "{}", e.message);
        let e = Template::parse("{seq}x{ts", "key", MESSAGE).unwrap_err();
        assert!(e.message.starts_with("key: '{seq}x{ts' has a { that is not closed (at character 7)"), "{}", e.message);
        assert!(
            e.message.contains("write {seq}, {thread}, {uuid} or {timestamp} (a placeholder), or {{ for a literal {"),
            "{}",
            e.message
        );
        let u = Template::parse("{uuid}", "r", RECORD).unwrap().render(0, &mut fastrand::Rng::with_seed(2));
        assert_eq!(uuid::Uuid::parse_str(&u).map(|u| u.get_version_num()), Ok(4));
    }

    #[test]
    fn an_unclosed_brace_is_refused_and_a_double_one_is_literal() {
        for text in ["order-{seq", "id-{", "{seq{seq}", "a{b"] {
            let e = Template::parse(text, "key", MESSAGE).unwrap_err();
            assert!(e.message.starts_with(&format!("key: '{text}' has a {{ that is not closed")), "{}", e.message);
            assert!(e.message.ends_with("or {{ for a literal {"), "{}", e.message);
        }
        let t = Template::parse(r#"{{"id":{seq},"s":"}"}"#, "value.template", MESSAGE).unwrap();
        let mut out = Vec::new();
        t.render_into(&mut out, 42, 1, &mut fastrand::Rng::with_seed(1));
        assert_eq!(out, br#"{"id":42,"s":"}"}"#);
        let t = Template::parse("{{seq}", "key", MESSAGE).unwrap();
        t.render_into(&mut out, 42, 1, &mut fastrand::Rng::with_seed(1));
        assert_eq!(out, b"{seq}");
    }
}
