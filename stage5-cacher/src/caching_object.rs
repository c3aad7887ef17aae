//! Mirrors apiserver's `pkg/storage/cacher/caching_object.go`: serialize once.
//!
//! A watch event goes to every interested watcher. Upstream wraps the object in a
//! `cachingObject`, which remembers its encoding per serializer, so a thousand
//! watchers cost one `json.Marshal`. [`CachedObject`] does the same for JSON,
//! and goes one step further: the watch cache keeps *only* this encoding of each
//! object, not the decoded tree. Any other encoding (protobuf, a Table row, the
//! metadata alone) it keeps from the first time one is asked for, through
//! [`CacheableObject`].
//!
//! # Memory usage
//!
//! A [`CachedObject`] is the watch cache's compact element: the finished watch
//! line of the event that stored it (`{"type":"ADDED","object":…}\n`, whose
//! middle is the object's JSON, shared as a slice), and, decoded, only what
//! selection and the indexes read: the labels and the field-selector values
//! (`GetAttrs`), packed together in one string. For pods of 924 bytes of JSON
//! the watch cache holds about 1,440 bytes a pod (1,590 with an Added event for
//! each in the ring), where it held 7,360 (7,890) keeping them decoded
//! (`benches/watch_cache_memory.rs`).
//! Whoever needs the object itself ([`CachedObject::object`]: a get, a list of
//! objects, a watch of objects) decodes it from the JSON; the server's lists
//! and watches copy the JSON as it is.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use apimachinery::fields::FieldSource;
use apimachinery::runtime::interfaces::{EncodeFn, Encoding};
use apimachinery::runtime::serializer::streaming::{
    encode_line, encode_object, event_type_name,
};
use apimachinery::runtime::{CacheableObject, Identifier};
use apimachinery::watch::EventType;
use bytes::Bytes;
use kube::core::{Expression, Selector};
use smallvec::SmallVec;
use stage5_storage::{Object, ResourceInfo};

/// An object's other encodings, by identifier; a handful at most.
type Encodings = Mutex<Vec<(Identifier, Encoding)>>;

static OBJECTS_ENCODED: AtomicU64 = AtomicU64::new(0);
static OTHER_ENCODINGS: AtomicU64 = AtomicU64::new(0);
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
    /// The event type `line` was built for; the JSON is the line without its
    /// head (which the type fixes) and its last two bytes.
    line_type: EventType,
    /// `metadata.labels` and the field-selector values (`GetAttrs`), packed.
    attributes: Attributes,
    /// Its other encodings (protobuf, a Table row, ...), made when first asked
    /// for: upstream's `cachingObject.serializations`. Empty until then, one
    /// pointer wide.
    encodings: OnceLock<Box<Encodings>>,
}

impl CachedObject {
    /// Encodes `obj` (of `info`'s type) once, as the line of an `event_type`
    /// event, and keeps its labels and field values.
    pub fn new(info: &ResourceInfo, event_type: EventType, obj: &Object) -> Self {
        let json = encode_object(obj);
        OBJECTS_ENCODED.fetch_add(1, Ordering::Relaxed);
        BYTES_ENCODED.fetch_add(json.len() as u64, Ordering::Relaxed);
        CachedObject::from_json(event_type, &json, Attributes::new(info, obj))
    }

    // ANCHOR_END: cached_object

    fn from_json(
        event_type: EventType,
        json: &[u8],
        attributes: Attributes,
    ) -> Self {
        CachedObject {
            line: encode_line(event_type, json),
            line_type: event_type,
            attributes,
            encodings: OnceLock::new(),
        }
    }

    // ANCHOR: cached_object_reads
    /// The object, decoded from its JSON (a fresh copy on every call).
    pub fn object(&self) -> Arc<Object> {
        match serde_json::from_slice(&self.json()) {
            Ok(obj) => Arc::new(obj),
            // The cache encoded it itself, so this cannot happen.
            Err(error) => {
                tracing::error!(%error, "watch cache: cannot decode its own object");
                Arc::new(Object::default())
            }
        }
    }

    /// The object's JSON: a slice of the line, sharing its allocation.
    pub fn json(&self) -> Bytes {
        // `{"type":"<NAME>","object":` comes first, `}\n` last.
        let start = event_type_name(self.line_type).len() + 20;
        self.line.slice(start..self.line.len() - 2)
    }

