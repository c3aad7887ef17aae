//! apiserver's `pkg/storage/api_object_versioner.go`: resource versions are etcd
//! revisions, written as decimal strings.
//!
//! A resource version is a `uint64` (`ParseResourceVersion`); an etcd revision is
//! an `int64`. Upstream converts between them with plain casts (`int64(rev)`,
//! `wc.initialRev + 1`), which wrap for versions above `i64::MAX`. Here every
//! conversion and every step to the next revision is checked:
//! [`revision_of`] and [`next_revision`] answer `None` where Go would wrap, and
//! the callers give that `None` its meaning (a version no etcd revision can
//! reach).

use crate::errors::StorageError;

/// Parses a resource version as the apiserver's
/// `APIObjectVersioner.ParseResourceVersion` does (`strconv.ParseUint(rv, 10,
/// 64)`): `""` and `"0"` are 0; otherwise decimal digits only (no sign, no
/// spaces) up to `u64::MAX`. Anything else is 400 BadRequest with the message
/// of `validateMinimumResourceVersion` and `ValidateListOptions`:
/// `invalid resource version: resourceVersion: Invalid value: "-1":
/// strconv.ParseUint: parsing "-1": invalid syntax` (or `value out of range`).
pub fn parse_resource_version(rv: &str) -> Result<u64, StorageError> {
    if rv.is_empty() {
        return Ok(0);
    }
    parse_uint(rv).map_err(|why| {
        StorageError::BadRequest(format!(
            "invalid resource version: resourceVersion: Invalid value: {rv:?}: \
             strconv.ParseUint: parsing {rv:?}: {why}"
        ))
    })
}

/// Go's `strconv.ParseUint(s, 10, 64)`, with its two errors in its order: a
/// character that is not a digit is a syntax error, unless the digits before it
/// already overflowed (a range error).
fn parse_uint(text: &str) -> Result<u64, &'static str> {
    let mut value: u64 = 0;
    for byte in text.bytes() {
        let digit = match byte {
            b'0'..=b'9' => u64::from(byte - b'0'),
            _ => return Err("invalid syntax"),
        };
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(digit))
            .ok_or("value out of range")?;
    }
    Ok(value)
}

/// The etcd revision of a resource version, or `None` when it is above
/// `i64::MAX`: no etcd revision is that large, so such a version is always
/// ahead of the store (upstream's `int64(rev)` would wrap to a negative
/// revision).
pub fn revision_of(resource_version: u64) -> Option<i64> {
    i64::try_from(resource_version).ok()
}

/// The revision after `revision` (where a watch from `revision` starts), or
/// `None` after `i64::MAX`: nothing can ever follow it (upstream's
/// `wc.initialRev + 1` would wrap to `i64::MIN`).
pub fn next_revision(revision: i64) -> Option<i64> {
    revision.checked_add(1)
}

/// The resource version of an etcd revision; a negative revision (which etcd
/// never reports) is 0.
pub fn resource_version_of(revision: i64) -> u64 {
    u64::try_from(revision).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(rv: &str) -> String {
        match parse_resource_version(rv) {
            Err(StorageError::BadRequest(message)) => message,
            other => panic!("{rv}: expected 400, got {other:?}"),
        }
    }

    #[test]
    fn resource_versions_parse_as_upstream() {
        assert_eq!(parse_resource_version("").unwrap(), 0);
        assert_eq!(parse_resource_version("0").unwrap(), 0);
        assert_eq!(parse_resource_version("42").unwrap(), 42);
        assert_eq!(parse_resource_version("007").unwrap(), 7);
        assert_eq!(
            parse_resource_version("9223372036854775807").unwrap(),
            9_223_372_036_854_775_807
        );
        assert_eq!(
            parse_resource_version("9223372036854775808").unwrap(),
            9_223_372_036_854_775_808
        );
        assert_eq!(
            parse_resource_version("18446744073709551615").unwrap(),
            u64::MAX
        );
    }

    #[test]
    fn invalid_resource_versions_carry_strconv_s_error() {
        assert_eq!(
            message("-1"),
            "invalid resource version: resourceVersion: Invalid value: \"-1\": \
             strconv.ParseUint: parsing \"-1\": invalid syntax"
        );
        assert_eq!(
            message("18446744073709551616"),
            "invalid resource version: resourceVersion: Invalid value: \
             \"18446744073709551616\": strconv.ParseUint: parsing \
             \"18446744073709551616\": value out of range"
        );
        // Rust's `u64::from_str` takes a `+`; Go's ParseUint does not.
        assert!(message("+1").ends_with("invalid syntax"));
        assert!(message("abc").ends_with("invalid syntax"));
        assert!(message(" 1").ends_with("invalid syntax"));
        // Go stops at the first overflow, before a later bad character.
        assert!(message("99999999999999999999x").ends_with("value out of range"));
        assert!(message("1x99999999999999999999").ends_with("invalid syntax"));
    }

    #[test]
    fn conversions_to_revisions_never_wrap() {
        assert_eq!(revision_of(0), Some(0));
        assert_eq!(revision_of(i64::MAX as u64), Some(i64::MAX));
        assert_eq!(revision_of(i64::MAX as u64 + 1), None);
        assert_eq!(revision_of(u64::MAX), None);
        assert_eq!(next_revision(5), Some(6));
        assert_eq!(next_revision(i64::MAX), None);
        assert_eq!(resource_version_of(7), 7);
        assert_eq!(resource_version_of(-1), 0);
    }
}
