//! Mirrors apiserver's `pkg/storage/cacher/caching_object.go`: serialize once.
//!
//! A watch event goes to every interested watcher. Upstream wraps the object in a
//! `cachingObject`, which remembers its encoding per serializer, so a thousand
//! watchers cost one `json.Marshal`. [`CachedObject`] does the same for the one
//! encoding this server speaks, and goes one step further: the watch cache keeps
//! *only* this encoding of each object, not the decoded tree.
//!
//! # Memory usage
//!
//! A [`CachedObject`] is the watch cache's compact element: the finished watch
//! line of the event that stored it (`{"type":"ADDED","object":…}\n`, whose
//! middle is the object's JSON, shared as a slice), and, decoded, only what
//! selection and the indexes read: the labels (packed in one string) and the
//! field-selector values (`GetAttrs`). For pods of 924 bytes of JSON the watch
//! cache holds about 1,580 bytes a pod (1,730 with an Added event for each in the
//! ring), where it held 7,360 (7,890) keeping them decoded
//! (`benches/watch_cache_memory.rs`).
//! Whoever needs the object itself ([`CachedObject::object`]: a get, a list of
//! objects, a watch of objects) decodes it from the JSON; the server's lists
//! and watches copy the JSON as it is.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use apimachinery::fields::{Fields, field_value};
use bytes::Bytes;
use kube::core::{Expression, Selector};
use stage3_reflector::EventType;
use stage5_storage::encode::{encode_line, encode_object, event_type_name};
use stage5_storage::{Object, ResourceInfo};

static OBJECTS_ENCODED: AtomicU64 = AtomicU64::new(0);
static BYTES_ENCODED: AtomicU64 = AtomicU64::new(0);

/// How many objects the watch cache has encoded in this process, and how many
/// bytes: the cost of "serialize once", for benches and metrics.
pub fn encode_counters() -> (u64, u64) {
    (
        OBJECTS_ENCODED.load(Ordering::Relaxed),
        BYTES_ENCODED.load(Ordering::Relaxed),
    )
}

// ANCHOR: cached_object
/// An object as the watch cache keeps it: its JSON, once, and the attributes a
/// watcher's filter and the store's indexes read. Upstream's `cachingObject`
/// (every watcher that sends this object shares one encoding) and, for
/// selection, its `watchCacheEvent`'s `ObjLabels` and `ObjFields`.
#[derive(Debug)]
pub struct CachedObject {
    /// The watch line of `line_type`: `{"type":…,"object":JSON}\n`.
    line: Bytes,
    /// `JSON`: a slice of `line`, sharing its allocation.
    json: Bytes,
    /// The event type `line` was built for.
    line_type: EventType,
    /// `metadata.labels`.
    labels: Labels,
    /// The field-selector values (`GetAttrs`).
    fields: Fields,
}

impl CachedObject {
    /// Encodes `obj` (of `info`'s type) once, as the line of an `event_type`
    /// event, and keeps its labels and field values.
    pub fn new(info: &ResourceInfo, event_type: EventType, obj: &Object) -> Self {
        let json = encode_object(obj);
        OBJECTS_ENCODED.fetch_add(1, Ordering::Relaxed);
        BYTES_ENCODED.fetch_add(json.len() as u64, Ordering::Relaxed);
        CachedObject::from_json(
            event_type,
            &json,
            Labels::new(obj.metadata.labels.as_ref()),
            info.fields(obj),
        )
    }

    // ANCHOR_END: cached_object

    fn from_json(
        event_type: EventType,
        json: &[u8],
        labels: Labels,
        fields: Fields,
    ) -> Self {
        let line = encode_line(event_type, json);
        // `{"type":"<NAME>","object":` comes first, `}\n` last.
        let start = event_type_name(event_type).len() + 20;
        let json = line.slice(start..line.len() - 2);
        CachedObject {
            line,
            json,
            line_type: event_type,
            labels,
            fields,
        }
    }

