//! Native methods of `io.kafkanative.jmeter.NativeVerdict`: `kafka.verdict` checked at test start and the run
//! judged at its end ([`crate::judgement`]).

use jni::objects::{JClass, JLongArray, JString};
use jni::sys::jlong;
use jni::{Env, EnvUnowned};

use super::{new_string, BridgeError, ThrowPolicy};
use crate::judgement::{self, Request};
use crate::verdict;

fn opt_string(env: &Env, s: &JString) -> Result<Option<String>, BridgeError> {
    if s.is_null() {
        return Ok(None);
    }
    Ok(Some(s.try_to_string(env)?).filter(|s| !s.trim().is_empty()))
}

/// Null when `spec` is a valid `kafka.verdict`, else what is wrong with it (listing the valid metrics).
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeVerdict_check<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    spec: JString<'l>,
) -> JString<'l> {
    env.with_env(|env| -> Result<JString<'l>, BridgeError> {
        let spec = opt_string(env, &spec)?.unwrap_or_default();
        new_string(env, verdict::parse(&spec).err().map(|e| e.message))
    })
    .resolve::<ThrowPolicy>()
}

/// Bytes the process's malloc has handed out and not freed (glibc's mallinfo2: arenas plus mmapped blocks): the
/// native memory of librdkafka, the engine and the JVM's own mallocs, which the JVM's heap figures do not show.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeVerdict_mallocInUse<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, BridgeError> {
        // SAFETY: mallinfo2 only reads the allocator's counters (it takes the arena locks itself).
        let info = unsafe { libc::mallinfo2() };
        Ok((info.uordblks + info.hblkhd) as jlong)
    })
    .resolve::<ThrowPolicy>()
}

/// Output layout shared with `NativeVerdict.judge` in Java: see its Javadoc.
const OUT_LEN: usize = 3;

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeVerdict_judge<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    spec: JString<'l>,
    baseline: JString<'l>,
    junit: JString<'l>,
    generator: JString<'l>,
    out: JLongArray<'l>,
) -> JString<'l> {
    env.with_env(|env| -> Result<JString<'l>, BridgeError> {
        let generator = opt_string(env, &generator)?
            .map(|g| serde_json::from_str(&g).unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() })))
            .unwrap_or(serde_json::Value::Null);
        let request = Request {
            spec: opt_string(env, &spec)?.unwrap_or_default(),
            baseline: opt_string(env, &baseline)?,
            junit: opt_string(env, &junit)?,
            generator,
        };
        let judgement = judgement::judge(&request);
        let numbers: [jlong; OUT_LEN] =
            [judgement.criteria as jlong, judgement.failed as jlong, judgement.exit_code() as jlong];
        out.set_region(env, 0, &numbers)?;
        new_string(env, judgement.text)
    })
    .resolve::<ThrowPolicy>()
}