    /// The whole watch line (`{"type":…,"object":…}\n`) for this object. The line
    /// of the event that stored the object is shared by every watcher that sends
    /// it; another type's (a watcher that sees the object enter its filter gets
    /// Added for a Modified) is assembled from the shared JSON, a copy.
    pub fn line(&self, event_type: EventType) -> Bytes {
        if event_type == self.line_type {
            self.line.clone()
        } else {
            encode_line(event_type, &self.json())
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
        CachedObject::from_json(event_type, &json, self.attributes.clone())
    }

    /// `metadata.labels` and the field values.
    pub fn attributes(&self) -> &Attributes {
        &self.attributes
    }

    /// The value of the field label `label`.
    pub fn field(&self, label: &str) -> Option<&str> {
        self.attributes.field(label)
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.field("metadata.name").unwrap_or("")
    }

    /// `metadata.namespace`, or `""`.
    pub fn namespace(&self) -> &str {
        self.field("metadata.namespace").unwrap_or("")
    }
}

/// How many encodings other than JSON (protobuf, Table rows, ...) the watch
/// cache's objects have made in this process: with encode-once, one per object
/// and format, however many clients ask.
pub fn other_encodings() -> u64 {
    OTHER_ENCODINGS.load(Ordering::Relaxed)
}

// ANCHOR: cache_encode
/// Mirrors `cachingObject.CacheEncode`: the first request for an encoding
/// makes it, under the object's lock, so two watchers asking at once still
/// encode once; every later request shares it.
impl CacheableObject for CachedObject {
    fn json(&self) -> Bytes {
        CachedObject::json(self)
    }

    fn cache_encode(
        &self,
        id: Identifier,
        encode: &mut EncodeFn<'_>,
    ) -> Result<Encoding, String> {
        let encodings = self.encodings.get_or_init(Box::default);
        let mut encodings = encodings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, kept)) = encodings.iter().find(|(kept, _)| *kept == id) {
            return Ok(Arc::clone(kept));
        }
        let made = encode(&self.json())?;
        OTHER_ENCODINGS.fetch_add(1, Ordering::Relaxed);
        encodings.push((id, Arc::clone(&made)));
        Ok(made)
    }
}
// ANCHOR_END: cache_encode

/// An object's labels and field-selector values, packed: every label key and
/// value, then every field value, in one string, with the end of each. Three
/// labels and a pod's four fields cost one allocation of about 80 bytes, where a
/// `BTreeMap<String, String>` of the labels took seven (about 600) and the
/// fields' strings four more.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attributes {
    /// `key0 value0 key1 value1 … field0 field1 …`, without separators.
    text: Box<str>,
    /// The end of each piece of `text`: two per label, then one per field.
    ends: SmallVec<[u32; 8]>,
    /// How many labels there are.
    labels: u32,
    /// The field labels, in the order of their values: `metadata.name`,
    /// `metadata.namespace` when namespaced, then these.
    field_labels: &'static [&'static str],
    /// Whether `metadata.namespace` is among the fields.
    namespaced: bool,
}

impl Attributes {
    /// Packs `obj`'s labels and the field values `info` selects on
    /// ([`ResourceInfo::fields`]).
    pub fn new(info: &ResourceInfo, obj: &Object) -> Self {
        let labels = obj.metadata.labels.as_ref();
        let label_count = labels.map_or(0, |l| l.len());
        let mut text = String::new();
        let mut ends =
            SmallVec::with_capacity(label_count * 2 + info.field_names().count());
        let end = |text: &String| u32::try_from(text.len()).unwrap_or(u32::MAX);
        for (key, value) in labels.into_iter().flatten() {
            text.push_str(key);
            ends.push(end(&text));
            text.push_str(value);
            ends.push(end(&text));
        }
        for label in info.field_names() {
            text.push_str(&info.field_of(obj, label));
            ends.push(end(&text));
        }
        Attributes {
            text: text.into_boxed_str(),
            ends,
            labels: u32::try_from(label_count).unwrap_or(u32::MAX),
            field_labels: info.field_labels,
            namespaced: info.namespaced,
        }
    }

