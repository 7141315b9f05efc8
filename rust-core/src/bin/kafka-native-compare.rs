//! `scripts/compare A.json B.json`: two runs' summaries side by side (throughput, p50, p99 and their change),
//! with the same comparison `kafka.verdict.baseline` judges, so the table and the verdict agree.

use std::process::ExitCode;

use kafka_native::verdict::baseline;

const USAGE: &str = "usage: scripts/compare BEFORE.json AFTER.json [--max-regression PCT]
  BEFORE, AFTER   summary files of two runs (kafka.summary.file or kafka.consumer.summary.file), of the same kind
  --max-regression  exit 1 when any figure got worse by more than PCT % (as kafka.verdict's regression<PCT%)
Exit code: 0, 1 on a regression beyond --max-regression, 2 on bad usage or unreadable files.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let (mut files, mut max) = (Vec::new(), None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--max-regression" {
            match it.next().and_then(|v| v.trim_end_matches('%').parse::<f64>().ok()) {
                Some(v) => max = Some(v),
                None => return usage("--max-regression needs a number of percent"),
            }
        } else {
            files.push(a.as_str());
        }
    }
    let [before, after] = files[..] else { return usage("give exactly two summary files") };
    let rows = match (baseline::read(before), baseline::read(after)) {
        (Ok(b), Ok(a)) => baseline::compare(&b, &a),
        (Err(e), _) | (_, Err(e)) => Err(e),
    };
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => {
            eprintln!("compare: {e}");
            return ExitCode::from(2);
        }
    };
    print!("{}", baseline::table(before, after, &rows));
    let worst = rows.iter().map(|r| r.worse_pct).fold(f64::MIN, f64::max);
    match max {
        Some(limit) if worst >= limit => {
            println!("regression: {worst:.1}% worse (limit {limit}%): FAIL");
            ExitCode::from(1)
        }
        Some(limit) => {
            println!("regression: {worst:.1}% at worst (limit {limit}%): PASS");
            ExitCode::SUCCESS
        }
        None => ExitCode::SUCCESS,
    }
}

fn usage(why: &str) -> ExitCode {
    eprintln!("compare: {why}\n{USAGE}");
    ExitCode::from(2)
}
