//! Field rules: the few knobs a tester needs over otherwise random records.
//!
//! A rules text has one entry per line (or separated by `;`): `path = rule rule ...`, where `path` names a
//! field with dots through nested records (`customer.address.city`; array items and map values are
//! addressed through their field, `lines.sku`). Lines starting with `#` are comments. Rules:
//!
//! | rule | fields | effect |
//! |---|---|---|
//! | `seq` / `seq(start)` / `seq(start,step)` | numbers, strings | a counter per field (per generator) |
//! | `fixed(v)` | any | always `v` (JSON for records/arrays, text otherwise) |
//! | `choice(a,b,c)` | any | one of the values, uniformly |
//! | `range(min,max)` | numbers, decimals, dates, timestamps | uniform in `[min, max]` |
//! | `template(text)` | strings | `{seq}` (record number) and `{uuid}` expanded |
//! | `length(n)` / `length(min,max)` | strings, bytes | length in characters / bytes |
//! | `size(n)` / `size(min,max)` | arrays, maps | number of items |
//! | `null(ratio)` | optional fields (union with null) | share of records where the field is null |

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::error::EngineError;
use crate::template::{self, Template};

/// A rules file is a few lines per field: 1 MB is thousands of fields.
const MAX_RULES_FILE: u64 = 1024 * 1024;

/// What a field's value is made of, when a rule decides it (otherwise it is random).
#[derive(Debug, Clone, PartialEq)]
pub enum ValueRule {
    /// A counter: `start`, `start + step`, ...
    Seq {
        /// The first value.
        start: i64,
        /// Added for each next value.
        step: i64,
    },
    /// The same value every time (raw text of the rule's argument).
    Fixed(String),
    /// One of these values (raw texts).
    Choice(Vec<String>),
    /// A text with `{seq}` / `{uuid}` placeholders.
    Template(Template),
}

/// All rules of one field.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldRules {
    /// The value itself (sequence, fixed, choice, template).
    pub value: Option<ValueRule>,
    /// Numeric bounds, inclusive.
    pub range: Option<(f64, f64)>,
    /// String / bytes length bounds, inclusive.
    pub length: Option<(usize, usize)>,
    /// Array / map size bounds, inclusive.
    pub size: Option<(usize, usize)>,
    /// Share of nulls for an optional field, 0.0 to 1.0.
    pub null_ratio: Option<f64>,
}

/// The rules of a record type, by field path; knows which paths the schema used (to refuse typos).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rules {
    by_path: BTreeMap<String, FieldRules>,
}

impl Rules {
    /// Parses a rules text (see the module documentation); `what` names its origin in errors.
    pub fn parse(text: &str, what: &str) -> Result<Rules, EngineError> {
        let mut by_path: BTreeMap<String, FieldRules> = BTreeMap::new();
        for entry in split_entries(text) {
            let entry = entry.trim();
            if entry.is_empty() || entry.starts_with('#') {
                continue;
            }
            let (path, rules) = entry.split_once('=').ok_or_else(|| {
                EngineError::config(format!("{what}: '{entry}' is not 'field = rule', e.g. 'id = seq(1)'"))
            })?;
            let path = path.trim();
            if path.is_empty() {
                return Err(EngineError::config(format!("{what}: '{entry}' has no field name before '='")));
            }
            let field = by_path.entry(path.to_string()).or_default();
            let mut rest = rules.trim();
            if rest.is_empty() {
                return Err(EngineError::config(format!("{what}: field '{path}' has no rule after '='")));
            }
            while !rest.is_empty() {
                let (name, args, tail) = next_rule(rest)
                    .ok_or_else(|| EngineError::config(format!("{what}: cannot read the rule '{rest}' of '{path}'")))?;
                apply_rule(field, name, args, &format!("{what}: {path}"))?;
                rest = tail.trim_start();
            }
        }
        Ok(Rules { by_path })
    }

    /// Reads the rules of a settings map: `<prefix>schema.rules` (inline text) and/or `<prefix>schema.rules.file`.
    pub fn from_settings(settings: &BTreeMap<&str, &str>, prefix: &str) -> Result<Rules, EngineError> {
        let inline_key = format!("{prefix}schema.rules");
        let file_key = format!("{prefix}schema.rules.file");
        let mut text = String::new();
        if let Some(path) = settings.get(file_key.as_str()).filter(|p| !p.trim().is_empty()) {
            let limit = crate::files::Limit::fixed(MAX_RULES_FILE);
            let content = crate::files::read_text(path.trim(), &file_key, limit).map_err(EngineError::config)?;
            text.push_str(&content);
            text.push('\n');
        }
        if let Some(inline) = settings.get(inline_key.as_str()) {
            text.push_str(inline);
        }
        Rules::parse(&text, &inline_key)
    }

