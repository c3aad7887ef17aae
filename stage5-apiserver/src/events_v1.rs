//! `events.k8s.io/v1` Events, served from the core `v1` event storage: mirrors
//! kube-apiserver's `pkg/registry/events/rest` (the `events.k8s.io` group's
//! storage is the core event registry) and the conversions of
//! `pkg/apis/events/v1/conversion.go` (`Convert_v1_Event_To_core_Event`,
//! `Convert_core_Event_To_v1_Event`).
//!
//! One object, two shapes: an Event written through either group is read back
//! through both, as on a cluster where `kubectl get events` (core `v1`) shows
//! the Events a client-go `events.EventRecorder` or kube-rs's `Recorder` wrote
//! through `events.k8s.io/v1`. [`EventsV1Storage`] wraps the core storage and
//! converts each object on the way in and out, and renames the field selector
//! labels (`regarding.name` is `involvedObject.name` in storage), as the
//! scheme's field label conversion for `events.k8s.io/v1` does.
//!
//! | `events.k8s.io/v1` | core `v1` |
//! |---|---|
//! | `regarding` | `involvedObject` |
//! | `note` | `message` |
//! | `reportingController` | `reportingComponent` |
//! | `deprecatedSource` | `source` |
//! | `deprecatedFirstTimestamp` | `firstTimestamp` |
//! | `deprecatedLastTimestamp` | `lastTimestamp` |
//! | `deprecatedCount` | `count` |
//!
//! `eventTime`, `series`, `reportingInstance`, `action`, `reason`, `related`
//! and `type` have the same name in both. Where upstream differs: its
//! `events.k8s.io/v1` validation also requires `eventTime`,
//! `reportingController`, `reportingInstance` and `action` on create; here an
//! Event is validated as a core one.

use std::sync::Arc;

use apimachinery::apis::meta::v1::{ListOptions, WatchOptions};
use apimachinery::watch::WatchEvent;
use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::{Map, Value};
use stage5_storage::Watch;
use stage5_storage::{
    GetOptions, KeyScope, ListResult, Object, Preconditions, ResourceInfo,
    SelectionPredicate, Storage, StorageError, UpdateFn,
};

