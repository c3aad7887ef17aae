//! The protobuf wire format, as far as the Kubernetes messages use it: varints,
//! length-delimited fields and the two fixed widths, read from a byte slice.
//! Mirrors the `Unmarshal` loops that gogo protobuf generates in each
//! `generated.pb.go` (`skipGenerated`, `ErrInvalidLengthGenerated`,
//! `ErrUnexpectedEndOfGroupGenerated`), and the table types the generated
//! [`schema`](super::schema) is written in.
//!
//! prost has these readers too, but only as `#[doc(hidden)]` items that are not
//! part of its stable API; a slice reader is a few lines.

use super::ProtobufError;

/// A kind a protobuf body may hold.
#[derive(Debug)]
pub(super) struct Root {
    /// Its `apiVersion`; `*` for every version.
    pub api_version: &'static str,
    /// Its `kind`.
    pub kind: &'static str,
    /// Its message, an index into [`MESSAGES`](super::schema::MESSAGES).
    pub message: usize,
}

/// A message: its fields by number.
#[derive(Debug)]
pub(super) struct Message {
    /// The Go type's name, for errors.
    pub name: &'static str,
    /// Sorted by `tag`.
    pub fields: &'static [Field],
}

/// One field of a [`Message`].
#[derive(Debug)]
pub(super) struct Field {
    /// The field number.
    pub tag: u32,
    /// The JSON name; empty for a Go struct embedded inline, whose fields belong
    /// to the parent object.
    pub json: &'static str,
    /// What the field holds.
    pub ty: Ty,
    /// A JSON array.
    pub repeated: bool,
    /// Whether a zero scalar is written in JSON: the field is required (no
    /// `omitempty`) or a Go pointer.
    pub keep_zero: bool,
}

/// What a field holds.
#[derive(Debug)]
#[allow(
    dead_code,
    reason = "the generated table uses the types the served kinds need; the others stay for new kinds"
)]
pub(super) enum Ty {
    /// A UTF-8 string.
    String,
    /// Bytes, base64 in JSON (`[]byte`).
    Bytes,
    /// A varint 0 or 1.
    Bool,
    /// A varint read as `int32`.
    Int32,
    /// A varint read as `int64`.
    Int64,
    /// A message, by its index.
    Message(usize),
    /// A message with its own JSON form.
    Special(Special),
    /// `map<string, string>`.
    MapString,
    /// `map<string, bytes>` (a Secret's `data`), base64 values.
    MapBytes,
    /// `map<string, message>`.
    MapMessage(&'static Ty),
}

/// apimachinery's types with their own `MarshalJSON`.
#[derive(Debug, Clone, Copy)]
#[allow(
    dead_code,
    reason = "the generated table uses the types the served kinds need; the others stay for new kinds"
)]
pub(super) enum Special {
    /// `metav1.Time`: RFC 3339 to the second, `null` when zero.
    Time,
    /// `metav1.MicroTime`: RFC 3339 to the microsecond, `null` when zero.
    MicroTime,
    /// `metav1.Duration`: Go's `time.Duration.String()`.
    Duration,
    /// `metav1.FieldsV1`: its raw JSON.
    FieldsV1,
    /// `runtime.RawExtension`: its raw JSON.
    RawExtension,
    /// `intstr.IntOrString`: a number or a string.
    IntOrString,
    /// `resource.Quantity`: its string.
    Quantity,
    /// A Go `[]string` that protobuf wraps in a message of one repeated field
    /// (`certificates/v1.ExtraValue`, `items = 1`): a JSON list.
    StringList,
}

/// A wire type, the low three bits of a field's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum WireType {
    /// 0: a varint.
    Varint = 0,
    /// 1: eight bytes.
    Fixed64 = 1,
    /// 2: a length, then that many bytes.
    Len = 2,
    /// 5: four bytes.
    Fixed32 = 5,
}

/// Reads fields from a message's bytes.
pub(super) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over one message's bytes.
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    /// The next field's number and wire type, or `None` at the end.
    pub(super) fn key(&mut self) -> Result<Option<(u32, WireType)>, ProtobufError> {
        if self.buf.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let wire_type = match key & 7 {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::Len,
            5 => WireType::Fixed32,
            3 | 4 => {
                return Err(ProtobufError::wire("proto: groups are not supported"));
            }
            other => {
                return Err(ProtobufError::wire(format!(
                    "proto: illegal wireType {other}"
                )));
            }
        };
        let tag = u32::try_from(key >> 3)
            .ok()
            .filter(|tag| *tag > 0)
            .ok_or_else(|| ProtobufError::wire("proto: illegal tag 0"))?;
        Ok(Some((tag, wire_type)))
    }

    /// Whether every byte has been read.
    pub(super) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// A varint of up to ten bytes.
    pub(super) fn varint(&mut self) -> Result<u64, ProtobufError> {
        let mut value: u64 = 0;
        for (i, byte) in self.buf.iter().enumerate().take(10) {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                self.buf = &self.buf[i + 1..];
                return Ok(value);
            }
        }
        Err(if self.buf.len() < 10 {
            unexpected_eof()
        } else {
            ProtobufError::wire("proto: integer overflow")
        })
    }

    /// A length-delimited field's bytes.
    pub(super) fn bytes(&mut self) -> Result<&'a [u8], ProtobufError> {
        let len = self.varint()?;
        let len = usize::try_from(len)
            .ok()
            .filter(|len| *len <= self.buf.len())
            .ok_or_else(unexpected_eof)?;
        let (bytes, rest) = self.buf.split_at(len);
        self.buf = rest;
        Ok(bytes)
    }

    /// Skips a field the table does not know, as `skipGenerated` does.
    pub(super) fn skip(&mut self, wire_type: WireType) -> Result<(), ProtobufError> {
        let width = match wire_type {
            WireType::Varint => return self.varint().map(drop),
            WireType::Len => return self.bytes().map(drop),
            WireType::Fixed64 => 8,
            WireType::Fixed32 => 4,
        };
        if self.buf.len() < width {
            return Err(unexpected_eof());
        }
        self.buf = &self.buf[width..];
        Ok(())
    }
}

