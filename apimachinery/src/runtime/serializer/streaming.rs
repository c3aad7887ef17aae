//! Watch events on the wire: one JSON object per line, as the apiserver's watch
//! encoder streams them (`{"type":"ADDED","object":{…}}`). Mirrors apimachinery's
//! [`pkg/runtime/serializer/streaming`] (the `Encoder` that writes one framed
//! object after another; JSON's frames are simply concatenated objects) and the
//! envelope of each event, `metav1.WatchEvent` ([`pkg/apis/meta/v1/watch.go`]:
//! `Type` and the embedded `Object`).
//!
//! An [`EncodedEvent`] is a finished line. The server's Cacher encodes each object
//! once and shares the bytes between every watcher that receives it (upstream's
//! `cachingObject`); other storages encode per watch with [`encode_watch_event`].
//!
//! [`pkg/runtime/serializer/streaming`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/runtime/serializer/streaming/streaming.go
//! [`pkg/apis/meta/v1/watch.go`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/apis/meta/v1/watch.go

use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use futures::StreamExt;
use futures::stream::BoxStream;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use kube::core::TypeMeta;
use serde::Serialize;

use crate::api::errors::ApiStatus;
use crate::runtime::CacheableObject;
use crate::watch::{Bookmark, EventType, Watch, WatchEvent};

/// One watch event, encoded: its type and the newline-terminated JSON line,
/// and, when the object came from a cache that keeps its encodings, that
/// object (so a watch in another format encodes it once for every watcher).
#[derive(Clone, Debug)]
pub struct EncodedEvent {
    /// The event's type.
    pub event_type: EventType,
    /// `{"type":"…","object":…}\n`.
    pub line: Bytes,
    /// The event's object, when it can keep its other encodings.
    pub object: Option<Arc<dyn CacheableObject>>,
}

impl EncodedEvent {
    /// An event whose object keeps no other encoding.
    pub fn new(event_type: EventType, line: Bytes) -> Self {
        EncodedEvent {
            event_type,
            line,
            object: None,
        }
    }
}

/// Two events are equal when their types and lines are.
impl PartialEq for EncodedEvent {
    fn eq(&self, other: &Self) -> bool {
        self.event_type == other.event_type && self.line == other.line
    }
}

impl Eq for EncodedEvent {}

/// A stream of encoded watch events; it ends when the watch ends.
pub type EncodedWatch = BoxStream<'static, EncodedEvent>;

/// The wire name of an event type.
pub fn event_type_name(event_type: EventType) -> &'static str {
    match event_type {
        EventType::Added => "ADDED",
        EventType::Modified => "MODIFIED",
        EventType::Deleted => "DELETED",
        EventType::Bookmark => "BOOKMARK",
        EventType::Error => "ERROR",
    }
}

/// Assembles a line from an already encoded object: `{"type":T,"object":OBJECT}\n`.
pub fn encode_line(event_type: EventType, object_json: &[u8]) -> Bytes {
    let name = event_type_name(event_type);
    let mut line = BytesMut::with_capacity(object_json.len() + name.len() + 24);
    line.put_slice(b"{\"type\":\"");
    line.put_slice(name.as_bytes());
    line.put_slice(b"\",\"object\":");
    line.put_slice(object_json);
    line.put_slice(b"}\n");
    line.freeze()
}

/// Encodes an object as JSON (a failure, which a JSON object never has, gives
/// `{}`).
pub fn encode_object<T: Serialize + ?Sized>(obj: &T) -> Bytes {
    serde_json::to_vec(obj)
        .map(Bytes::from)
        .unwrap_or_else(|_| Bytes::from_static(b"{}"))
}

/// A bookmark object of the watched type (`types`): only kind, apiVersion and
/// metadata (resourceVersion and annotations). kube-client fails to decode a
/// bookmark without kind and apiVersion.
pub fn encode_bookmark(types: &TypeMeta, bookmark: &Bookmark) -> Bytes {
    let mut metadata = serde_json::Map::new();
    metadata.insert(
        "resourceVersion".into(),
        serde_json::Value::String(bookmark.resource_version.clone()),
    );
    if !bookmark.annotations.is_empty() {
        metadata.insert(
            "annotations".into(),
            serde_json::to_value(&bookmark.annotations).unwrap_or_default(),
        );
    }
    let object = serde_json::json!({
        "kind": types.kind,
        "apiVersion": types.api_version,
        "metadata": metadata,
    });
    Bytes::from(object.to_string())
}