    // ANCHOR: cached_object_reads
    /// The object, decoded from its JSON (a fresh copy on every call).
    pub fn object(&self) -> Arc<Object> {
        match serde_json::from_slice(&self.json) {
            Ok(obj) => Arc::new(obj),
            // The cache encoded it itself, so this cannot happen.
            Err(error) => {
                tracing::error!(%error, "watch cache: cannot decode its own object");
                Arc::new(Object::default())
            }
        }
    }

    /// The object's JSON, shared.
    pub fn json(&self) -> &Bytes {
        &self.json
    }

    /// The whole watch line (`{"type":…,"object":…}\n`) for this object. The line
    /// of the event that stored the object is shared by every watcher that sends
    /// it; another type's (a watcher that sees the object enter its filter gets
    /// Added for a Modified) is assembled from the shared JSON, a copy.
    pub fn line(&self, event_type: EventType) -> Bytes {
        if event_type == self.line_type {
            self.line.clone()
        } else {
            encode_line(event_type, &self.json)
        }
    }

    // ANCHOR_END: cached_object_reads

    /// The same object at another resource version (what a watcher whose filter
    /// the object leaves receives as Deleted), encoded as the line of
    /// `event_type`.
    pub fn at_resource_version(
        &self,
        resource_version: u64,
        event_type: EventType,
    ) -> Self {
        let mut obj = (*self.object()).clone();
        obj.metadata.resource_version = Some(resource_version.to_string());
        let json = encode_object(&obj);
        OBJECTS_ENCODED.fetch_add(1, Ordering::Relaxed);
        BYTES_ENCODED.fetch_add(json.len() as u64, Ordering::Relaxed);
        CachedObject::from_json(
            event_type,
            &json,
            self.labels.clone(),
            self.fields.clone(),
        )
    }

    /// `metadata.labels`.
    pub fn labels(&self) -> &Labels {
        &self.labels
    }

    /// The field-selector values.
    pub fn fields(&self) -> &Fields {
        &self.fields
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        field_value(&self.fields, "metadata.name").unwrap_or("")
    }

    /// `metadata.namespace`, or `""`.
    pub fn namespace(&self) -> &str {
        field_value(&self.fields, "metadata.namespace").unwrap_or("")
    }
}

/// An object's labels, packed: every key and value in one string, with the end of
/// each. A map of three labels costs two allocations (about 60 bytes) where a
/// `BTreeMap<String, String>` costs seven (about 600).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Labels {
    /// `key0 value0 key1 value1 …`, without separators.
    text: Box<str>,
    /// The end of each key and value in `text`: `[key0_end, value0_end, …]`.
    ends: Box<[u32]>,
}

impl Labels {
    /// Packs a label map (`None` is no labels).
    pub fn new(labels: Option<&std::collections::BTreeMap<String, String>>) -> Self {
        let Some(labels) = labels.filter(|l| !l.is_empty()) else {
            return Labels::default();
        };
        let mut text = String::new();
        let mut ends = Vec::with_capacity(labels.len() * 2);
        for (key, value) in labels {
            text.push_str(key);
            ends.push(u32::try_from(text.len()).unwrap_or(u32::MAX));
            text.push_str(value);
            ends.push(u32::try_from(text.len()).unwrap_or(u32::MAX));
        }
        Labels {
            text: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
        }
    }

