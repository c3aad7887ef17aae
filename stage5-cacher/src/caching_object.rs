//! Mirrors apiserver's `pkg/storage/cacher/caching_object.go`: serialize once.
//!
//! A watch event goes to every interested watcher. Upstream wraps the object in a
//! `cachingObject`, which remembers its encoding per serializer, so a thousand
//! watchers cost one `json.Marshal`. [`CachedObject`] does the same for the one
//! encoding this server speaks, and also keeps the finished watch line per event
//! type, so a watcher's write is a reference-count increment.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use stage3_reflector::EventType;
use stage5_storage::Object;
use stage5_storage::encode::{encode_line, encode_object};

static OBJECTS_ENCODED: AtomicU64 = AtomicU64::new(0);
static BYTES_ENCODED: AtomicU64 = AtomicU64::new(0);

/// How many objects [`CachedObject::json`] has encoded in this process, and how many
/// bytes: the cost of "serialize once", for benches and metrics.
pub fn encode_counters() -> (u64, u64) {
    (
        OBJECTS_ENCODED.load(Ordering::Relaxed),
        BYTES_ENCODED.load(Ordering::Relaxed),
    )
}

// ANCHOR: cached_object
/// An object and, once some watcher needs it, its JSON: upstream's `cachingObject`.
/// Every watcher that sends this object shares one encoding.
#[derive(Debug)]
pub struct CachedObject {
    object: Arc<Object>,
    json: OnceLock<Bytes>,
    /// The finished watch lines, per event type (Added, Modified, Deleted), also
    /// shared.
    lines: [OnceLock<Bytes>; 3],
}

impl CachedObject {
    /// Wraps an object; nothing is encoded yet.
    pub fn new(object: Arc<Object>) -> Self {
        CachedObject {
            object,
            json: OnceLock::new(),
            lines: [OnceLock::new(), OnceLock::new(), OnceLock::new()],
        }
    }

    /// The object.
    pub fn object(&self) -> &Arc<Object> {
        &self.object
    }

    /// The object's JSON, encoded on first use and then shared.
    pub fn json(&self) -> &Bytes {
        self.json.get_or_init(|| {
            let json = encode_object(&self.object);
            OBJECTS_ENCODED.fetch_add(1, Ordering::Relaxed);
            BYTES_ENCODED.fetch_add(json.len() as u64, Ordering::Relaxed);
            json
        })
    }

    /// The whole watch line (`{"type":…,"object":…}\n`) for this object, built once
    /// per event type and shared by every watcher that sends it.
    pub fn line(&self, event_type: EventType) -> Bytes {
        let slot = match event_type {
            EventType::Added => &self.lines[0],
            EventType::Modified => &self.lines[1],
            EventType::Deleted => &self.lines[2],
            other => return encode_line(other, self.json()),
        };
        slot.get_or_init(|| encode_line(event_type, self.json()))
            .clone()
    }
}
// ANCHOR_END: cached_object

#[cfg(test)]
mod tests {
    use super::*;
    use stage5_storage::ResourceInfo;

    #[test]
    fn one_encoding_and_one_line_per_event_type_are_shared() {
        let pod =
            Arc::new(Object::new(&ResourceInfo::PODS, Some("default"), "web-0"));
        let cached = CachedObject::new(pod);
        let json = cached.json().clone();
        assert!(std::ptr::eq(json.as_ptr(), cached.json().as_ptr()));
        let added = cached.line(EventType::Added);
        assert!(std::ptr::eq(
            added.as_ptr(),
            cached.line(EventType::Added).as_ptr()
        ));
        let text = std::str::from_utf8(&added).unwrap();
        assert!(text.starts_with(r#"{"type":"ADDED","object":"#), "{text}");
        assert!(text.ends_with('\n'));
        assert_ne!(added, cached.line(EventType::Deleted));
    }
}
