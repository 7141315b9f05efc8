//! Asks librdkafka itself whether a property exists and accepts a value, so the engine never keeps
//! its own (soon outdated) list of librdkafka's properties.

use std::collections::BTreeMap;
use std::ffi::{CStr, CString};
use std::os::raw::c_char;

use once_cell::sync::Lazy;
use rdkafka::bindings as rd;

use crate::config::{is_secret, shown};
use crate::error::EngineError;
use crate::limits::{clip, ECHO};

/// Every property name librdkafka documents, aliases included (`linger.ms` is an alias, absent from a
/// configuration dump), read once from its own CONFIGURATION table.
pub fn property_names() -> Vec<String> {
    static NAMES: Lazy<Vec<String>> = Lazy::new(|| {
        properties_table()
            .lines()
            .filter_map(|line| line.split('|').next())
            .map(str::trim)
            .filter(|name| {
                !name.is_empty()
                    && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'_')
            })
            .map(str::to_string)
            .collect()
    });
    NAMES.clone()
}

/// The Markdown table `rd_kafka_conf_properties_show` prints, captured in memory.
fn properties_table() -> String {
    let mut buf: *mut c_char = std::ptr::null_mut();
    let mut len: libc::size_t = 0;
    // SAFETY: open_memstream gives a FILE* writing into a malloc'ed buffer that we read after fclose and free.
    unsafe {
        let file = libc::open_memstream(&mut buf, &mut len);
        if file.is_null() {
            return String::new();
        }
        rd::rd_kafka_conf_properties_show(file);
        libc::fclose(file);
        let bytes = std::slice::from_raw_parts(buf as *const u8, len);
        let text = String::from_utf8_lossy(bytes).into_owned();
        libc::free(buf as *mut libc::c_void);
        text
    }
}

/// Applies every property to a throw-away librdkafka configuration and turns the first refusal into
/// a message that names the key, says why, and suggests the closest valid name for an unknown one.
pub fn validate(props: &BTreeMap<String, String>, candidates: &[String]) -> Result<(), EngineError> {
    // Sizes first: librdkafka accepts values that later corrupt its memory or its requests.
    crate::limits::check_client(props)?;
    // SAFETY: the configuration object is created, used and destroyed within this function.
    unsafe {
        let conf = rd::rd_kafka_conf_new();
        let result = props.iter().try_for_each(|(k, v)| set_one(conf, k, v, candidates));
        rd::rd_kafka_conf_destroy(conf);
        result
    }
}

unsafe fn set_one(
    conf: *mut rd::rd_kafka_conf_t,
    key: &str,
    value: &str,
    candidates: &[String],
) -> Result<(), EngineError> {
    let (Ok(ckey), Ok(cvalue)) = (CString::new(key), CString::new(value)) else {
        return Err(EngineError::config(format!("{}: contains a NUL character", clip(&key.replace('\0', "\\0")))));
    };
    let mut errstr = [0 as c_char; 512];
    let res = rd::rd_kafka_conf_set(conf, ckey.as_ptr(), cvalue.as_ptr(), errstr.as_mut_ptr(), errstr.len());
    match res {
        rd::rd_kafka_conf_res_t::RD_KAFKA_CONF_OK => Ok(()),
        rd::rd_kafka_conf_res_t::RD_KAFKA_CONF_UNKNOWN => {
            let hint = match closest(key, candidates) {
                Some(name) => format!("did you mean {name}?"),
                None => "see librdkafka's CONFIGURATION.md for the names it accepts".to_string(),
            };
            Err(EngineError::config(format!("{}: unknown property; {hint}", clip(key))))
        }
        _ => {
            // librdkafka's explanation quotes the value: leave it out for secrets.
            let why = if is_secret(key) {
                "refused by librdkafka".to_string()
            } else {
                CStr::from_ptr(errstr.as_ptr()).to_string_lossy().into_owned()
            };
            Err(EngineError::config(format!("{key}: {} is not valid; {why}", shown(key, value))))
        }
    }
}

/// The candidate closest to `key` by edit distance, if it is close enough to be a likely typo.
fn closest<'a>(key: &str, candidates: &'a [String]) -> Option<&'a str> {
    // No property name is this long, and the edit distance of a 1 MB key to every name would take minutes.
    if key.len() > ECHO {
        return None;
    }
    candidates
        .iter()
        .map(|c| (strsim::levenshtein(key, c), c))
        .filter(|(d, _)| *d <= 3.max(key.len() / 5))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_librdkafka_names() {
        let names = property_names();
        assert!(names.iter().any(|n| n == "linger.ms"));
        assert!(names.iter().any(|n| n == "acks"));
        assert!(names.iter().any(|n| n == "queue.buffering.max.ms"));
    }

    #[test]
    fn suggests_near_names_only() {
        let c = vec!["linger.ms".to_string(), "batch.size".to_string()];
        assert_eq!(closest("linger.mss", &c), Some("linger.ms"));
        assert_eq!(closest("completely.different.thing", &c), None);
    }
}
