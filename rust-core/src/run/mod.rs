//! One run (one JMeter test) as a whole: its totals and end-of-test reports ([`report`]), where the send→ack time
//! went ([`breakdown`]), and the report files checked at test start so that none replaces a file it should not
//! ([`report_paths`]).

pub mod breakdown;
pub mod report;
pub mod report_paths;
