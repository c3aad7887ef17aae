//! The other direction of the decoder: a JSON object written as the protobuf
//! message the Go struct's gogo-generated `Marshal` (`generated.pb.go`) writes,
//! driven by the same table ([`schema`](super::schema)).
//!
//! - Fields go out in field-number order, as gogo writes them.
//! - A field the JSON does not have is not written. Go would write a zero for a
//!   non-pointer field, and any decoder reads an absent field as that zero, so
//!   the object decoded from either is the same.
//! - A map's entries go out sorted by key, as gogo sorts them.
//! - Repeated scalars are not packed (the `.proto` files are proto2).
//! - An embedded Go struct (`VolumeSource` in `Volume`) takes its fields from
//!   the parent object.
//! - apimachinery's types with their own JSON (`Time`, `Quantity`,
//!   `IntOrString`, ...) are written as their messages.
//!
//! A JSON key the table does not know is left out, as decoding the JSON into
//! the Go struct would drop it.

use base64::Engine as _;
use serde_json::{Map, Value};

use super::ProtobufError;
use super::schema::MESSAGES;
use super::wire::{Field, Message, Special, Ty, Writer};

/// Writes `object`'s fields as `message`.
pub(super) fn marshal_message(
    message: &Message,
    object: &Map<String, Value>,
    out: &mut Writer,
    depth: usize,
) -> Result<(), ProtobufError> {
    if depth > super::MAX_DEPTH {
        return Err(ProtobufError::wire("proto: message nested too deeply"));
    }
    for field in message.fields {
        if field.json.is_empty() {
            // An embedded struct: its fields live in this object.
            let Ty::Message(inner) = field.ty else {
                continue;
            };
            let mut nested = Writer::new();
            marshal_message(&MESSAGES[inner], object, &mut nested, depth + 1)?;
            out.bytes(field.tag, nested.as_slice());
            continue;
        }
        let Some(value) = object.get(field.json) else {
            continue;
        };
        if value.is_null() {
            continue;
        }
        match &field.ty {
            Ty::MapString | Ty::MapBytes | Ty::MapMessage(_) => {
                let Value::Object(map) = value else {
                    return Err(mismatch(message, field, value));
                };
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                for key in keys {
                    let mut entry = Writer::new();
                    entry.bytes(1, key.as_bytes());
                    marshal_map_value(message, field, &map[key], &mut entry, depth)?;
                    out.bytes(field.tag, entry.as_slice());
                }
            }
            _ if field.repeated => {
                let Value::Array(items) = value else {
                    return Err(mismatch(message, field, value));
                };
                for item in items {
                    marshal_as(
                        message, field, &field.ty, field.tag, item, out, depth,
                    )?;
                }
            }
            _ => {
                marshal_as(message, field, &field.ty, field.tag, value, out, depth)?
            }
        }
    }
    Ok(())
}

/// A map entry's value, its field 2, of the map's value type.
fn marshal_map_value(
    message: &Message,
    field: &Field,
    value: &Value,
    entry: &mut Writer,
    depth: usize,
) -> Result<(), ProtobufError> {
    let ty = match &field.ty {
        Ty::MapString => &Ty::String,
        Ty::MapBytes => &Ty::Bytes,
        Ty::MapMessage(ty) => ty,
        _ => return Err(mismatch(message, field, value)),
    };
    marshal_as(message, field, ty, 2, value, entry, depth)
}

/// One value (or one item of a repeated field) as field `tag` of type `ty`;
/// `field` names it in an error.
fn marshal_as(
    message: &Message,
    field: &Field,
    ty: &Ty,
    tag: u32,
    value: &Value,
    out: &mut Writer,
    depth: usize,
) -> Result<(), ProtobufError> {
    let bad = || mismatch(message, field, value);
    match ty {
        Ty::String => out.bytes(tag, value.as_str().ok_or_else(bad)?.as_bytes()),
        Ty::Bytes => out.bytes(tag, &base64_bytes(value).ok_or_else(bad)?),
        Ty::Bool => {
            out.varint_field(tag, u64::from(value.as_bool().ok_or_else(bad)?))
        }
        // An int32 is sign-extended to ten bytes, as Go writes `uint64(int32)`.
        Ty::Int32 | Ty::Int64 => {
            out.varint_field(tag, value.as_i64().ok_or_else(bad)? as u64)
        }
        Ty::Message(inner) => {
            let Value::Object(object) = value else {
                return Err(bad());
            };
            let mut nested = Writer::new();
            marshal_message(&MESSAGES[*inner], object, &mut nested, depth + 1)?;
            out.bytes(tag, nested.as_slice());
        }
        Ty::Special(special) => {
            let mut nested = Writer::new();
            marshal_special(*special, value, &mut nested).ok_or_else(bad)?;
            out.bytes(tag, nested.as_slice());
        }
        Ty::MapString | Ty::MapBytes | Ty::MapMessage(_) => return Err(bad()),
    }
    Ok(())
}

/// The message of a type with its own JSON form; `None` if the JSON is not
/// that form.
fn marshal_special(special: Special, value: &Value, out: &mut Writer) -> Option<()> {
    match special {
        // Timestamp: seconds (1) and nanos (2), each only when not zero.
        Special::Time | Special::MicroTime => {
            let time: k8s_openapi::jiff::Timestamp = value.as_str()?.parse().ok()?;
            let seconds = time.as_second();
            let nanos = if matches!(special, Special::MicroTime) {
                time.subsec_nanosecond() / 1000 * 1000
            } else {
                0
            };
            if seconds != 0 {
                out.varint_field(1, seconds as u64);
            }
            if nanos != 0 {
                out.varint_field(2, nanos as i64 as u64);
            }
        }
        Special::Duration => {
            let nanos = crate::util::duration::parse_duration(value.as_str()?)
                .ok()?
                .as_nanos();
            out.varint_field(1, u64::try_from(nanos).ok()?);
        }
        Special::FieldsV1 | Special::RawExtension => {
            out.bytes(1, &serde_json::to_vec(value).ok()?);
        }
        // type (1), intVal (2), strVal (3), all three always, as gogo writes a
        // struct's non-pointer fields.
        Special::IntOrString => match value {
            Value::String(text) => {
                out.varint_field(1, 1);
                out.varint_field(2, 0);
                out.bytes(3, text.as_bytes());
            }
            Value::Number(n) => {
                out.varint_field(1, 0);
                out.varint_field(
                    2,
                    i64::from(i32::try_from(n.as_i64()?).ok()?) as u64,
                );
                out.bytes(3, b"");
            }
            _ => return None,
        },
        Special::Quantity => match value {
            Value::String(text) => out.bytes(1, text.as_bytes()),
            // A number in JSON is a quantity too (`"cpu": 2`).
            Value::Number(n) => out.bytes(1, n.to_string().as_bytes()),
            _ => return None,
        },
        // items (1), one per string; `null` (a nil slice) has none.
        Special::StringList => match value {
            Value::Array(items) => {
                for item in items {
                    out.bytes(1, item.as_str()?.as_bytes());
                }
            }
            Value::Null => {}
            _ => return None,
        },
    }
    Some(())
}

fn base64_bytes(value: &Value) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD
        .decode(value.as_str()?)
        .ok()
}

fn mismatch(message: &Message, field: &Field, value: &Value) -> ProtobufError {
    let shown = match value {
        Value::Object(_) => "an object",
        Value::Array(_) => "an array",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Null => "null",
    };
    ProtobufError::wire(format!(
        "cannot write {shown} as field {} of {} ({:?})",
        field.json, message.name, field.ty
    ))
}
