//! The per-thread generator that every format's plan runs in: the plan (a tree built once from the schema and the
//! field rules), the random source and the number of the next record (`seq(…)` and `{seq}` count from it).

use std::collections::BTreeSet;

use super::rules::{FieldRules, Rules, SeqState, ValueRule};
use crate::error::EngineError;
use crate::template::Template;

/// A format's generation plan, which makes one record at a time.
pub trait Plan {
    /// One record before encoding: an Avro value, a JSON value, a Protobuf message.
    type Record;

    /// Record number `seq`, drawing from `rng`.
    fn generate(&mut self, rng: &mut fastrand::Rng, seq: u64) -> Self::Record;
}

/// A generator of random records for one schema (one per thread: it holds counters and an RNG).
pub struct Generator<P> {
    plan: P,
    rng: fastrand::Rng,
    seq: u64,
}

impl<P> Generator<P> {
    /// Starts at record 0 with a random seed.
    pub(super) fn of(plan: P) -> Generator<P> {
        Generator { plan, rng: fastrand::Rng::new(), seq: 0 }
    }

    /// Uses a fixed seed (tests: reproducible records).
    pub fn with_seed(mut self, seed: u64) -> Generator<P> {
        self.rng = fastrand::Rng::with_seed(seed);
        self
    }

    /// Runs `make` on the plan for the next record (its number counts up): for a plan that writes its record
    /// straight into a buffer instead of returning it.
    pub(super) fn next_with<R>(&mut self, make: impl FnOnce(&mut P, &mut fastrand::Rng, u64) -> R) -> R {
        let seq = self.seq;
        self.seq += 1;
        make(&mut self.plan, &mut self.rng, seq)
    }
}

impl<P: Plan> Generator<P> {
    /// The next record.
    pub fn next_record(&mut self) -> P::Record {
        self.next_with(|plan, rng, seq| plan.generate(rng, seq))
    }
}

/// A field's value rule (`fixed`, `choice`, `seq`, `template`) planned for one format: `V` is the format's value and
/// `K` what kind of value a sequence number becomes.
pub enum Rule<V, K> {
    /// The same value every time.
    Fixed(V),
    /// One of the values, at random.
    Choice(Vec<V>),
    /// A counter, as the field's kind of value.
    Seq(SeqState, K),
    /// Text with `{seq}`-style placeholders.
    Template(Template),
}

/// How a format makes its values of a rule's sequence numbers and template texts.
pub trait RuleValue<K>: Clone {
    /// Sequence number `n` as a value of `kind`.
    fn of_seq(n: i64, kind: &K) -> Self;
    /// A template's text.
    fn of_text(text: String) -> Self;
}

impl<V: RuleValue<K>, K> Rule<V, K> {
    /// Plans `rule` for a field: `convert` reads a fixed or choice text as the field's value, `seq` is the kind its
    /// sequence numbers take (None: the field takes no sequence), `text` whether it takes a template.
    pub fn plan(
        rule: &ValueRule,
        convert: impl Fn(&str) -> Result<V, String>,
        seq: Option<K>,
        text: bool,
    ) -> Result<Rule<V, K>, String> {
        Ok(match rule {
            ValueRule::Fixed(v) => Rule::Fixed(convert(v)?),
            ValueRule::Choice(items) => Rule::Choice(items.iter().map(|i| convert(i)).collect::<Result<_, _>>()?),
            ValueRule::Seq { start, step } => match seq {
                Some(kind) => Rule::Seq(SeqState::new(*start, *step), kind),
                None => return Err("seq needs a number or string field".into()),
            },
            ValueRule::Template(t) if text => Rule::Template(t.clone()),
            ValueRule::Template(_) => return Err("template needs a string field".into()),
        })
    }

    /// The rule's value for record number `seq`.
    pub fn value(&mut self, rng: &mut fastrand::Rng, seq: u64) -> V {
        match self {
            Rule::Fixed(v) => v.clone(),
            Rule::Choice(items) => items[rng.usize(..items.len())].clone(),
            Rule::Seq(state, kind) => V::of_seq(state.advance(), kind),
            Rule::Template(t) => V::of_text(t.render(seq, rng)),
        }
    }
}

/// The value of a node's rule, or None when it has none (it draws at random).
pub fn ruled<V: RuleValue<K>, K>(rule: &mut Option<Rule<V, K>>, rng: &mut fastrand::Rng, seq: u64) -> Option<V> {
    rule.as_mut().map(|r| r.value(rng, seq))
}

/// A planner's error: the rule path where it went wrong and what is wrong (the setting's name goes in front later).
pub type PlanError = (String, String);

/// The rules of no field.
static NO_RULES: FieldRules = FieldRules { value: None, range: None, length: None, size: None, null_ratio: None };

/// What every format's planner carries through its schema: the rules, and the field paths it met (a rule that names
/// none of them is refused at the end).
pub struct Walk<'a> {
    rules: &'a Rules,
    known: BTreeSet<String>,
}

impl<'a> Walk<'a> {
    /// A walk with no field met yet.
    pub fn new(rules: &'a Rules) -> Walk<'a> {
        Walk { rules, known: BTreeSet::new() }
    }

    /// The rules of the field at `path` (none for the root or a field without rules).
    pub fn at(&self, path: &str) -> &'a FieldRules {
        if path.is_empty() {
            return &NO_RULES;
        }
        self.rules.get(path).unwrap_or(&NO_RULES)
    }

    /// Notes that the schema has a field at `path`.
    pub fn visit(&mut self, path: &str) {
        self.known.insert(path.to_string());
    }

    /// Ends the walk: fails on a rule of `what` that names no field the walk met.
    pub fn finish(self, what: &str) -> Result<(), EngineError> {
        self.rules.check_paths(&self.known, what)
    }
}

/// The path of field `name` below `path` (`name` itself at the root).
pub fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}
