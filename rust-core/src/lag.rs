//! Consumer lag of a group, sampled on demand, and the verdict "the consumers are not keeping up".
//!
//! Each sample reads the group's committed offsets and the partitions' end offsets with a librdkafka consumer
//! that carries the group id but never joins the group nor commits, so watching the lag changes nothing for the
//! consumers. Lag of a partition = end offset − committed offset; a partition without a committed offset counts
//! from its first offset (what a consumer starting at `earliest` still has to read). The end offset is the
//! last-stable offset with `isolation.level=read_committed` (librdkafka's default: what read_committed consumers can
//! read), the high watermark with read_uncommitted. Both are read every sample: when an open transaction holds the last-stable offset behind the high
//! watermark, the sample says so, since a lag that will not go down is otherwise hard to explain.
//!
//! Verdict: the sample fails when the total lag grew in each of the last `lag.windows` samples by more than
//! `lag.tolerance` records. A lag that is high but stable or shrinking passes: the consumers keep up.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{Offset, TopicPartitionList};

use crate::client::config::{self as librdkafka_conf, create, Created};
use crate::client::context::ClientCtx;
use crate::client::metadata::{self, Fetch};
use crate::client::retry;
use crate::client::settings::{number, require_bootstrap, required, servers, split, Split};
use crate::consumer::settings::{candidates, translate_all};
use crate::error::{Code, EngineError};

/// Sampler keys of the lag monitor that are not librdkafka properties.
pub const LAG_KEYS: &[&str] = &[
    "topic",
    "lag.windows",
    "lag.tolerance",
    "lag.variable",
    "timeout.ms",
    "extra.properties",
    "thread.number",
    "thread.count",
];

/// What the lag monitor watches and how it judges.
#[derive(Debug, Clone)]
pub struct LagSettings {
    /// The topic whose lag is read.
    pub topic: String,
    /// The consumers' group.
    pub group: String,
    /// The verdict fails when the total lag grew in each of the last `windows` samples ...
    pub windows: u32,
    /// ... by more than `tolerance` records.
    pub tolerance: i64,
    /// Bound on each metadata and offset request.
    pub timeout: Duration,
    /// `isolation.level=read_committed`: the lag is counted to the last-stable offset, not the high watermark.
    pub read_committed: bool,
    /// The consumers' properties without `isolation.level` (the monitor reads with both levels).
    pub client: BTreeMap<String, String>,
    /// Notes for the log: settings that were translated or are ignored.
    pub warnings: Vec<String>,
}

/// Parses the lag monitor's parameters.
pub fn parse_lag(pairs: &[(String, String)]) -> Result<LagSettings, EngineError> {
    let Split { sampler, explicit } = split(pairs, LAG_KEYS)?;
    require_bootstrap(&explicit)?;
    let topic = required(&sampler, "topic", "set the topic whose consumer lag is watched")?;
    crate::client::limits::check_topic(&topic)?;
    let mut warnings = Vec::new();
    let mut client = translate_all(explicit, &mut warnings)?;
    let group = client.get("group.id").cloned().ok_or_else(|| {
        EngineError::config("group.id: missing; set the consumer group whose lag is watched (the consumers' group.id)")
    })?;
    // The default is librdkafka's, so that the lag is counted as this project's consumers read.
    let read_committed = match client.remove("isolation.level").as_deref() {
        Some("read_uncommitted") => false,
        None | Some("read_committed") => true,
        Some(other) => {
            return Err(EngineError::config(format!(
                "isolation.level: '{}' is not valid; use read_committed (the default, librdkafka's: lag counted to \
                 the last-stable offset, what read_committed consumers can read) or read_uncommitted (lag counted to \
                 the high watermark)",
                crate::echo::clip(other)
            )))
        }
    };
    // The monitor only reads: it never joins the group nor commits.
    client.insert("enable.auto.commit".into(), "false".into());
    client.entry("client.id".into()).or_insert_with(|| "jmeter-kafka-native-lag".into());
    librdkafka_conf::validate(&client, &candidates(LAG_KEYS))?;
    Ok(LagSettings {
        topic,
        group,
        windows: number(&sampler, "lag.windows", 3u32, 1, 1000)?,
        tolerance: number(&sampler, "lag.tolerance", 0i64, 0, i64::MAX)?,
        timeout: Duration::from_millis(number(&sampler, "timeout.ms", 5000u64, 1, 3_600_000)?),
        read_committed,
        client,
        warnings,
    })
}

/// One partition's lag in a lag sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionLag {
    /// The partition.
    pub partition: i32,
    /// The group's committed offset, None if it has committed nothing for this partition.
    pub committed: Option<i64>,
    /// The high watermark.
    pub end: i64,
    /// The last-stable offset: the first offset of the oldest open transaction, else the high watermark.
    pub stable: i64,
    /// What the group has still to read: to the last-stable offset with read_committed, else to the high
    /// watermark; from the low watermark when nothing is committed; never below 0.
    pub lag: i64,
}