/// A `Status` object with kind and apiVersion, as the ERROR event and error bodies
/// carry it.
pub fn encode_status(status: &Status) -> Bytes {
    let mut value = serde_json::to_value(status).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.insert("kind".into(), "Status".into());
        map.insert("apiVersion".into(), "v1".into());
    }
    Bytes::from(value.to_string())
}

/// Encodes one event of a watch of the type `types`.
pub fn encode_watch_event<T: Serialize>(
    types: &TypeMeta,
    event: &WatchEvent<T>,
) -> EncodedEvent {
    let event_type = event.event_type();
    let object = match event {
        WatchEvent::Added(obj)
        | WatchEvent::Modified(obj)
        | WatchEvent::Deleted(obj) => encode_object(obj.as_ref()),
        WatchEvent::Bookmark(bookmark) => encode_bookmark(types, bookmark),
        WatchEvent::Error(status) => encode_status(status),
    };
    EncodedEvent::new(event_type, encode_line(event_type, &object))
}

/// Encodes every event of a watch of the type `types`; a stream error becomes an
/// ERROR event and ends it.
pub fn encode_watch<T, E>(types: TypeMeta, watch: Watch<T, E>) -> EncodedWatch
where
    T: Serialize + Send + Sync + 'static,
    E: ApiStatus + Send + 'static,
{
    encode_watch_with(watch, move |event| encode_watch_event(&types, event))
}

/// Encodes every event of a watch with `encode` (a transformed encoding, for
/// one); a stream error becomes an ERROR event with the error's status, encoded
/// too, and ends it.
pub fn encode_watch_with<T, E>(
    watch: Watch<T, E>,
    mut encode: impl FnMut(&WatchEvent<T>) -> EncodedEvent + Send + 'static,
) -> EncodedWatch
where
    T: Send + Sync + 'static,
    E: ApiStatus + Send + 'static,
{
    watch
        .scan(false, move |ended, item| {
            if *ended {
                return futures::future::ready(None);
            }
            let event = match item {
                Ok(event) => event,
                Err(error) => {
                    *ended = true;
                    WatchEvent::Error(Box::new(error.status()))
                }
            };
            futures::future::ready(Some(encode(&event)))
        })
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployments() -> TypeMeta {
        TypeMeta {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
        }
    }

    #[test]
    fn bookmarks_carry_kind_api_version_and_annotations() {
        let line = encode_watch_event::<()>(
            &deployments(),
            &WatchEvent::Bookmark(Bookmark::initial_events_end("42")),
        );
        let value: serde_json::Value = serde_json::from_slice(&line.line).unwrap();
        assert_eq!(value["type"], "BOOKMARK");
        assert_eq!(value["object"]["kind"], "Deployment");
        assert_eq!(value["object"]["apiVersion"], "apps/v1");
        assert_eq!(value["object"]["metadata"]["resourceVersion"], "42");
        assert_eq!(
            value["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
            "true"
        );
        assert!(line.line.ends_with(b"\n"));
    }

    #[test]
    fn errors_are_status_objects() {
        let status = Status {
            code: Some(410),
            reason: Some("Expired".into()),
            message: Some("too old".into()),
            status: Some("Failure".into()),
            ..Status::default()
        };
        let line = encode_watch_event::<()>(
            &deployments(),
            &WatchEvent::Error(Box::new(status)),
        );
        let value: serde_json::Value = serde_json::from_slice(&line.line).unwrap();
        assert_eq!(value["type"], "ERROR");
        assert_eq!(value["object"]["kind"], "Status");
        assert_eq!(value["object"]["code"], 410);
        assert_eq!(value["object"]["reason"], "Expired");
    }

    /// What breaks a stream in this test: a status of its own.
    struct Broken;

    impl ApiStatus for Broken {
        fn status(&self) -> Status {
            Status {
                code: Some(500),
                reason: Some("InternalError".into()),
                ..Status::default()
            }
        }
    }

    #[tokio::test]
    async fn a_stream_error_becomes_a_last_error_event() {
        let watch: Watch<u32, Broken> = Watch::from_items([
            Ok(WatchEvent::Added(std::sync::Arc::new(7))),
            Err(Broken),
            Ok(WatchEvent::Added(std::sync::Arc::new(8))),
        ]);
        let lines: Vec<EncodedEvent> =
            encode_watch(deployments(), watch).collect().await;
        assert_eq!(lines.len(), 2, "nothing after the error");
        assert_eq!(&lines[0].line[..], b"{\"type\":\"ADDED\",\"object\":7}\n");
        let value: serde_json::Value =
            serde_json::from_slice(&lines[1].line).unwrap();
        assert_eq!(value["type"], "ERROR");
        assert_eq!(value["object"]["code"], 500);
    }
}
