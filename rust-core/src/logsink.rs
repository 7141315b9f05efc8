//! Log lines from the engine and librdkafka, queued until a JMeter thread drains them into jmeter.log.
//!
//! librdkafka logs from its own threads; calling into the JVM from there would need attaching those
//! threads. Instead lines wait here and the JMeter thread collects them after a sample, when `send`
//! tells it some are pending (no extra JNI crossing otherwise).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use log::{Level, LevelFilter, Log, Metadata, Record};

/// Above this many undrained lines the oldest are dropped (and counted), so a silent consumer cannot grow memory.
const CAPACITY: usize = 10_000;

struct Sink {
    lines: Mutex<VecDeque<String>>,
    pending: AtomicUsize,
    dropped: AtomicUsize,
}

static SINK: Sink =
    Sink { lines: Mutex::new(VecDeque::new()), pending: AtomicUsize::new(0), dropped: AtomicUsize::new(0) };

impl Log for Sink {
    fn enabled(&self, metadata: &Metadata) -> bool {
        metadata.level() <= Level::Info
    }

    fn log(&self, record: &Record) {
        if !self.enabled(record.metadata()) || closed_twice(record) {
            return;
        }
        let level = match record.level() {
            Level::Error => "ERROR",
            Level::Warn => "WARN",
            Level::Info => "INFO",
            _ => "DEBUG",
        };
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() >= CAPACITY {
            lines.pop_front();
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        lines.push_back(format!("{level}\t{}", record.args()));
        self.pending.store(lines.len(), Ordering::Release);
    }

    fn flush(&self) {}
}

/// rdkafka's consumer drop closes the consumer's queue again after the engine's bounded close has already done
/// it (consumer::close_bounded); librdkafka then answers that the handle is being destroyed, which rdkafka logs
/// as an error although nothing failed.
fn closed_twice(record: &Record) -> bool {
    if !record.target().starts_with("rdkafka::consumer") {
        return false;
    }
    let text = record.args().to_string();
    text.starts_with("Failed to close consumer queue on drop") && text.contains("BrokerDestroy")
}

/// Installs the sink as the process's logger; later calls (or another logger already set) are harmless.
pub fn install() {
    if log::set_logger(&SINK).is_ok() {
        log::set_max_level(LevelFilter::Info);
    }
}

/// Number of lines waiting; a cheap atomic read for the hot path.
pub fn pending() -> usize {
    SINK.pending.load(Ordering::Acquire)
}

/// Takes all waiting lines, joined by '\n', or None if there are none.
pub fn drain() -> Option<String> {
    let mut lines = SINK.lines.lock().unwrap_or_else(|p| p.into_inner());
    let dropped = SINK.dropped.swap(0, Ordering::Relaxed);
    if lines.is_empty() && dropped == 0 {
        return None;
    }
    let mut out: Vec<String> = lines.drain(..).collect();
    if dropped > 0 {
        out.push(format!("WARN\t{dropped} log line(s) were dropped because nobody drained them"));
    }
    SINK.pending.store(0, Ordering::Release);
    Some(out.join("\n"))
}