    /// The labels as `(key, value)` pairs, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.ends.chunks_exact(2).scan(0usize, |start, ends| {
            let (key_end, value_end) = (ends[0] as usize, ends[1] as usize);
            let key = self.text.get(*start..key_end).unwrap_or("");
            let value = self.text.get(key_end..value_end).unwrap_or("");
            *start = value_end;
            Some((key, value))
        })
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// How many labels there are.
    pub fn len(&self) -> usize {
        self.ends.len() / 2
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

/// A label selector's requirements, taken out of kube's [`Selector`] once (it
/// only matches a `BTreeMap`), to match [`Labels`] with `labels.Selector`'s
/// rules.
#[derive(Clone, Debug, Default)]
pub struct LabelMatcher {
    expressions: Vec<Expression>,
}

impl LabelMatcher {
    /// The requirements of `selector`.
    pub fn new(selector: &Selector) -> Self {
        LabelMatcher {
            expressions: selector.clone().into_iter().collect(),
        }
    }

    /// Whether it selects everything.
    pub fn selects_all(&self) -> bool {
        self.expressions.is_empty()
    }

    /// Mirrors `internalSelector.Matches`: every requirement holds for `labels`.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.expressions.iter().all(|expression| match expression {
            Expression::In(key, values) => {
                labels.get(key).is_some_and(|v| values.contains(v))
            }
            Expression::NotIn(key, values) => {
                labels.get(key).is_none_or(|v| !values.contains(v))
            }
            Expression::Equal(key, value) => labels.get(key) == Some(value.as_str()),
            Expression::NotEqual(key, value) => {
                labels.get(key) != Some(value.as_str())
            }
            Expression::Exists(key) => labels.get(key).is_some(),
            Expression::DoesNotExist(key) => labels.get(key).is_none(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apimachinery::labels::{matches_labels, parse_label_selector};

    #[test]
    fn the_line_of_the_stored_event_is_shared_and_holds_the_json() {
        let pod = Object::new(&ResourceInfo::PODS, Some("default"), "web-0")
            .with_labels([("app", "web")]);
        let cached = CachedObject::new(&ResourceInfo::PODS, EventType::Added, &pod);
        assert_eq!(&cached.json()[..], &encode_object(&pod)[..]);
        let added = cached.line(EventType::Added);
        assert!(std::ptr::eq(
            added.as_ptr(),
            cached.line(EventType::Added).as_ptr()
        ));
        // The JSON is the middle of the line, not a copy.
        assert!(std::ptr::eq(cached.json().as_ptr(), added[25..].as_ptr()));
        let text = std::str::from_utf8(&added).unwrap();
        assert!(text.starts_with(r#"{"type":"ADDED","object":{"#), "{text}");
        assert!(text.ends_with("}}\n"));
        let deleted = cached.line(EventType::Deleted);
        assert!(deleted.starts_with(br#"{"type":"DELETED","object":{"#));
        assert_eq!(&deleted[27..deleted.len() - 2], &cached.json()[..]);
        assert_eq!(*cached.object(), pod);
        assert_eq!(cached.name(), "web-0");
        assert_eq!(cached.namespace(), "default");
        let later = cached.at_resource_version(7, EventType::Deleted);
        assert_eq!(later.object().resource_version(), "7");
        assert_eq!(later.labels(), cached.labels());
    }

    #[test]
    fn packed_labels_match_as_a_label_map_does() {
        let map: std::collections::BTreeMap<String, String> =
            [("app", "web"), ("tier", "frontend"), ("example.com/x", "")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        let labels = Labels::new(Some(&map));
        assert_eq!(labels.len(), 3);
        assert_eq!(labels.get("tier"), Some("frontend"));
        assert_eq!(labels.get("example.com/x"), Some(""));
        assert_eq!(labels.get("ap"), None);
        for selector in [
            "",
            "app=web",
            "app!=web",
            "app=db",
            "tier in (frontend,backend)",
            "tier notin (frontend)",
            "missing notin (a)",
            "example.com/x",
            "!example.com/x",
            "!missing,app==web",
            "app in (db)",
        ] {
            let parsed = parse_label_selector(selector).unwrap();
            let matcher = LabelMatcher::new(&parsed);
            assert_eq!(
                matcher.matches(&labels),
                matches_labels(&parsed, Some(&map)),
                "{selector}"
            );
            assert_eq!(
                matcher.matches(&Labels::default()),
                matches_labels(&parsed, None),
                "{selector} without labels"
            );
        }
    }
}
