//! How the engine echoes a user's values in its messages: clipped, so that a 1 MB topic name, path or property
//! cannot fill a JTL row, a log line or a JMeter GUI table. Every message an [`crate::error::EngineError`] carries
//! passes through [`readable`].

/// Echoed values are cut to this many characters, so that a 1 MB value cannot fill a JTL row or a log line.
pub const ECHO: usize = 80;

/// At most [`ECHO`] characters of `value`, with its full size said when it was cut.
pub fn clip(value: &str) -> String {
    match value.char_indices().nth(ECHO) {
        None => value.to_string(),
        Some((end, _)) => format!("{}… ({} bytes)", &value[..end], value.len()),
    }
}

/// Messages up to this length are left as they are; longer ones have their long quoted values clipped.
const READABLE: usize = 1000;

/// `message` with every quoted value (`'...'`) longer than 200 bytes clipped, when the message is long, and cut at
/// 1,500 bytes in any case. Short messages (all normal ones) are returned unchanged.
pub fn readable(message: String) -> String {
    if message.len() <= READABLE {
        return message;
    }
    let mut out = String::with_capacity(READABLE);
    let mut rest = message.as_str();
    while let Some(open) = rest.find('\'') {
        let Some(close) = rest[open + 1..].find('\'').map(|c| c + open + 1) else { break };
        out.push_str(&rest[..=open]);
        let quoted = &rest[open + 1..close];
        out.push_str(&if quoted.len() > 200 { clip(quoted) } else { quoted.to_string() });
        out.push('\'');
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    if out.len() > READABLE + 500 {
        let end = (0..=READABLE + 500).rev().find(|i| out.is_char_boundary(*i)).unwrap_or(0);
        out.truncate(end);
        out.push_str("… (message cut)");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_have_their_quoted_values_clipped() {
        let short = "acks: 'banana' is not valid".to_string();
        assert_eq!(readable(short.clone()), short);
        let long = format!("topic '{}' does not exist on b:9092; create it", "t".repeat(1 << 20));
        let r = readable(long);
        assert!(r.len() < 200 && r.ends_with("does not exist on b:9092; create it"), "{r}");
        assert!(readable("x".repeat(1 << 20)).len() < 1600);
    }

    #[test]
    fn clip_keeps_short_values_and_cuts_long_ones() {
        assert_eq!(clip("short"), "short");
        let cut = clip(&"é".repeat(1000));
        assert!(cut.ends_with("… (2000 bytes)") && cut.chars().count() < 100, "{cut}");
    }
}