/// One lag sample; the default is an empty reading (no partition, no growth, no error).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LagOutcome {
    /// The group's total lag over the topic's partitions.
    pub total: i64,
    /// Each partition's figures.
    pub partitions: Vec<PartitionLag>,
    /// Change of the total since the previous sample (None for the first one).
    pub growth: Option<i64>,
    /// How many of the last samples in a row grew by more than the tolerance.
    pub growing_windows: u32,
    /// Time the reading took.
    pub elapsed: Duration,
    /// LAG_GROWING, or why the lag could not be read.
    pub error: Option<EngineError>,
    /// Why the lag will not go down by consuming: open transactions holding last-stable offsets.
    pub note: Option<String>,
}

impl LagOutcome {
    /// `p0=12 p1=0 (no commit: p2=5)`: per partition, for the response message.
    pub fn partitions_text(&self) -> String {
        let mut text = String::new();
        for p in &self.partitions {
            if !text.is_empty() {
                text.push(' ');
            }
            let _ = write!(text, "p{}={}", p.partition, p.lag);
            if p.committed.is_none() {
                text.push_str("(no commit)");
            }
        }
        text
    }
}

/// The lag monitor of one JMeter thread (usually the only thread of a small "lag" thread group).
pub struct LagMonitor {
    consumer: Created<BaseConsumer<ClientCtx>>,
    settings: LagSettings,
    /// Reads the last-stable offsets (librdkafka asks for the end offsets with the consumer's isolation level);
    /// `consumer` reads with read_uncommitted, so its end offsets are the high watermarks.
    stable: Created<BaseConsumer<ClientCtx>>,
    /// Totals of the last `windows + 1` samples, oldest first.
    history: VecDeque<i64>,
    /// By partition: the last-stable offset last seen held behind the high watermark, and in how many samples in a
    /// row it stayed there.
    held: BTreeMap<i32, (i64, u32)>,
}

impl LagMonitor {
    /// Creates the monitor's consumer (it connects at the first sample).
    pub fn open(settings: LagSettings) -> Result<LagMonitor, EngineError> {
        for w in &settings.warnings {
            log::warn!("{w}");
        }
        let with = |level: &str| {
            let mut client = settings.client.clone();
            client.insert("isolation.level".into(), level.into());
            create(&client, ClientCtx::default(), "lag monitor")
        };
        let consumer = with("read_uncommitted")?;
        let stable = with("read_committed")?;
        Ok(LagMonitor { consumer, stable, settings, history: VecDeque::new(), held: BTreeMap::new() })
    }

