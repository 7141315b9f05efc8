//! Avro's binary encoding written straight into a reused buffer: zig-zag varints for int and long, little-endian
//! float and double, length-prefixed bytes and strings, the branch index before a union's value, block-encoded arrays
//! and maps, fixed as raw bytes, logical types on their base type.
//!
//! The generator writes its records with these primitives directly from its plan (no value tree, no writer per
//! record); [`value`] encodes an `apache_avro` value (a JMeter JSON record, a rule's fixed value) the same way.
//! The tests hold both against `apache_avro`'s own reader and writer.

use apache_avro::schema::{DecimalSchema, InnerDecimalSchema, SchemaKind, UnionSchema, UuidSchema};
use apache_avro::types::Value;
use apache_avro::Schema;

use std::collections::HashMap;

use apache_avro::schema::Name;

/// An int or long: zig-zag, then a varint of 7-bit groups, low group first (an int's encoding is the long's).
pub fn long(out: &mut Vec<u8>, n: i64) {
    let mut z = ((n << 1) ^ (n >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// Bytes or a string: the length as a long, then the bytes.
pub fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    long(out, b.len() as i64);
    out.extend_from_slice(b);
}

/// Starts an array or map of `n` items: one block of `n` (the items follow); nothing when empty.
pub fn block_start(out: &mut Vec<u8>, n: usize) {
    if n > 0 {
        long(out, n as i64);
    }
}

/// Ends an array or map: the zero-length block that closes it (all of an empty one).
pub fn block_end(out: &mut Vec<u8>) {
    out.push(0);
}

/// A decimal's unscaled value: big-endian two's complement, the shortest form for `bytes`, sign-extended to the size
/// for `fixed` (None: bytes). The caller keeps a fixed decimal within its size.
pub fn decimal(out: &mut Vec<u8>, unscaled: i128, fixed: Option<usize>) {
    let all = unscaled.to_be_bytes();
    match fixed {
        Some(size) => {
            let sign = if unscaled < 0 { 0xff } else { 0 };
            out.extend(std::iter::repeat_n(sign, size.saturating_sub(16)));
            out.extend_from_slice(&all[16 - size.min(16)..]);
        }
        None => bytes(out, shortest_twos_complement(&all)),
    }
}

/// The shortest two's complement form of a big-endian number: leading bytes that only repeat the sign dropped.
pub fn shortest_twos_complement(be: &[u8; 16]) -> &[u8] {
    let mut start = 0;
    while start < 15 {
        let (b, next) = (be[start], be[start + 1]);
        if (b == 0 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    &be[start..]
}

/// A UUID in the form its schema gives: a string (36 characters), 16 bytes, or a fixed of 16.
pub fn uuid(out: &mut Vec<u8>, u: &uuid::Uuid, form: &UuidSchema) {
    match form {
        UuidSchema::String => {
            let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
            bytes(out, u.hyphenated().encode_lower(&mut text).as_bytes());
        }
        UuidSchema::Bytes => bytes(out, u.as_bytes()),
        UuidSchema::Fixed(_) => out.extend_from_slice(u.as_bytes()),
    }
}

/// The schema a name refers to (any other schema as it is), among a schema's `names` (its named types).
pub fn resolve<'a>(names: &'a HashMap<Name, Schema>, schema: &'a Schema) -> &'a Schema {
    match schema {
        Schema::Ref { name } => names.get(name).unwrap_or(schema),
        other => other,
    }
}

/// Encodes `v`, a value made for `schema` (as `from_json` and the rules make them), appending to `out`; the error
/// says what does not fit.
pub fn value(out: &mut Vec<u8>, v: &Value, schema: &Schema, names: &HashMap<Name, Schema>) -> Result<(), String> {
    let schema = resolve(names, schema);
    let mismatch =
        || format!("a {:?} value does not fit the schema's {:?}", SchemaKind::from(v), SchemaKind::from(schema));
    match (v, schema) {
        (Value::Union(i, inner), Schema::Union(u)) => {
            let branch = u.variants().get(*i as usize).ok_or_else(mismatch)?;
            long(out, i64::from(*i));
            value(out, inner, branch, names)?;
        }
        (Value::Null, Schema::Union(u)) => long(out, null_index(u).ok_or_else(mismatch)?),
        (other, Schema::Union(u)) => {
            // a plain value for a union: the first branch it fits
            let (i, branch) = u
                .variants()
                .iter()
                .enumerate()
                .find(|(_, b)| other.validate(resolve(names, b)))
                .ok_or_else(mismatch)?;
            long(out, i as i64);
            value(out, other, branch, names)?;
        }
        (Value::Null, Schema::Null) => {}
        (Value::Boolean(b), Schema::Boolean) => out.push(u8::from(*b)),
        // ints and longs share the varint encoding (an int value promoted to a long field writes the same bytes)
        (Value::Int(n) | Value::Date(n) | Value::TimeMillis(n), _) => long(out, i64::from(*n)),
        (
            Value::Long(n)
            | Value::TimestampMillis(n)
            | Value::TimestampMicros(n)
            | Value::TimestampNanos(n)
            | Value::LocalTimestampMillis(n)
            | Value::LocalTimestampMicros(n)
            | Value::LocalTimestampNanos(n)
            | Value::TimeMicros(n),
            _,
        ) => long(out, *n),
        (Value::Float(x), Schema::Float) => out.extend_from_slice(&x.to_le_bytes()),
        (Value::Double(x), Schema::Double) => out.extend_from_slice(&x.to_le_bytes()),
        (Value::Decimal(d), Schema::Decimal(DecimalSchema { inner, .. })) => {
            let raw: Vec<u8> = d.try_into().map_err(|e: apache_avro::Error| e.to_string())?;
            match inner {
                InnerDecimalSchema::Bytes => bytes(out, &raw),
                InnerDecimalSchema::Fixed(f) => {
                    if raw.len() > f.size {
                        return Err(format!("the decimal needs {} bytes, more than the fixed's {}", raw.len(), f.size));
                    }
                    let sign = if raw.first().is_some_and(|b| b & 0x80 != 0) { 0xff } else { 0 };
                    out.extend(std::iter::repeat_n(sign, f.size - raw.len()));
                    out.extend_from_slice(&raw);
                }
            }
        }
        (Value::Duration(d), Schema::Duration(_)) => out.extend_from_slice(&<[u8; 12]>::from(*d)),
        (Value::Uuid(u), Schema::Uuid(form)) => uuid(out, u, form),
        (Value::Uuid(u), Schema::String) => uuid(out, u, &UuidSchema::String),
        (Value::Bytes(b), Schema::Bytes | Schema::Uuid(UuidSchema::Bytes)) => bytes(out, b),
        (Value::Bytes(b) | Value::Fixed(_, b), Schema::Fixed(f)) if b.len() == f.size => out.extend_from_slice(b),
        (Value::Fixed(_, b), Schema::Uuid(UuidSchema::Fixed(f))) if b.len() == f.size => out.extend_from_slice(b),
        (Value::String(s), Schema::String | Schema::Uuid(UuidSchema::String)) => bytes(out, s.as_bytes()),
        (Value::String(s), Schema::Enum(e)) => {
            long(out, e.symbols.iter().position(|x| x == s).ok_or_else(mismatch)? as i64)
        }
        (Value::Enum(i, _), Schema::Enum(_)) => long(out, i64::from(*i)),
        (Value::Array(items), Schema::Array(a)) => {
            block_start(out, items.len());
            for item in items {
                value(out, item, &a.items, names)?;
            }
            block_end(out);
        }
        (Value::Map(entries), Schema::Map(m)) => {
            block_start(out, entries.len());
            for (k, item) in entries {
                bytes(out, k.as_bytes());
                value(out, item, &m.types, names)?;
            }
            block_end(out);
        }
        (Value::Record(fields), Schema::Record(r)) => {
            for (i, f) in r.fields.iter().enumerate() {
                // fields come in the schema's order; look them up by name otherwise
                let found = match fields.get(i) {
                    Some((name, v)) if *name == f.name => Some(v),
                    _ => fields.iter().find(|(name, _)| *name == f.name).map(|(_, v)| v),
                };
                let item = found.ok_or_else(|| format!("field '{}' is missing", f.name))?;
                value(out, item, &f.schema, names)?;
            }
        }
        _ => return Err(mismatch()),
    }
    Ok(())
}

/// The branch index of `null` in a union, if it has one.
pub fn null_index(u: &UnionSchema) -> Option<i64> {
    u.variants().iter().position(|v| matches!(v, Schema::Null)).map(|i| i as i64)
}