/// The renamed fields, as `(events.k8s.io/v1, core v1)`.
const RENAMED: [(&str, &str); 7] = [
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

/// Mirrors `Convert_v1_Event_To_core_Event`: an `events.k8s.io/v1` Event in
/// its core form.
pub fn to_core(event: &Object) -> Object {
    convert(event, &ResourceInfo::EVENTS, |(v1, core)| (v1, core))
}

/// Mirrors `Convert_core_Event_To_v1_Event`: a core Event in its
/// `events.k8s.io/v1` form.
pub fn to_v1(event: &Object) -> Object {
    convert(event, &ResourceInfo::EVENTS_V1, |(v1, core)| (core, v1))
}

fn convert(
    event: &Object,
    to: &ResourceInfo,
    direction: fn((&'static str, &'static str)) -> (&'static str, &'static str),
) -> Object {
    let mut next = event.clone();
    next.types = Some(to.type_meta());
    if let Value::Object(fields) = &mut next.data {
        let mut renamed = Map::new();
        for pair in RENAMED {
            let (from, into) = direction(pair);
            if let Some(value) = fields.remove(from) {
                renamed.insert(into.to_string(), value);
            }
        }
        fields.extend(renamed);
    }
    next
}

/// A field selector label of `events.k8s.io/v1` in its core form: mirrors the
/// field label conversion the scheme registers for it.
fn core_label(label: &str) -> String {
    match label.split_once('.') {
        Some(("regarding", rest)) => format!("involvedObject.{rest}"),
        _ if label == "reportingController" => "reportingComponent".into(),
        _ => label.to_string(),
    }
}

/// The core event storage, seen as `events.k8s.io/v1`.
pub struct EventsV1Storage {
    core: Arc<dyn Storage>,
}

impl EventsV1Storage {
    /// Serves `core` (the core `v1` events' storage) as `events.k8s.io/v1`.
    pub fn new(core: Arc<dyn Storage>) -> Self {
        EventsV1Storage { core }
    }

    /// A key the handlers built for `events.k8s.io/v1`, in the core storage.
    fn core_key(&self, key: String) -> String {
        let ours = ResourceInfo::EVENTS_V1.key_prefix();
        match key.strip_prefix(&ours) {
            Some(rest) => format!("{}{rest}", self.core.info().key_prefix()),
            None => key,
        }
    }
}

fn core_predicate(predicate: SelectionPredicate) -> SelectionPredicate {
    SelectionPredicate {
        field: predicate.field.with_renamed_fields(core_label),
        ..predicate
    }
}

fn v1(object: Arc<Object>) -> Arc<Object> {
    Arc::new(to_v1(&object))
}

impl Storage for EventsV1Storage {
    fn info(&self) -> &ResourceInfo {
        &ResourceInfo::EVENTS_V1
    }

    fn create(
        &self,
        key: String,
        obj: Object,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        let key = self.core_key(key);
        Box::pin(async move { self.core.create(key, to_core(&obj)).await.map(v1) })
    }

    fn get_with(
        &self,
        key: String,
        options: GetOptions,
    ) -> BoxFuture<'_, Result<Option<Arc<Object>>, StorageError>> {
        let key = self.core_key(key);
        Box::pin(async move { Ok(self.core.get_with(key, options).await?.map(v1)) })
    }

    fn get_list_scoped(
        &self,
        key: String,
        scope: KeyScope,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<ListResult, StorageError>> {
        let key = self.core_key(key);
        Box::pin(async move {
            let mut list = self
                .core
                .get_list_scoped(key, scope, options, core_predicate(predicate))
                .await?;
            list.items = list.items.into_iter().map(v1).collect();
            Ok(list)
        })
    }

    fn guaranteed_update_with(
        &self,
        key: String,
        ignore_not_found: bool,
        preconditions: Preconditions,
        mut update: UpdateFn,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        let key = self.core_key(key);
        let update: UpdateFn = Box::new(move |current: &Object| {
            update(&to_v1(current)).map(|next| to_core(&next))
        });
        Box::pin(async move {
            self.core
                .guaranteed_update_with(key, ignore_not_found, preconditions, update)
                .await
                .map(v1)
        })
    }

    fn delete(
        &self,
        key: String,
        preconditions: Preconditions,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        let key = self.core_key(key);
        Box::pin(async move { self.core.delete(key, preconditions).await.map(v1) })
    }

    fn watch_scoped(
        &self,
        key: String,
        scope: KeyScope,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<Watch<Object>, StorageError>> {
        let key = self.core_key(key);
        Box::pin(async move {
            let watch = self
                .core
                .watch_scoped(key, scope, options, core_predicate(predicate))
                .await?;
            Ok(Watch::new(watch.map(|item| {
                item.map(|event| match event {
                    WatchEvent::Added(o) => WatchEvent::Added(v1(o)),
                    WatchEvent::Modified(o) => WatchEvent::Modified(v1(o)),
                    WatchEvent::Deleted(o) => WatchEvent::Deleted(v1(o)),
                    other => other,
                })
            })))
        })
    }

    fn count(&self, key: String) -> BoxFuture<'_, Result<i64, StorageError>> {
        let key = self.core_key(key);
        self.core.count(key)
    }

    fn get_current_resource_version(
        &self,
    ) -> BoxFuture<'_, Result<u64, StorageError>> {
        self.core.get_current_resource_version()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_event_converts_both_ways_without_loss() {
        let v1_event = Object::new(&ResourceInfo::EVENTS_V1, Some("default"), "e1")
            .with_data(json!({
                "regarding": {"kind": "Pod", "name": "web"},
                "note": "pulled",
                "reason": "Pulled",
                "type": "Normal",
                "reportingController": "kubelet",
                "reportingInstance": "node-1",
                "action": "Pull",
                "eventTime": "2024-01-01T00:00:00.000000Z",
                "deprecatedCount": 3,
            }));
        let core = to_core(&v1_event);
        assert_eq!(core.types, Some(ResourceInfo::EVENTS.type_meta()));
        assert_eq!(
            core.data,
            json!({
                "involvedObject": {"kind": "Pod", "name": "web"},
                "message": "pulled",
                "reason": "Pulled",
                "type": "Normal",
                "reportingComponent": "kubelet",
                "reportingInstance": "node-1",
                "action": "Pull",
                "eventTime": "2024-01-01T00:00:00.000000Z",
                "count": 3,
            })
        );
        assert_eq!(to_v1(&core), v1_event);
    }

    #[test]
    fn field_labels_are_renamed_as_the_scheme_converts_them() {
        assert_eq!(core_label("regarding.name"), "involvedObject.name");
        assert_eq!(core_label("reportingController"), "reportingComponent");
        assert_eq!(core_label("reason"), "reason");
        assert_eq!(core_label("metadata.name"), "metadata.name");
    }
}
