//! Every file a user names that the engine reads (payload, schema and its imports, rules, baseline, the registry's
//! CA) or hands to librdkafka (certificates, keys, keytab) goes through [`read`] or [`check`]: a FIFO, a device or
//! a directory under such a name would otherwise hang the JMeter thread in `open` (a FIFO without a writer) or
//! fill the heap (`/dev/zero` took 3 GB in 5 s), with no sample and no log line. The file is opened without
//! blocking, must be a regular file, and is read up to a limit that the error names.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

use crate::echo::clip;

/// Schema files and their imports, summaries used as a baseline: far above any real one.
pub const MAX_DOCUMENT: u64 = 16 * 1024 * 1024;
/// Certificates, keys, keytabs and CA bundles (a system bundle is about 200 KB).
pub const MAX_CERTIFICATE: u64 = 4 * 1024 * 1024;

/// How large a file may be, and the setting that raises the limit when there is one.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    /// The largest size read.
    pub bytes: u64,
    /// The setting that raises it, if there is one.
    pub setting: Option<&'static str>,
}

impl Limit {
    /// A limit no user needs to raise.
    pub const fn fixed(bytes: u64) -> Limit {
        Limit { bytes, setting: None }
    }
}

/// The whole of the regular file `path`, named by `what` (the setting) in every error, at most `limit` bytes.
pub fn read(path: &str, what: &str, limit: Limit) -> Result<Vec<u8>, String> {
    let (file, meta) = open(path, what, false)?;
    too_large(path, what, limit, meta.len(), true)?;
    let mut data = Vec::with_capacity(meta.len() as usize);
    // The size may be 0 (files under /proc) or grow while being read: the read itself is bounded too.
    file.take(limit.bytes + 1)
        .read_to_end(&mut data)
        .map_err(|e| format!("{what}: cannot read '{}': {e}", clip(path)))?;
    too_large(path, what, limit, data.len() as u64, false)?;
    Ok(data)
}

/// [`read`] as UTF-8 text.
pub fn read_text(path: &str, what: &str, limit: Limit) -> Result<String, String> {
    String::from_utf8(read(path, what, limit)?).map_err(|e| {
        format!("{what}: '{}' is not UTF-8 text (invalid byte at {})", clip(path), e.utf8_error().valid_up_to())
    })
}

/// Checks a file that librdkafka reads itself: it opens without blocking, is a regular file (or, with
/// `directory_ok`, a directory) and is at most `limit` bytes. Returns the open file for a content check.
pub fn check(path: &str, what: &str, limit: Limit, directory_ok: bool) -> Result<Option<File>, String> {
    let (file, meta) = open(path, what, directory_ok)?;
    if meta.is_dir() {
        return Ok(None);
    }
    too_large(path, what, limit, meta.len(), true)?;
    Ok(Some(file))
}

fn open(path: &str, what: &str, directory_ok: bool) -> Result<(File, Metadata), String> {
    let shown = clip(path);
    // O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer; it changes nothing for
    // a regular file. The type is checked on the open descriptor, so the file cannot be swapped in between.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| format!("{what}: cannot read '{shown}': {e}"))?;
    let meta = file.metadata().map_err(|e| format!("{what}: cannot read '{shown}': {e}"))?;
    let kind = meta.file_type();
    if kind.is_file() || (directory_ok && kind.is_dir()) {
        return Ok((file, meta));
    }
    let found = if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(format!("{what}: '{shown}' is {found}; name a regular file"))
}

fn too_large(path: &str, what: &str, limit: Limit, size: u64, exact: bool) -> Result<(), String> {
    if size <= limit.bytes {
        return Ok(());
    }
    // A read stops at limit + 1 bytes: its count is not the file's size.
    let found = if exact { format!("{size} bytes, more") } else { "larger".to_string() };
    let raise = match limit.setting {
        Some(setting) => format!(" or raise {setting}"),
        None => String::new(),
    };
    Err(format!(
        "{what}: '{}' is {found} than the limit of {} bytes; use a smaller file{raise}",
        clip(path),
        limit.bytes
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, data: &[u8]) -> String {
        let path = std::env::temp_dir().join(format!("kn-files-{}-{name}", std::process::id()));
        std::fs::write(&path, data).unwrap();
        path.to_string_lossy().into_owned()
    }

    #[test]
    fn regular_files_are_read_up_to_the_limit() {
        let path = temp("ok", b"abc");
        assert_eq!(read(&path, "payload.file", Limit::fixed(3)).unwrap(), b"abc");
        let e = read(&path, "payload.file", Limit { bytes: 2, setting: Some("payload.file.max.bytes") }).unwrap_err();
        assert!(
            e.starts_with("payload.file: '")
                && e.ends_with(
                    "is 3 bytes, more than the limit of 2 bytes; use a smaller file or raise payload.file.max.bytes"
                ),
            "{e}"
        );
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn devices_fifos_and_directories_are_refused_without_blocking() {
        let e = read("/dev/zero", "payload.file", Limit::fixed(10)).unwrap_err();
        assert_eq!(e, "payload.file: '/dev/zero' is a device; name a regular file");
        let e = read("/tmp", "schema.file", Limit::fixed(10)).unwrap_err();
        assert_eq!(e, "schema.file: '/tmp' is a directory; name a regular file");
        assert!(check("/tmp", "ssl.ca.location", Limit::fixed(10), true).unwrap().is_none());
        let fifo = std::env::temp_dir().join(format!("kn-files-{}-fifo", std::process::id()));
        let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read(&fifo.to_string_lossy(), "schema.file", Limit::fixed(10)).unwrap_err();
        assert!(e.ends_with("is a FIFO (named pipe); name a regular file"), "{e}");
        std::fs::remove_file(fifo).unwrap();
    }

    #[test]
    fn a_file_whose_size_says_zero_is_still_bounded() {
        let e = read("/proc/self/maps", "rules", Limit::fixed(5)).unwrap_err();
        assert!(e.ends_with("is larger than the limit of 5 bytes; use a smaller file"), "{e}");
    }
}
