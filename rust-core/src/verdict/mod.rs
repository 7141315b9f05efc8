//! Judging a run for CI: `kafka.verdict`'s pass/fail criteria ([`criteria`]), the run judged once after JMeter's end
//! of test ([`judgement`]), the comparison with a stored summary ([`baseline`], also behind `scripts/compare`) and
//! the JUnit XML report ([`junit`]).

pub mod baseline;
pub mod criteria;
pub mod judgement;
pub mod junit;
