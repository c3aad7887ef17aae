//! PATCH bodies: mirrors the part of apiserver's `pkg/endpoints/handlers/patch.go` this server
//! supports.
//!
//! | Content-Type                               | Here                                        |
//! |--------------------------------------------|---------------------------------------------|
//! | `application/merge-patch+json`             | JSON merge patch (RFC 7386)                 |
//! | `application/strategic-merge-patch+json`   | treated as a JSON merge patch (see below)   |
//! | `application/json-patch+json`, apply-patch | 415 UnsupportedMediaType                    |
//!
//! A strategic merge patch differs from a merge patch only for lists whose schema names a merge
//! key (`containers` by `name`, for example): strategic merge merges such lists item by item,
//! merge patch replaces them. Patches that set scalars and maps, which is what `kubectl label`,
//! `kubectl annotate` and these tests send, give the same result either way.

use serde_json::Value;

use crate::server::status::ApiError;

/// The patch types this server applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json`.
    Merge,
    /// `application/strategic-merge-patch+json`, applied as a merge patch.
    StrategicMerge,
}

/// The media types accepted for PATCH.
pub const SUPPORTED: &[&str] = &[
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
];

impl PatchType {
    /// The patch type of a `Content-Type`, or 415.
    pub fn from_content_type(content_type: &str) -> Result<PatchType, ApiError> {
        let media = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match media.as_str() {
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/strategic-merge-patch+json" => Ok(PatchType::StrategicMerge),
            _ => Err(ApiError::unsupported_media_type(content_type, SUPPORTED)),
        }
    }
}

/// Mirrors `jsonpatch.MergePatch` (RFC 7386): objects merge key by key, `null` deletes a key,
/// anything else replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(target_map) = target {
        for (key, value) in patch_map {
            if value.is_null() {
                target_map.remove(key);
            } else {
                merge_patch(target_map.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rfc7386_examples() {
        let cases = [
            (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
            (
                json!({"a": "b"}),
                json!({"b": "c"}),
                json!({"a": "b", "b": "c"}),
            ),
            (json!({"a": "b"}), json!({"a": null}), json!({})),
            (json!({"a": ["b"]}), json!({"a": "c"}), json!({"a": "c"})),
            (
                json!({"a": {"b": "c"}}),
                json!({"a": {"b": "d", "c": null}}),
                json!({"a": {"b": "d"}}),
            ),
            (json!(["a"]), json!({"a": "c"}), json!({"a": "c"})),
            (
                json!({"e": null}),
                json!({"a": 1}),
                json!({"e": null, "a": 1}),
            ),
            (
                json!({}),
                json!({"a": {"bb": {"ccc": null}}}),
                json!({"a": {"bb": {}}}),
            ),
        ];
        for (mut target, patch, want) in cases {
            merge_patch(&mut target, &patch);
            assert_eq!(target, want, "{patch}");
        }
    }

    #[test]
    fn content_types() {
        assert_eq!(
            PatchType::from_content_type("application/merge-patch+json; charset=utf-8").ok(),
            Some(PatchType::Merge)
        );
        assert_eq!(
            PatchType::from_content_type("application/json-patch+json")
                .err()
                .map(|e| e.code()),
            Some(415)
        );
    }
}
