//! Report files never destroy data. A report the engine writes (`kafka.summary.file`,
//! `kafka.consumer.summary.file`, `kafka.verdict.junit`) is refused at test start, before any load and before any
//! file is removed, when its path names another report, the baseline, the test plan, or an existing file that is not
//! a report of the same kind written by the engine (the `-l` JTL is one: JMeter opens it before the first sampler's
//! setup, so it exists with its header by then).
//!
//! "Written by the engine" is read from the file's beginning (at most [`PREFIX_LIMIT`] bytes, a regular file only:
//! a FIFO or a device is never opened): a summary carries [`SUMMARY_FORMAT`] in its first key (`_format`, first in
//! the alphabetical order the summaries are written in), a summary from before that key has `run_id` and `perf_line`
//! (producer) or `perf_header` (consumer), a JUnit report has the suite name `kafka.verdict`.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The `_format` value of every summary the engine writes.
pub const SUMMARY_FORMAT: &str = "kafka-native summary 1";

/// How much of an existing file is read to tell whether it is one of ours.
pub const PREFIX_LIMIT: u64 = 1 << 20;

/// What a report file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A JSON summary.
    Summary,
    /// The verdict's JUnit XML.
    Junit,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Summary => "summary (JSON)",
            Kind::Junit => "verdict JUnit report",
        }
    }

    /// Whether the beginning of a file is a report of this kind.
    fn is_ours(self, head: &str) -> bool {
        match self {
            Kind::Summary => {
                head.trim_start().starts_with('{')
                    && (head.contains(&format!("\"_format\": \"{SUMMARY_FORMAT}\""))
                        || (head.contains("\"run_id\"") && head.contains("\"perf_line\""))
                        || head.contains("\"perf_header\""))
            }
            Kind::Junit => head.contains("<testsuite name=\"kafka.verdict\""),
        }
    }
}

/// A report this run will write.
#[derive(Debug, Clone)]
pub struct Report {
    /// The property (or plan field) that names it, for messages.
    pub property: String,
    /// The path as given.
    pub path: String,
    /// What kind of report it is.
    pub kind: Kind,
}

/// A file that is an input of this run and no report may name (the plan, the baseline).
#[derive(Debug, Clone)]
pub struct Input {
    /// What it is, for messages (`the test plan (-t)`, `the baseline (kafka.verdict.baseline)`).
    pub what: String,
    /// The path as given.
    pub path: String,
}

/// The same file whatever the spelling (`./a.json`, `dir/../a.json`, a symbolic link): the canonical path of the
/// file, or of its folder when the file does not exist yet.
fn identity(path: &str) -> PathBuf {
    let p = Path::new(path);
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    let parent = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    match (parent.canonicalize(), p.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()),
    }
}