/// Writes fields into a message's bytes, as gogo's generated `Marshal` does
/// (`encodeVarintGenerated`).
#[derive(Debug, Default)]
pub(super) struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// An empty message.
    pub(super) fn new() -> Self {
        Writer::default()
    }

    /// With room for `capacity` bytes.
    pub(super) fn with_capacity(capacity: usize) -> Self {
        Writer {
            buf: Vec::with_capacity(capacity),
        }
    }

    /// A varint of up to ten bytes.
    pub(super) fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.buf.push((value as u8) | 0x80);
            value >>= 7;
        }
        self.buf.push(value as u8);
    }

    fn key(&mut self, tag: u32, wire_type: WireType) {
        self.varint(u64::from(tag) << 3 | wire_type as u64);
    }

    /// A varint field.
    pub(super) fn varint_field(&mut self, tag: u32, value: u64) {
        self.key(tag, WireType::Varint);
        self.varint(value);
    }

    /// A length-delimited field: a string, bytes or a message.
    pub(super) fn bytes(&mut self, tag: u32, bytes: &[u8]) {
        self.key(tag, WireType::Len);
        self.varint(bytes.len() as u64);
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes as they are: a prefix, or fields written elsewhere.
    pub(super) fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// How many bytes are written.
    pub(super) fn len(&self) -> usize {
        self.buf.len()
    }

    /// The bytes written so far.
    pub(super) fn as_slice(&self) -> &[u8] {
        &self.buf
    }

    /// The message's bytes.
    pub(super) fn into_vec(self) -> Vec<u8> {
        self.buf
    }
}

/// How many bytes `value` takes as a varint.
pub(super) fn varint_len(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

fn unexpected_eof() -> ProtobufError {
    ProtobufError::wire("unexpected EOF")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_read_as_protobuf_writes_them() {
        let mut reader =
            Reader::new(&[0x96, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(reader.varint().unwrap(), 150);
        assert_eq!(reader.varint().unwrap(), 0);
        assert_eq!(reader.varint().unwrap(), u64::from(u32::MAX));
        assert!(matches!(reader.key(), Ok(None)));
    }

    #[test]
    fn varints_write_as_they_read() {
        for value in [0, 1, 127, 128, 150, 300, u64::from(u32::MAX), u64::MAX] {
            let mut writer = Writer::new();
            writer.varint(value);
            assert_eq!(writer.len(), varint_len(value), "{value}");
            let mut reader = Reader::new(writer.as_slice());
            assert_eq!(reader.varint().unwrap(), value);
            assert!(reader.is_empty());
        }
    }

    #[test]
    fn truncated_and_overlong_input_is_an_error_not_a_panic() {
        for bad in [
            &[0x80][..],
            &[0xff; 11][..],
            &[0x0a, 0x05, b'a'][..],
            &[
                0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ][..],
            &[0x0e][..],
            &[0x0b][..],
            &[0x00][..],
        ] {
            let mut reader = Reader::new(bad);
            let outcome = (|| {
                while let Some((_, wire_type)) = reader.key()? {
                    reader.skip(wire_type)?;
                }
                Ok::<(), ProtobufError>(())
            })();
            assert!(outcome.is_err(), "{bad:?} read without an error");
        }
    }

    #[test]
    fn fields_read_as_key_then_value() {
        // Field 1 as the string "ab", field 2 as the varint 1, field 3 as eight
        // bytes, field 4 as four.
        let bytes = [
            0x0a, 0x02, b'a', b'b', 0x10, 0x01, 0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x25,
            1, 2, 3, 4,
        ];
        let mut reader = Reader::new(&bytes);
        assert_eq!(reader.key().unwrap(), Some((1, WireType::Len)));
        assert_eq!(reader.bytes().unwrap(), b"ab");
        assert_eq!(reader.key().unwrap(), Some((2, WireType::Varint)));
        assert_eq!(reader.varint().unwrap(), 1);
        assert_eq!(reader.key().unwrap(), Some((3, WireType::Fixed64)));
        reader.skip(WireType::Fixed64).unwrap();
        assert_eq!(reader.key().unwrap(), Some((4, WireType::Fixed32)));
        reader.skip(WireType::Fixed32).unwrap();
        assert_eq!(reader.key().unwrap(), None);
    }
}