    /// The `i`-th piece of the text.
    fn piece(&self, i: usize) -> &str {
        let start = i
            .checked_sub(1)
            .map_or(0, |before| self.ends[before] as usize);
        let end = self.ends.get(i).map_or(start, |&end| end as usize);
        self.text.get(start..end).unwrap_or("")
    }

    /// The labels as `(key, value)` pairs, in key order.
    pub fn labels(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        (0..self.labels as usize).map(|i| (self.piece(2 * i), self.piece(2 * i + 1)))
    }

    /// The value of the label `key`.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// How many labels there are.
    pub fn label_count(&self) -> usize {
        self.labels as usize
    }

    /// The value of the field label `label`.
    pub fn field(&self, label: &str) -> Option<&str> {
        let index = match label {
            "metadata.name" => 0,
            "metadata.namespace" if self.namespaced => 1,
            other => {
                let own = self.field_labels.iter().position(|l| *l == other)?;
                own + 1 + usize::from(self.namespaced)
            }
        };
        Some(self.piece(2 * self.labels as usize + index))
    }
}

impl FieldSource for Attributes {
    fn field(&self, label: &str) -> Option<&str> {
        Attributes::field(self, label)
    }
}

/// A label selector's requirements, taken out of kube's [`Selector`] once (it
/// only matches a `BTreeMap`), to match [`Attributes`] with `labels.Selector`'s
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

    /// Mirrors `internalSelector.Matches`: every requirement holds for the
    /// object's labels.
    pub fn matches(&self, attributes: &Attributes) -> bool {
        self.expressions.iter().all(|expression| match expression {
            Expression::In(key, values) => {
                attributes.label(key).is_some_and(|v| values.contains(v))
            }
            Expression::NotIn(key, values) => {
                attributes.label(key).is_none_or(|v| !values.contains(v))
            }
            Expression::Equal(key, value) => {
                attributes.label(key) == Some(value.as_str())
            }
            Expression::NotEqual(key, value) => {
                attributes.label(key) != Some(value.as_str())
            }
            Expression::Exists(key) => attributes.label(key).is_some(),
            Expression::DoesNotExist(key) => attributes.label(key).is_none(),
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
        assert_eq!(later.attributes(), cached.attributes());
    }

    #[test]
    fn packed_labels_and_fields_answer_as_a_label_map_and_fields_do() {
        let map: std::collections::BTreeMap<String, String> =
            [("app", "web"), ("tier", "frontend"), ("example.com/x", "")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        let pod = Object::new(&ResourceInfo::PODS, Some("shop"), "web-0")
            .with_labels(map.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .with_data(serde_json::json!({"spec": {"nodeName": "node-7"}}));
        let packed = Attributes::new(&ResourceInfo::PODS, &pod);
        assert_eq!(packed.label_count(), 3);
        assert_eq!(packed.label("tier"), Some("frontend"));
        assert_eq!(packed.label("example.com/x"), Some(""));
        assert_eq!(packed.label("ap"), None);
        let pairs: Vec<(&str, &str)> = packed.labels().collect();
        let expected: Vec<(&str, &str)> =
            map.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(pairs, expected);
        // Every field label reads as `ResourceInfo::fields` gives it.
        for (label, value) in ResourceInfo::PODS.fields(&pod) {
            assert_eq!(packed.field(label), Some(value.as_str()), "{label}");
        }
        assert_eq!(packed.field("status.phase"), Some(""));
        assert_eq!(packed.field("spec.unknown"), None);
        // A cluster-scoped kind has no namespace field; no labels is fine.
        let node = Object::new(&ResourceInfo::NODES, None, "node-7");
        let node_attrs = Attributes::new(&ResourceInfo::NODES, &node);
        assert_eq!(node_attrs.label_count(), 0);
        assert_eq!(node_attrs.field("metadata.name"), Some("node-7"));
        assert_eq!(node_attrs.field("metadata.namespace"), None);
        let bare = Object::new(&ResourceInfo::PODS, Some("shop"), "bare");
        let unlabelled = Attributes::new(&ResourceInfo::PODS, &bare);
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
                matcher.matches(&packed),
                matches_labels(&parsed, Some(&map)),
                "{selector}"
            );
            assert_eq!(
                matcher.matches(&unlabelled),
                matches_labels(&parsed, None),
                "{selector} without labels"
            );
        }
    }
}