    /// The rules of `path` (empty when none).
    pub fn get(&self, path: &str) -> Option<&FieldRules> {
        self.by_path.get(path)
    }

    /// Fails when a rule names a field that the schema does not have; `known` are the paths it has.
    pub fn check_paths(&self, known: &BTreeSet<String>, what: &str) -> Result<(), EngineError> {
        let unknown: Vec<&str> = self.by_path.keys().filter(|p| !known.contains(*p)).map(String::as_str).collect();
        if unknown.is_empty() {
            return Ok(());
        }
        let mut known_list = String::new();
        for (i, p) in known.iter().enumerate() {
            if i > 0 {
                known_list.push_str(", ");
            }
            if i == 30 {
                known_list.push('…');
                break;
            }
            let _ = write!(known_list, "{p}");
        }
        Err(EngineError::config(format!(
            "{what}: no field {} in the schema; its fields are: {known_list}",
            unknown.iter().map(|p| format!("'{p}'")).collect::<Vec<_>>().join(", ")
        )))
    }
}

/// Splits on newlines and on `;` outside parentheses (a template may contain `;`).
fn split_entries(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            '\n' | ';' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

/// `name(args) tail` or `name tail` → (name, args, tail); the arguments end at the matching parenthesis.
fn next_rule(text: &str) -> Option<(&str, Option<&str>, &str)> {
    let name_end = text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(text.len());
    let name = &text[..name_end];
    if name.is_empty() {
        return None;
    }
    let rest = &text[name_end..];
    if !rest.starts_with('(') {
        return Some((name, None, rest));
    }
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some((name, Some(&rest[1..i]), &rest[i + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

fn apply_rule<'a>(field: &mut FieldRules, name: &str, args: Option<&'a str>, what: &str) -> Result<(), EngineError> {
    let need = |args: Option<&'a str>| -> Result<&'a str, EngineError> {
        args.ok_or_else(|| {
            EngineError::config(format!("{what}: {name} needs arguments in parentheses, e.g. {name}(…)"))
        })
    };
    let set_value = |field: &mut FieldRules, v: ValueRule| {
        if field.value.is_some() {
            return Err(EngineError::config(format!(
                "{what}: more than one of seq, fixed, choice, template; keep one"
            )));
        }
        field.value = Some(v);
        Ok(())
    };
    match name {
        "seq" => {
            let nums = match args {
                None => vec![],
                Some(a) => numbers::<i64>(a, what, name)?,
            };
            let (start, step) = match nums[..] {
                [] => (0, 1),
                [s] => (s, 1),
                [s, st] => (s, st),
                _ => return Err(EngineError::config(format!("{what}: seq takes at most (start, step)"))),
            };
            set_value(field, ValueRule::Seq { start, step })
        }
        "fixed" => set_value(field, ValueRule::Fixed(need(args)?.to_string())),
        "choice" => {
            let items: Vec<String> = need(args)?.split(',').map(|s| s.trim().to_string()).collect();
            if items.iter().any(String::is_empty) {
                return Err(EngineError::config(format!("{what}: choice has an empty item; write choice(a,b,c)")));
            }
            set_value(field, ValueRule::Choice(items))
        }
        "template" => set_value(field, ValueRule::Template(Template::parse(need(args)?, what, template::RECORD)?)),
        "range" => {
            let nums = numbers::<f64>(need(args)?, what, name)?;
            match nums[..] {
                [min, max] if min <= max => field.range = Some((min, max)),
                _ => return Err(EngineError::config(format!("{what}: range needs (min, max) with min <= max"))),
            }
            Ok(())
        }
        "length" | "size" => {
            let nums = numbers::<usize>(need(args)?, what, name)?;
            let bounds = match nums[..] {
                [n] => (n, n),
                [min, max] if min <= max => (min, max),
                _ => {
                    return Err(EngineError::config(format!("{what}: {name} needs (n) or (min, max) with min <= max")))
                }
            };
            if name == "length" {
                field.length = Some(bounds);
            } else {
                field.size = Some(bounds);
            }
            Ok(())
        }
        "null" => {
            let ratio = numbers::<f64>(need(args)?, what, name)?;
            match ratio[..] {
                [r] if (0.0..=1.0).contains(&r) => field.null_ratio = Some(r),
                _ => {
                    return Err(EngineError::config(format!(
                        "{what}: null needs one ratio from 0 to 1, e.g. null(0.2)"
                    )))
                }
            }
            Ok(())
        }
        other => Err(EngineError::config(format!(
            "{what}: unknown rule '{other}'; use seq, fixed, choice, range, template, length, size or null"
        ))),
    }
}

fn numbers<T: std::str::FromStr>(args: &str, what: &str, rule: &str) -> Result<Vec<T>, EngineError> {
    args.split(',')
        .map(|s| {
            s.trim()
                .parse::<T>()
                .map_err(|_| EngineError::config(format!("{what}: {rule}: '{}' is not a number", s.trim())))
        })
        .collect()
}

/// Random letters and digits, `len` characters.
pub fn random_text(rng: &mut fastrand::Rng, len: usize) -> String {
    (0..len).map(|_| rng.alphanumeric()).collect()
}

/// A number in `[lo, hi]` (inclusive) from `(lo, hi)` bounds.
pub fn pick_len(rng: &mut fastrand::Rng, (lo, hi): (usize, usize)) -> usize {
    rng.usize(lo..=hi)
}

/// Per-field mutable state of a value rule during generation (the counter of `seq`).
#[derive(Debug, Clone)]
pub struct SeqState {
    next: i64,
    step: i64,
}

impl SeqState {
    /// A counter from `start` by `step`.
    pub fn new(start: i64, step: i64) -> SeqState {
        SeqState { next: start, step }
    }

    /// The current value, then moves on.
    pub fn advance(&mut self) -> i64 {
        let v = self.next;
        self.next = self.next.wrapping_add(self.step);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_entries_with_several_rules() {
        let r = Rules::parse(
            "# comment\nid = seq(100, 5)\nname = length(3,5) null(0.25); code = template(A-{seq};{uuid})\n\
             kind=choice(a, b ,c)\namount = range(1.5, 9)\nlines = size(2)\nfixed_one = fixed({\"x\": 1})",
            "rules",
        )
        .unwrap();
        assert_eq!(r.get("id").unwrap().value, Some(ValueRule::Seq { start: 100, step: 5 }));
        let name = r.get("name").unwrap();
        assert_eq!((name.length, name.null_ratio), (Some((3, 5)), Some(0.25)));
        assert!(matches!(r.get("code").unwrap().value, Some(ValueRule::Template(_))));
        assert_eq!(r.get("kind").unwrap().value, Some(ValueRule::Choice(vec!["a".into(), "b".into(), "c".into()])));
        assert_eq!(r.get("amount").unwrap().range, Some((1.5, 9.0)));
        assert_eq!(r.get("lines").unwrap().size, Some((2, 2)));
        assert_eq!(r.get("fixed_one").unwrap().value, Some(ValueRule::Fixed("{\"x\": 1}".into())));
    }

    #[test]
    fn mistakes_are_explained() {
        let err = |t: &str| Rules::parse(t, "value.schema.rules").unwrap_err().message;
        assert!(err("id seq").contains("is not 'field = rule'"), "{}", err("id seq"));
        assert!(err("id = sequence").contains("unknown rule 'sequence'"));
        assert!(err("id = range(5,1)").contains("min <= max"));
        assert!(err("id = null(2)").contains("from 0 to 1"));
        assert!(err("id = seq fixed(1)").contains("more than one"));
        assert!(err("id = template({sq})").contains("unknown placeholder {sq}"));
        assert!(err("id = length(x)").contains("'x' is not a number"));
    }

    #[test]
    fn unknown_paths_are_refused_with_the_known_ones() {
        let r = Rules::parse("nmae = length(3)", "rules").unwrap();
        let known: BTreeSet<String> = ["id".to_string(), "name".to_string()].into();
        let e = r.check_paths(&known, "value.schema.rules").unwrap_err();
        assert_eq!(e.message, "value.schema.rules: no field 'nmae' in the schema; its fields are: id, name");
    }

    #[test]
    fn templates_expand_seq_and_uuid() {
        let t = Template::parse("o-{seq}-{uuid}", "t", template::RECORD).unwrap();
        let s = t.render(42, &mut fastrand::Rng::with_seed(1));
        assert!(s.starts_with("o-42-"), "{s}");
        assert!(uuid::Uuid::parse_str(&s[5..]).is_ok(), "{s}");
    }

    #[test]
    fn sequences_count_by_step() {
        let mut s = SeqState::new(10, -2);
        assert_eq!((s.advance(), s.advance(), s.advance()), (10, 8, 6));
    }
}