    /// Reads the group's lag now and applies the verdict.
    pub fn sample(&mut self) -> LagOutcome {
        let start = Instant::now();
        // Serve events queued on the (never subscribed) consumer, so they do not pile up.
        let _ = self.consumer.poll(Duration::ZERO);
        let _ = self.stable.poll(Duration::ZERO);
        let (partitions, error) = match self.read() {
            Ok(p) => (p, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        let mut outcome = LagOutcome {
            total: partitions.iter().map(|p| p.lag).sum(),
            partitions,
            elapsed: start.elapsed(),
            error,
            ..LagOutcome::default()
        };
        if outcome.error.is_none() {
            outcome.note = self.held_back(&outcome.partitions);
            self.verdict(&mut outcome);
        }
        outcome
    }

    /// The note on partitions whose last-stable offset an open transaction holds behind the high watermark (None
    /// when there is none), remembering for how many samples in a row each stayed at the same offset.
    fn held_back(&mut self, partitions: &[PartitionLag]) -> Option<String> {
        let held: Vec<&PartitionLag> = partitions.iter().filter(|p| p.stable < p.end).collect();
        self.held.retain(|p, _| held.iter().any(|h| h.partition == *p));
        if held.is_empty() {
            return None;
        }
        const NAMED: usize = 4;
        let mut items = Vec::new();
        for p in &held {
            let entry = self.held.entry(p.partition).or_insert((p.stable, 0));
            if entry.0 != p.stable {
                *entry = (p.stable, 0);
            }
            entry.1 += 1;
            if items.len() < NAMED {
                let streak = if entry.1 > 1 { format!(", for {} samples in a row", entry.1) } else { String::new() };
                items.push(format!(
                    "the last-stable offset of p{} at {} while its high watermark is {} ({} record(s) held{streak})",
                    p.partition,
                    p.stable,
                    p.end,
                    p.end - p.stable
                ));
            }
        }
        if held.len() > NAMED {
            items.push(format!("{} more partition(s)", held.len() - NAMED));
        }
        let counted = if self.settings.read_committed {
            "the lag is counted to the last-stable offset (isolation.level=read_committed)"
        } else {
            "the lag is counted to the high watermark (isolation.level=read_uncommitted)"
        };
        Some(format!(
            "an open transaction holds {}: read_committed consumers cannot read past a last-stable offset until its \
             transaction commits or aborts (a producer that died within a transaction: the broker aborts it after \
             the producer's transaction.timeout.ms); {counted}",
            items.join("; ")
        ))
    }

    fn verdict(&mut self, outcome: &mut LagOutcome) {
        let windows = self.settings.windows as usize;
        self.history.push_back(outcome.total);
        while self.history.len() > windows + 1 {
            self.history.pop_front();
        }
        let h: Vec<i64> = self.history.iter().copied().collect();
        outcome.growth = (h.len() >= 2).then(|| h[h.len() - 1] - h[h.len() - 2]);
        outcome.growing_windows =
            h.windows(2).rev().take_while(|w| w[1] - w[0] > self.settings.tolerance).count() as u32;
        if outcome.growing_windows as usize >= windows {
            let trail: Vec<String> = h.iter().map(i64::to_string).collect();
            outcome.error = Some(EngineError::new(
                Code::LagGrowing,
                format!(
                    "consumer group '{}' is not keeping up: lag grew in each of the last {windows} samples by more than \
                     {} (lag.tolerance): {}",
                    self.settings.group,
                    self.settings.tolerance,
                    trail.join(" → ")
                ),
            ));
        }
    }

    fn read(&self) -> Result<Vec<PartitionLag>, EngineError> {
        // The monitor's consumer reads no records, so nothing else serves its queue: librdkafka's events (an
        // OAUTHBEARER token refresh among them) are handled here, once per sample, without waiting.
        let _ = self.consumer.poll(Duration::ZERO);
        let s = &self.settings;
        let servers = servers(&s.client);
        let kafka = |e: rdkafka::error::KafkaError| EngineError::from_kafka(&e);
        let fetch = Fetch { servers, timeout: s.timeout, advice: "" };
        let ids = metadata::topic_partitions(&*self.consumer, &s.topic, Duration::ZERO, fetch)?.ok_or_else(|| {
            EngineError::new(
                Code::UnknownTopicOrPart,
                format!("topic '{}' does not exist on {servers}; check the lag sampler's topic", s.topic),
            )
        })?;
        let mut tpl = TopicPartitionList::new();
        for p in &ids {
            tpl.add_partition(&s.topic, *p);
        }
        // A coordinator or leader being elected (a fresh broker, a topic created a moment ago) is waited for
        // within timeout.ms instead of failing the reading.
        let deadline = Instant::now() + s.timeout;
        let (committed, _) = retry::until_answered(deadline, |left| self.consumer.committed_offsets(tpl.clone(), left))
            .map_err(|(e, _)| {
                let mut err = EngineError::from_kafka(&e);
                err.message = format!("reading the committed offsets of group '{}' failed: {}", s.group, err.message);
                err
            })?;
        let mut lags = Vec::with_capacity(ids.len());
        for p in ids {
            // The last-stable offset first: it never passes the high watermark read after it.
            let ((_, stable), _) =
                retry::until_answered(deadline, |left| self.stable.fetch_watermarks(&s.topic, p, left))
                    .map_err(|(e, _)| kafka(e))?;
            let ((low, high), _) =
                retry::until_answered(deadline, |left| self.consumer.fetch_watermarks(&s.topic, p, left))
                    .map_err(|(e, _)| kafka(e))?;
            let committed = match committed.find_partition(&s.topic, p).map(|e| e.offset()) {
                Some(Offset::Offset(o)) => Some(o),
                _ => None,
            };
            let end = if s.read_committed { stable } else { high };
            let lag = (end - committed.unwrap_or(low)).max(0);
            lags.push(PartitionLag { partition: p, committed, end: high, stable: stable.min(high), lag });
        }
        if lags.iter().all(|p| p.committed.is_none()) && !self.group_exists()? {
            return Err(EngineError::new(
                Code::GroupNotFound,
                format!(
                    "consumer group '{}' does not exist on {servers}: no member has joined it and it has committed no \
                     offset for topic '{}'; check group.id, and start the lag monitor after the consumers (a startup \
                     delay longer than their first commit)",
                    s.group, s.topic
                ),
            ));
        }
        Ok(lags)
    }

    /// True when the broker knows the group (it has members, or offsets of some topic).
    fn group_exists(&self) -> Result<bool, EngineError> {
        let groups = self
            .consumer
            .fetch_group_list(Some(&self.settings.group), self.settings.timeout)
            .map_err(|e| EngineError::from_kafka(&e))?;
        Ok(groups.groups().iter().any(|g| g.name() == self.settings.group && g.state() != "Dead"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::settings::test_pairs;

    fn monitor(windows: u32, tolerance: i64) -> LagMonitor {
        let (windows, tolerance) = (windows.to_string(), tolerance.to_string());
        let pairs = test_pairs(
            &[("topic", "t"), ("group.id", "g"), ("bootstrap.servers", "127.0.0.1:1")],
            &[("lag.windows", &windows), ("lag.tolerance", &tolerance)],
        );
        LagMonitor::open(parse_lag(&pairs).unwrap()).unwrap()
    }

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        test_pairs(&[("bootstrap.servers", "127.0.0.1:9092"), ("topic", "t"), ("group.id", "g")], items)
    }

    #[test]
    fn lag_settings() {
        let s = parse_lag(&pairs(&[("lag.windows", "4"), ("lag.tolerance", "100")])).unwrap();
        assert_eq!((s.windows, s.tolerance, s.group.as_str()), (4, 100, "g"));
        let m = parse_lag(&pairs(&[])[..2]).unwrap_err().message;
        assert!(m.starts_with("group.id: missing"), "{m}");
        let m = parse_lag(&pairs(&[("lag.windows", "0")])).unwrap_err().message;
        assert!(m.starts_with("lag.windows: '0'"), "{m}");
    }

    fn judge(m: &mut LagMonitor, total: i64) -> LagOutcome {
        let mut o = LagOutcome { total, ..LagOutcome::default() };
        m.verdict(&mut o);
        o
    }

    #[test]
    fn fails_only_after_growth_in_every_window() {
        let mut m = monitor(3, 10);
        for total in [0, 100, 200] {
            assert!(judge(&mut m, total).error.is_none());
        }
        let o = judge(&mut m, 300);
        assert_eq!((o.growth, o.growing_windows), (Some(100), 3));
        let e = o.error.unwrap();
        assert_eq!(e.code, Code::LagGrowing);
        assert!(e.message.contains("0 → 100 → 200 → 300"), "{}", e.message);
        // A sample that does not grow by more than the tolerance resets the count.
        let o = judge(&mut m, 305);
        assert_eq!((o.growing_windows, o.error), (0, None));
    }

    #[test]
    fn high_but_stable_lag_passes() {
        let mut m = monitor(2, 0);
        for total in [5000, 5000, 4000, 4500, 4400, 4400] {
            let o = judge(&mut m, total);
            assert!(o.error.is_none(), "{total}: {o:?}");
        }
    }

    #[test]
    fn partitions_text_marks_missing_commits() {
        let o = LagOutcome {
            total: 7,
            partitions: vec![
                PartitionLag { partition: 0, committed: Some(10), end: 12, stable: 12, lag: 2 },
                PartitionLag { partition: 1, committed: None, end: 5, stable: 5, lag: 5 },
            ],
            ..LagOutcome::default()
        };
        assert_eq!(o.partitions_text(), "p0=2 p1=5(no commit)");
    }

    #[test]
    fn isolation_level_chooses_the_end_offset() {
        assert!(parse_lag(&pairs(&[])).unwrap().read_committed);
        let s = parse_lag(&pairs(&[("isolation.level", "read_uncommitted")])).unwrap();
        assert!(!s.read_committed && !s.client.contains_key("isolation.level"));
        let m = parse_lag(&pairs(&[("isolation.level", "banana")])).unwrap_err().message;
        assert!(m.starts_with("isolation.level: 'banana' is not valid; use read_committed"), "{m}");
    }

    #[test]
    fn an_open_transaction_is_explained_and_its_streak_counted() {
        let mut m = monitor(3, 0);
        m.settings.read_committed = false;
        let at = |stable: i64, end: i64| {
            vec![
                PartitionLag { partition: 0, committed: Some(100), end, stable, lag: end - 100 },
                PartitionLag { partition: 1, committed: Some(7), end: 7, stable: 7, lag: 0 },
            ]
        };
        assert_eq!(m.held_back(&at(150, 150)), None);
        let first = m.held_back(&at(100, 150)).unwrap();
        assert!(
            first.starts_with(
                "an open transaction holds the last-stable offset of p0 at 100 while its high watermark is 150 (50 \
                 record(s) held): read_committed consumers cannot read past"
            ),
            "{first}"
        );
        assert!(
            first.ends_with("the lag is counted to the high watermark (isolation.level=read_uncommitted)"),
            "{first}"
        );
        let second = m.held_back(&at(100, 160)).unwrap();
        assert!(second.contains("is 160 (60 record(s) held, for 2 samples in a row)"), "{second}");
        // The transaction ended: the next one that holds the partition starts a new streak.
        assert_eq!(m.held_back(&at(160, 160)), None);
        assert!(!m.held_back(&at(160, 170)).unwrap().contains("in a row"));
    }
}
