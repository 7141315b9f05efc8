//! Native methods of `io.kafkanative.jmeter.NativeVerdict`: `kafka.verdict` checked at test start, the run judged
//! at its end ([`crate::verdict::judgement`]), and the process's malloc figure for the load generator's health.

use jni::objects::{JLongArray, JObjectArray, JString};
use jni::sys::jlong;
use jni::Env;

use super::{opt_string, BridgeError, ThrowPolicy};
use crate::layout;
use crate::run::report_paths::{Input, Kind, Report};
use crate::verdict::judgement::{Judgement, Request};

/// A Java string, None when null or blank (a property left empty means "not set").
fn setting(env: &Env, s: &JString) -> Result<Option<String>, BridgeError> {
    Ok(opt_string(env, s)?.filter(|s| !s.trim().is_empty()))
}

static_native! {
    /// At test start (see `NativeVerdict.prepare`): null when the verdict, the report paths and the baseline are fine,
    /// else what is wrong. `reports` is [setting, path, ...] (a setting naming "junit" is the JUnit report, the others
    /// summaries), `inputs` [what it is, path, ...].
    fn Java_io_kafkanative_jmeter_NativeVerdict_prepare(
        env,
        spec: JString<'l>,
        baseline: JString<'l>,
        reports: JObjectArray<'l, JString<'l>>,
        inputs: JObjectArray<'l, JString<'l>>,
    ) -> JString<'l> {
        super::text(env, |env| {
            let request = Request {
                spec: setting(env, &spec)?.unwrap_or_default(),
                baseline: setting(env, &baseline)?,
                ..Request::default()
            };
            let reports: Vec<Report> = super::config_pairs(env, &reports)?
                .into_iter()
                .filter(|(_, path)| !path.trim().is_empty())
                .map(|(property, path)| {
                    let kind = if property.to_lowercase().contains("junit") { Kind::Junit } else { Kind::Summary };
                    Report { property, path: path.trim().to_string(), kind }
                })
                .collect();
            let inputs: Vec<Input> = super::config_pairs(env, &inputs)?
                .into_iter()
                .filter(|(_, path)| !path.trim().is_empty())
                .map(|(what, path)| Input { what, path: path.trim().to_string() })
                .collect();
            Ok(super::RUN.judgement.prepare(&request, &reports, &inputs).err())
        })
    }
}

static_native! {
    /// What the test is (JSON: plan, samplers and their main settings), for the summaries' `test` block.
    fn Java_io_kafkanative_jmeter_NativeVerdict_identify(mut env, identity: JString<'l>) {
        env.with_env(|env| -> Result<(), BridgeError> {
            let identity = setting(env, &identity)?
                .map(|i| serde_json::from_str(&i).unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() })))
                .unwrap_or(serde_json::Value::Null);
            super::RUN.judgement.identify(identity);
            Ok(())
        })
        .resolve::<ThrowPolicy>()
    }
}

static_native! {
    /// Bytes the process's malloc has handed out and not freed (glibc's mallinfo2: arenas plus mmapped blocks): the
    /// native memory of librdkafka, the engine and the JVM's own mallocs, which the JVM's heap figures do not show.
    fn Java_io_kafkanative_jmeter_NativeVerdict_mallocInUse(mut env) -> jlong {
        env.with_env(|_env| -> Result<jlong, BridgeError> {
            // SAFETY: mallinfo2 only reads the allocator's counters (it takes the arena locks itself).
            let info = unsafe { libc::mallinfo2() };
            Ok((info.uordblks + info.hblkhd) as jlong)
        })
        .resolve::<ThrowPolicy>()
    }
}

layout!(LAYOUT, slots(j: Judgement) {
    criteria => j.criteria,
    failed => j.failed,
    exit_code => j.exit_code(),
});

static_native! {
    /// Judges the run (see `NativeVerdict.judge`).
    fn Java_io_kafkanative_jmeter_NativeVerdict_judge(
        env,
        spec: JString<'l>,
        baseline: JString<'l>,
        junit: JString<'l>,
        generator: JString<'l>,
        out: JLongArray<'l>,
    ) -> JString<'l> {
        super::text(env, |env| {
            let generator = setting(env, &generator)?
                .map(|g| serde_json::from_str(&g).unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() })))
                .unwrap_or(serde_json::Value::Null);
            let request = Request {
                spec: setting(env, &spec)?.unwrap_or_default(),
                baseline: setting(env, &baseline)?,
                junit: setting(env, &junit)?,
                generator,
            };
            let judgement = super::RUN.judgement.judge(&request);
            out.set_region(env, 0, &slots(&judgement))?;
            Ok(judgement.text)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_array_follows_the_layout() {
        let j = Judgement { text: None, criteria: 3, failed: 1 };
        let exit = crate::verdict::criteria::FAILED_EXIT_CODE as jlong;
        super::super::assert_layout(LAYOUT, &slots(&j), &[("criteria", 3), ("failed", 1), ("exit_code", exit)]);
    }
}