/// The first bytes of a regular file (None when it does not exist), or why it cannot be looked at.
fn head(path: &str) -> Result<Option<String>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot look at it: {e}")),
    };
    if !meta.is_file() {
        return Err("it exists and is not a regular file (a folder, a FIFO or a device)".into());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(PREFIX_LIMIT).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read it: {e}"))?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// The first line of a file's text, shortened and stripped of control characters, to say what the file is.
fn opening(head: &str) -> String {
    let line: String = head.lines().find(|l| !l.trim().is_empty()).unwrap_or("").chars().take(60).collect();
    line.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>().trim().to_string()
}

/// Checks every report against the others, the inputs and what is already on disk; the first problem found.
pub fn check(reports: &[Report], inputs: &[Input]) -> Result<(), String> {
    let ids: Vec<PathBuf> = reports.iter().map(|r| identity(&r.path)).collect();
    for (i, r) in reports.iter().enumerate() {
        if let Some(other) = (0..i).find(|&j| ids[j] == ids[i]) {
            return Err(format!(
                "{} and {} both name '{}': each report needs its own file (one would replace the other)",
                reports[other].property, r.property, r.path
            ));
        }
        if let Some(input) = inputs.iter().find(|input| identity(&input.path) == ids[i]) {
            let hint = if input.what.contains("baseline") {
                "; keep the previous summary under another name, e.g. cp summary.json baseline.json, and name that one"
            } else {
                ""
            };
            return Err(format!(
                "{} names '{}', which is {}: this run would replace it with its {}. Name another file{hint}",
                r.property,
                r.path,
                input.what,
                r.kind.noun()
            ));
        }
        match head(&r.path) {
            Ok(None) => {}
            // An empty file holds nothing to lose (a CI job may create the report file first).
            Ok(Some(text)) if text.is_empty() || r.kind.is_ours(&text) => {}
            Ok(Some(text)) => {
                let what = match opening(&text) {
                    o if o.is_empty() => "it holds only blank lines".to_string(),
                    o => format!("it begins with '{o}'"),
                };
                return Err(format!(
                    "{} names '{}', an existing file that is not a kafka-native {} ({what}): it is not replaced. Name \
                     a new file, or remove this one if it may be lost",
                    r.property,
                    r.path,
                    r.kind.noun()
                ));
            }
            Err(why) => return Err(format!("{} names '{}': {why}; name a regular file", r.property, r.path)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Dir(PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn dir(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("kn-report-paths-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn report(property: &str, path: &Path, kind: Kind) -> Report {
        Report { property: property.into(), path: path.to_str().unwrap().into(), kind }
    }

    #[test]
    fn new_files_and_our_own_reports_may_be_written() {
        let d = dir("ours");
        let summary = d.0.join("summary.json");
        let junit = d.0.join("junit.xml");
        let reports =
            [report("kafka.summary.file", &summary, Kind::Summary), report("kafka.verdict.junit", &junit, Kind::Junit)];
        assert_eq!(check(&reports, &[]), Ok(()));
        std::fs::write(&summary, format!("{{\n  \"_format\": \"{SUMMARY_FORMAT}\",\n  \"acked\": 1\n}}")).unwrap();
        std::fs::write(
            &junit,
            "<?xml version=\"1.0\"?>\n<testsuites>\n  <testsuite name=\"kafka.verdict\" tests=\"1\">",
        )
        .unwrap();
        assert_eq!(check(&reports, &[]), Ok(()));
        // A summary from before the _format key.
        std::fs::write(&summary, "{\n  \"acked\": 1,\n  \"perf_line\": \"1 records sent\",\n  \"run_id\": \"a\"\n}")
            .unwrap();
        assert_eq!(check(&reports, &[]), Ok(()));
    }

    #[test]
    fn other_files_reports_and_inputs_are_refused() {
        let d = dir("refused");
        let jtl = d.0.join("out.jtl");
        std::fs::write(&jtl, "timeStamp,elapsed,label,responseCode\n").unwrap();
        let e = check(&[report("kafka.summary.file", &jtl, Kind::Summary)], &[]).unwrap_err();
        assert!(
            e.contains("an existing file that is not a kafka-native summary (JSON) (it begins with 'timeStamp,elapsed"),
            "{e}"
        );
        // Our summary is not our JUnit report, nor the other way round.
        let summary = d.0.join("s.json");
        std::fs::write(&summary, format!("{{\n  \"_format\": \"{SUMMARY_FORMAT}\"\n}}")).unwrap();
        let e = check(&[report("kafka.verdict.junit", &summary, Kind::Junit)], &[]).unwrap_err();
        assert!(e.contains("not a kafka-native verdict JUnit report"), "{e}");
        // Two reports, one file (spelt two ways).
        let other = d.0.join("x").join("..").join("s.json");
        std::fs::create_dir_all(d.0.join("x")).unwrap();
        let e = check(
            &[
                report("kafka.summary.file", &summary, Kind::Summary),
                report("kafka.consumer.summary.file", &other, Kind::Summary),
            ],
            &[],
        )
        .unwrap_err();
        assert!(e.contains("kafka.summary.file and kafka.consumer.summary.file both name"), "{e}");
        // The baseline and the plan.
        let base =
            Input { what: "the baseline (kafka.verdict.baseline)".into(), path: summary.to_str().unwrap().into() };
        let e = check(&[report("kafka.summary.file", &summary, Kind::Summary)], &[base]).unwrap_err();
        assert!(e.contains("which is the baseline (kafka.verdict.baseline)") && e.contains("cp summary.json"), "{e}");
        let plan = d.0.join("plan.jmx");
        let input = Input { what: "the test plan (-t)".into(), path: plan.to_str().unwrap().into() };
        let e = check(&[report("kafka.verdict.junit", &plan, Kind::Junit)], &[input]).unwrap_err();
        assert!(e.contains("which is the test plan (-t)"), "{e}");
        // Not a regular file: never opened (a FIFO would block).
        let e = check(&[report("kafka.verdict.junit", &d.0, Kind::Junit)], &[]).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        let empty = d.0.join("empty.xml");
        std::fs::write(&empty, "").unwrap();
        assert_eq!(check(&[report("kafka.verdict.junit", &empty, Kind::Junit)], &[]), Ok(()), "nothing to lose");
    }
}
