//! Mirrors apiserver's `pkg/storage/etcd3/event.go`: an etcd event reduced to what
//! the watchChan needs.

use bytes::Bytes;

use crate::kv::{KeyValue, KvEvent, KvEventType};

// ANCHOR: event
/// Mirrors `etcd3.event`: one change, or a progress notification, with the raw
/// values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The key.
    pub key: Bytes,
    /// The new value (empty for a delete or a progress notification).
    pub value: Bytes,
    /// The previous value (empty for a create).
    pub prev_value: Bytes,
    /// The revision of the change (for a delete, the delete's revision; for a
    /// progress notification, the header revision).
    pub rev: i64,
    /// A delete.
    pub is_deleted: bool,
    /// A create.
    pub is_created: bool,
    /// A progress notification: no change, only "everything up to `rev` has been
    /// sent".
    pub is_progress_notify: bool,
    /// The progress notification that ends the initial events of a
    /// `sendInitialEvents` watch.
    pub is_initial_events_end_bookmark: bool,
}
// ANCHOR_END: event

/// Mirrors `parseKV`: a key read by the initial sync becomes a create event.
pub fn parse_kv(kv: &KeyValue) -> Event {
    Event {
        key: kv.key.clone(),
        value: kv.value.clone(),
        prev_value: Bytes::new(),
        rev: kv.mod_revision,
        is_deleted: false,
        is_created: true,
        is_progress_notify: false,
        is_initial_events_end_bookmark: false,
    }
}

/// Mirrors `parseEvent`. A change that is not a create must carry the previous
/// value: without it (for example because it was compacted away) the watch cannot
/// tell what was deleted or filter the old object, so that is an error.
pub fn parse_event(e: &KvEvent) -> Result<Event, String> {
    if !e.is_create() && e.prev_kv.is_none() {
        return Err(format!(
            "etcd event received with PrevKv=nil (key={:?}, modRevision={}, type={})",
            String::from_utf8_lossy(&e.kv.key),
            e.kv.mod_revision,
            match e.kind {
                KvEventType::Put => "PUT",
                KvEventType::Delete => "DELETE",
            }
        ));
    }
    Ok(Event {
        key: e.kv.key.clone(),
        value: e.kv.value.clone(),
        prev_value: e
            .prev_kv
            .as_ref()
            .map(|p| p.value.clone())
            .unwrap_or_default(),
        rev: e.kv.mod_revision,
        is_deleted: e.kind == KvEventType::Delete,
        is_created: e.is_create(),
        is_progress_notify: false,
        is_initial_events_end_bookmark: false,
    })
}

/// Mirrors `progressNotifyEvent`.
pub fn progress_notify_event(rev: i64) -> Event {
    Event {
        key: Bytes::new(),
        value: Bytes::new(),
        prev_value: Bytes::new(),
        rev,
        is_deleted: false,
        is_created: false,
        is_progress_notify: true,
        is_initial_events_end_bookmark: false,
    }
}
