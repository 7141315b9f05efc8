//! The schema registry's wire format, as Confluent's and Apicurio's serializers write it:
//! magic byte `0`, the schema id as 4 bytes big-endian, then (Protobuf only) the index path of the message
//! type within its `.proto` file, then the encoded record.
//!
//! The Protobuf index path is a zig-zag varint count followed by zig-zag varint indexes; the most common
//! path `[0]` (the file's first message) is written as a single `0` byte.

use crate::error::{Code, EngineError};

/// The first byte of every framed record.
pub const MAGIC: u8 = 0;

/// Writes the header (magic byte, id and, for Protobuf, the message index path) into `out`.
pub fn write_header(out: &mut Vec<u8>, id: u32, message_indexes: Option<&[i32]>) {
    out.push(MAGIC);
    out.extend_from_slice(&id.to_be_bytes());
    if let Some(indexes) = message_indexes {
        if indexes == [0] {
            out.push(0);
        } else {
            write_zigzag(out, indexes.len() as i64);
            for i in indexes {
                write_zigzag(out, i64::from(*i));
            }
        }
    }
}

/// A framed record split into its parts.
#[derive(Debug, PartialEq, Eq)]
pub struct Framed<'a> {
    /// The registry's id of the writer's schema.
    pub id: u32,
    /// The rest: for Protobuf still starting with the index path (see [`read_message_indexes`]).
    pub payload: &'a [u8],
}

/// Splits a framed record; fails when the magic byte or the id is missing.
pub fn read_header(bytes: &[u8]) -> Result<Framed<'_>, EngineError> {
    match bytes {
        [MAGIC, a, b, c, d, payload @ ..] => Ok(Framed { id: u32::from_be_bytes([*a, *b, *c, *d]), payload }),
        [] => Err(EngineError::new(Code::DecodeError, "the record is empty: no schema registry header (magic byte 0 + schema id)")),
        [first, ..] if *first != MAGIC => Err(EngineError::new(
            Code::DecodeError,
            format!("the record does not start with the magic byte 0 but with {first}: not written with a schema registry serializer"),
        )),
        _ => Err(EngineError::new(Code::DecodeError, format!("the record has only {} bytes: too short for the magic byte and a 4-byte schema id", bytes.len()))),
    }
}

/// Reads a Protobuf message index path from the start of `payload`; returns it and the rest.
pub fn read_message_indexes(payload: &[u8]) -> Result<(Vec<i32>, &[u8]), EngineError> {
    let bad =
        || EngineError::new(Code::DecodeError, "the Protobuf message index list after the schema id is malformed");
    let (count, mut rest) = read_zigzag(payload).ok_or_else(bad)?;
    if count == 0 {
        return Ok((vec![0], rest));
    }
    if !(1..=100).contains(&count) {
        return Err(bad());
    }
    let mut indexes = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let (i, r) = read_zigzag(rest).ok_or_else(bad)?;
        indexes.push(i32::try_from(i).map_err(|_| bad())?);
        rest = r;
    }
    Ok((indexes, rest))
}

fn write_zigzag(out: &mut Vec<u8>, v: i64) {
    let mut n = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn read_zigzag(bytes: &[u8]) -> Option<(i64, &[u8])> {
    let mut n: u64 = 0;
    for (i, b) in bytes.iter().enumerate().take(10) {
        n |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            let v = ((n >> 1) as i64) ^ -((n & 1) as i64);
            return Some((v, &bytes[i + 1..]));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_magic_then_big_endian_id() {
        let mut out = Vec::new();
        write_header(&mut out, 0x0102_0304, None);
        assert_eq!(out, [0, 1, 2, 3, 4]);
        out.extend_from_slice(b"rec");
        assert_eq!(read_header(&out).unwrap(), Framed { id: 0x0102_0304, payload: b"rec" });
    }

    #[test]
    fn protobuf_first_message_is_one_zero_byte() {
        let mut out = Vec::new();
        write_header(&mut out, 7, Some(&[0]));
        assert_eq!(out, [0, 0, 0, 0, 7, 0]);
        let (idx, rest) = read_message_indexes(&out[5..]).unwrap();
        assert_eq!((idx, rest), (vec![0], &[][..]));
    }

    #[test]
    fn protobuf_nested_message_path_is_zigzag() {
        let mut out = Vec::new();
        write_header(&mut out, 1, Some(&[1, 0, 70]));
        // count 3 -> 6; 1 -> 2; 0 -> 0; 70 -> 140 = 0x8c 0x01
        assert_eq!(&out[5..], [6, 2, 0, 0x8c, 0x01]);
        out.push(0xAA);
        let (idx, rest) = read_message_indexes(&out[5..]).unwrap();
        assert_eq!((idx, rest), (vec![1, 0, 70], &[0xAA][..]));
    }

    #[test]
    fn bad_headers_are_explained() {
        assert!(read_header(b"").unwrap_err().message.contains("empty"));
        assert!(read_header(b"{\"a\":1}").unwrap_err().message.contains("magic byte 0 but with 123"));
        assert!(read_header(&[0, 0, 1]).unwrap_err().message.contains("only 3 bytes"));
        assert!(read_message_indexes(&[0x80]).is_err());
    }
}
