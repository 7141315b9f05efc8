//! The verdict as a JUnit XML report (`kafka.verdict.junit`): one test case per criterion, which Jenkins'
//! JUnit plugin and GitLab's `artifacts:reports:junit` read. Written with quick-xml, which escapes text and
//! attribute values (criteria hold `<`, `>` and `&`).

use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

use super::criteria::Outcome;

/// The report's XML text; `invalid` (why `kafka.verdict` could not be parsed) becomes a failed case of its own,
/// `system_out` (the run's report lines) goes into the suite's `<system-out>`.
pub fn report(outcomes: &[Outcome], invalid: Option<&str>, system_out: &str) -> String {
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 2);
    let failures = (outcomes.iter().filter(|o| !o.passed).count() + invalid.is_some() as usize).to_string();
    let tests = (outcomes.len() + invalid.is_some() as usize).to_string();
    // Writing into a Vec cannot fail.
    let _ = writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)));
    let _ = writer
        .create_element("testsuites")
        .with_attributes([("name", "kafka.verdict"), ("tests", tests.as_str()), ("failures", failures.as_str())])
        .write_inner_content(|w| {
            w.create_element("testsuite")
                .with_attributes([
                    ("name", "kafka.verdict"),
                    ("tests", tests.as_str()),
                    ("failures", failures.as_str()),
                    ("errors", "0"),
                    ("skipped", "0"),
                ])
                .write_inner_content(|w| {
                    for o in outcomes {
                        let case = w.create_element("testcase").with_attributes([
                            ("classname", "kafka.verdict"),
                            ("name", o.criterion.as_str()),
                            ("time", "0"),
                        ]);
                        if o.passed {
                            case.write_empty()?;
                        } else {
                            let kind = if o.value.is_ok() { "threshold" } else { "not-measured" };
                            let line = o.line();
                            case.write_inner_content(|w| {
                                w.create_element("failure")
                                    .with_attributes([("message", line.as_str()), ("type", kind)])
                                    .write_text_content(BytesText::new(&line))?;
                                Ok(())
                            })?;
                        }
                    }
                    if let Some(why) = invalid {
                        w.create_element("testcase")
                            .with_attributes([("classname", "kafka.verdict"), ("name", "kafka.verdict"), ("time", "0")])
                            .write_inner_content(|w| {
                                w.create_element("failure")
                                    .with_attributes([("message", why), ("type", "invalid")])
                                    .write_text_content(BytesText::new(why))?;
                                Ok(())
                            })?;
                    }
                    w.create_element("system-out").write_text_content(BytesText::new(system_out))?;
                    Ok(())
                })?;
            Ok(())
        });
    String::from_utf8(writer.into_inner()).expect("quick-xml writes the UTF-8 it was given")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::criteria::{evaluate, parse};
    use serde_json::json;

    #[test]
    fn one_case_per_criterion_with_escaped_text() {
        let run = json!({ "producer": { "sent": 10, "acked": 10, "failed": 0, "latency_us": { "p99": 80000 } } });
        let outcomes = evaluate(&parse("p99<50ms; error.rate<1%; audit.missing=0").unwrap(), &run);
        let xml = report(&outcomes, None, "10 records sent & <done>");
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"), "{xml}");
        assert!(
            xml.contains(r#"<testsuite name="kafka.verdict" tests="3" failures="2" errors="0" skipped="0">"#),
            "{xml}"
        );
        assert!(xml.contains(r#"<testcase classname="kafka.verdict" name="error.rate&lt;1%" time="0"/>"#), "{xml}");
        assert!(xml.contains(r#"type="threshold">p99 = 80 ms (threshold &lt; 50 ms): FAIL</failure>"#), "{xml}");
        assert!(xml.contains(r#"type="not-measured">audit.missing not measured"#), "{xml}");
        assert!(xml.contains("10 records sent &amp; &lt;done&gt;"), "{xml}");
        assert_eq!(xml.matches("<testcase ").count(), 3);
        let invalid = report(&[], Some("kafka.verdict: 'p98<1': unknown metric"), "");
        assert!(
            invalid.contains(r#"tests="1" failures="1""#)
                && invalid.contains(r#"type="invalid">kafka.verdict: &apos;p98&lt;1&apos;"#),
            "{invalid}"
        );
    }
}
