//! Writing an answer in the media type the client negotiated: mirrors
//! apiserver's `pkg/endpoints/handlers/responsewriters/writers.go`
//! (`WriteObjectNegotiated`, `ErrorNegotiated`, `SerializeObject`) for
//! `application/vnd.kubernetes.protobuf`, and the watch's protobuf framing
//! from `handlers/watch.go` (`serveWatchHandler`: the embedded encoder inside
//! a length-delimited frame writer).
//!
//! The server keeps every object as JSON. A protobuf answer is that JSON
//! written as protobuf ([`protobuf::marshal`]):
//! - an object or a `Status` (a get, a write's answer, an error): the JSON
//!   answer, rewritten ([`negotiated`]);
//! - a list from the watch cache: each item's message bytes, which the cached
//!   object keeps after the first time ([`PROTOBUF`], upstream's
//!   `cachingObject`), then shared by every list that holds it;
//! - a watch: each event's frame, kept per event type by the cached object,
//!   so a thousand watchers cost one encoding ([`watch_frames`]).

use std::ops::Range;
use std::sync::Arc;

use apimachinery::runtime::serializer::protobuf::{self, ListMeta};
use apimachinery::runtime::serializer::streaming::{
    EncodedEvent, EncodedWatch, event_type_name,
};
use apimachinery::runtime::{CacheableObject, Identifier, cache_encode};
use apimachinery::watch::EventType;
use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::StreamExt;
use serde_json::Value;
use stage5_storage::{EncodedListResult, ResourceInfo, StorageError};

use super::negotiation::MediaType;
use super::response::{chunks_response, list_meta, partial_metadata_json};
use crate::printers::TableMeta;
use crate::status::ApiError;

/// The encoding a cached object keeps for protobuf answers ([`ProtobufObject`]).
pub const PROTOBUF: Identifier = "protobuf";
/// The frame of a protobuf watch event, one per event type.
const PROTOBUF_WATCH: [Identifier; 3] = [
    "protobuf;stream=watch;type=ADDED",
    "protobuf;stream=watch;type=MODIFIED",
    "protobuf;stream=watch;type=DELETED",
];
/// A `PartialObjectMetadata`'s message bytes, one per `meta.k8s.io` version.
const PROTOBUF_METADATA: [Identifier; 2] = [
    "protobuf;as=PartialObjectMetadata;v=v1",
    "protobuf;as=PartialObjectMetadata;v=v1beta1",
];
/// A Table row: the printed cells and row conditions.
pub const TABLE_ROW: Identifier = "table-row";
/// A `PartialObjectMetadata`'s JSON, one per `meta.k8s.io` version.
const JSON_METADATA: [Identifier; 2] = [
    "json;as=PartialObjectMetadata;v=v1",
    "json;as=PartialObjectMetadata;v=v1beta1",
];

// ANCHOR: protobuf_object
/// An object's protobuf body (`k8s\0`, the `Unknown` envelope, the message),
/// and where its message lies in it (what a list's items hold).
#[derive(Debug)]
pub struct ProtobufObject {
    /// The whole body, as a get answers it and a watch frame embeds it.
    pub body: Bytes,
    /// The message within `body`.
    pub message: Range<usize>,
}
// ANCHOR_END: protobuf_object

impl ProtobufObject {
    /// Encodes an object's JSON (with its `apiVersion` and `kind`).
    pub fn from_json(json: &[u8]) -> Result<Self, String> {
        Self::from_json_of(json, "", "")
    }

    /// Encodes an object's JSON; one without `apiVersion` or `kind` is of
    /// `api_version` and `kind` (the listed resource's), as an envelope
    /// without a type takes the endpoint's on decode.
    pub fn from_json_of(
        json: &[u8],
        api_version: &str,
        kind: &str,
    ) -> Result<Self, String> {
        let value: Value =
            serde_json::from_slice(json).map_err(|e| e.to_string())?;
        let api_version = value["apiVersion"]
            .as_str()
            .filter(|v| !v.is_empty())
            .unwrap_or(api_version);
        let kind = value["kind"]
            .as_str()
            .filter(|k| !k.is_empty())
            .unwrap_or(kind);
        let message = protobuf::marshal(api_version, kind, &value)
            .map_err(|e| e.to_string())?;
        let body = protobuf::envelope(api_version, kind, &message);
        // The envelope ends with the message and two empty strings.
        let end = body.len() - 4;
        Ok(ProtobufObject {
            message: end - message.len()..end,
            body: Bytes::from(body),
        })
    }

    /// The message bytes, shared with the body.
    pub fn message(&self) -> Bytes {
        self.body.slice(self.message.clone())
    }
}

fn internal(message: String) -> ApiError {
    ApiError::from(StorageError::Internal(format!(
        "cannot encode the object as protobuf: {message}"
    )))
}

/// The protobuf encoding of a listed object of `info`'s type: kept by the
/// watch cache's object after the first time, or made now for an object from
/// etcd.
fn protobuf_object(
    info: &ResourceInfo,
    json: &Bytes,
    cacheable: Option<&Arc<dyn CacheableObject>>,
) -> Result<Arc<ProtobufObject>, ApiError> {
    let api_version = info.api_version();
    let encode =
        |json: &[u8]| ProtobufObject::from_json_of(json, &api_version, info.kind);
    match cacheable {
        Some(object) => cache_encode(object.as_ref(), PROTOBUF, encode),
        None => encode(json).map(Arc::new),
    }
    .map_err(internal)
}

/// A list in protobuf (`PodList`, ...): each item's message bytes as the
/// watch cache keeps them, shared, not copied.
pub fn protobuf_list(
    info: &ResourceInfo,
    result: &EncodedListResult,
) -> Result<Response, ApiError> {
    let items = result
        .items
        .iter()
        .enumerate()
        .map(|(i, json)| {
            protobuf_object(info, json, result.cacheable.get(i)).map(|o| o.message())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let list_type = info.list_type_meta();
    Ok(chunks_response(
        protobuf::list_chunks(
            &list_type.api_version,
            &list_type.kind,
            &protobuf_list_meta(&list_meta(result)),
            &items,
        ),
        protobuf::CONTENT_TYPE,
    ))
}

/// A list's `metadata` as protobuf's `ListMeta`.
fn protobuf_list_meta(meta: &TableMeta) -> ListMeta<'_> {
    ListMeta {
        resource_version: &meta.resource_version,
        continue_token: &meta.continue_token,
        remaining_item_count: meta.remaining_item_count,
    }
}

/// The identifier of a kept `PartialObjectMetadata` of `api_version`
/// (`meta.k8s.io/v1` or `v1beta1`) in `media_type`.
pub(crate) fn metadata_id(api_version: &str, media_type: MediaType) -> Identifier {
    let at = usize::from(api_version.ends_with("v1beta1"));
    match media_type {
        MediaType::Json => JSON_METADATA[at],
        MediaType::Protobuf => PROTOBUF_METADATA[at],
    }
}

/// The items of a `PartialObjectMetadataList` of `api_version`, in
/// `media_type`: each object's metadata alone, kept by the watch cache's
/// object after the first time.
pub fn partial_metadata_items(
    result: &EncodedListResult,
    api_version: &'static str,
    media_type: MediaType,
) -> Result<Vec<Bytes>, ApiError> {
    let encode = move |json: &[u8]| -> Result<Bytes, String> {
        let partial = partial_metadata_json(json, api_version)?;
        match media_type {
            MediaType::Json => Ok(partial),
            MediaType::Protobuf => {
                let value: Value =
                    serde_json::from_slice(&partial).map_err(|e| e.to_string())?;
                protobuf::marshal(api_version, "PartialObjectMetadata", &value)
                    .map(Bytes::from)
                    .map_err(|e| e.to_string())
            }
        }
    };
    let id = metadata_id(api_version, media_type);
    result
        .items
        .iter()
        .enumerate()
        .map(|(i, json)| match result.cacheable.get(i) {
            Some(object) => {
                cache_encode(object.as_ref(), id, encode).map(|b| (*b).clone())
            }
            None => encode(json),
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(internal)
}

/// A `PartialObjectMetadataList` in protobuf.
pub fn protobuf_partial_metadata_list(
    items: &[Bytes],
    api_version: &'static str,
    meta: &TableMeta,
) -> Response {
    chunks_response(
        protobuf::list_chunks(
            api_version,
            "PartialObjectMetadataList",
            &protobuf_list_meta(meta),
            items,
        ),
        protobuf::CONTENT_TYPE,
    )
}

/// A watch's events as protobuf frames. An object from the watch cache keeps
/// its frame per event type: the first watcher to send it encodes, every
/// other shares the bytes. Bookmarks, errors and objects from elsewhere are
/// encoded from their JSON line.
pub fn watch_frames(watch: EncodedWatch) -> EncodedWatch {
    watch
        .map(|event| {
            let frame = match (&event.object, event.event_type) {
                (Some(object), EventType::Added | EventType::Modified | EventType::Deleted) => {
                    cached_frame(object.as_ref(), event.event_type)
                }
                _ => frame_of_line(&event),
            };
            match frame {
                Ok(line) => EncodedEvent::new(event.event_type, line),
                Err(message) => {
                    tracing::error!(%message, "a watch event cannot be written as protobuf");
                    error_frame(&message)
                }
            }
        })
        .boxed()
}

fn cached_frame(
    object: &dyn CacheableObject,
    event_type: EventType,
) -> Result<Bytes, String> {
    let id = match event_type {
        EventType::Added => PROTOBUF_WATCH[0],
        EventType::Modified => PROTOBUF_WATCH[1],
        _ => PROTOBUF_WATCH[2],
    };
    // The object's lock is held while an encoding is made: take the body
    // first, then make the frame from it.
    let encoded = cache_encode(object, PROTOBUF, ProtobufObject::from_json)?;
    let frame = cache_encode(object, id, |_| {
        Ok(Bytes::from(protobuf::watch_frame(
            event_type_name(event_type),
            &encoded.body,
        )))
    })?;
    Ok((*frame).clone())
}

/// The frame of an event that only has its JSON line.
fn frame_of_line(event: &EncodedEvent) -> Result<Bytes, String> {
    let line: Value =
        serde_json::from_slice(&event.line).map_err(|e| e.to_string())?;
    let body = protobuf::encode(&line["object"]).map_err(|e| e.to_string())?;
    Ok(Bytes::from(protobuf::watch_frame(
        event_type_name(event.event_type),
        &body,
    )))
}

/// An ERROR event with an internal error's `Status`, in protobuf.
fn error_frame(message: &str) -> EncodedEvent {
    let status = internal(message.to_string()).status;
    let json = apimachinery::runtime::serializer::streaming::encode_status(&status);
    let body = serde_json::from_slice::<Value>(&json)
        .ok()
        .and_then(|value| protobuf::encode(&value).ok())
        .unwrap_or_default();
    EncodedEvent::new(
        EventType::Error,
        Bytes::from(protobuf::watch_frame("ERROR", &body)),
    )
}

/// Mirrors `WriteObjectNegotiated` and `ErrorNegotiated` for an answer the
/// handlers wrote as JSON (an object, a write's answer, a `Status`): in
/// protobuf when the client negotiated it and the object's kind has a
/// protobuf form; as it is otherwise.
pub async fn negotiated(response: Response, media_type: MediaType) -> Response {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes() == b"application/json");
    if media_type != MediaType::Protobuf || !is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(json) = axum::body::to_bytes(body, usize::MAX).await else {
        return ApiError::from(StorageError::Internal(
            "an answer could not be read".into(),
        ))
        .into_response();
    };
    let encoded = serde_json::from_slice::<Value>(&json)
        .ok()
        .and_then(|value| protobuf::encode(&value).ok());
    match encoded {
        Some(body) => {
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(protobuf::CONTENT_TYPE),
            );
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, Body::from(body))
        }
        None => Response::from_parts(parts, Body::from(json)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stage5_cacher::caching_object::CachedObject;
    use stage5_storage::Object;

    fn cached_pod() -> Arc<CachedObject> {
        let obj: Object = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-0", "namespace": "default", "resourceVersion": "7"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        }))
        .expect("a pod");
        Arc::new(CachedObject::new(
            &ResourceInfo::PODS,
            EventType::Added,
            &obj,
        ))
    }

    #[tokio::test]
    async fn every_watcher_of_a_cached_object_shares_one_protobuf_frame() {
        let object = cached_pod();
        let event = EncodedEvent {
            event_type: EventType::Added,
            line: object.line(EventType::Added),
            object: Some(Arc::clone(&object) as Arc<dyn CacheableObject>),
        };
        let mut frames = Vec::new();
        for _ in 0..3 {
            let watch = futures::stream::iter([event.clone()]).boxed();
            let sent: Vec<EncodedEvent> = watch_frames(watch).collect().await;
            frames.push(sent[0].line.clone());
        }
        // One encoding: the three frames are the same bytes, not copies.
        assert!(frames.iter().all(|f| f.as_ptr() == frames[0].as_ptr()));
        let frame = protobuf::read_watch_frame(&frames[0]).unwrap().unwrap();
        assert_eq!((frame.event_type.as_str(), frame.rest.len()), ("ADDED", 0));
        let decoded = protobuf::decode(&frame.object, "", "").unwrap();
        let json: Value = serde_json::from_slice(&object.json()).unwrap();
        assert_eq!(decoded, json);
        // A list shares the message inside the same body.
        let kept =
            cache_encode(object.as_ref(), PROTOBUF, ProtobufObject::from_json)
                .unwrap();
        let message = kept.message();
        assert_eq!(message.as_ptr(), kept.body[kept.message.start..].as_ptr());
        assert_eq!(protobuf::envelope("v1", "Pod", &message), kept.body);
    }

    #[test]
    fn a_listed_object_without_its_type_takes_the_resources() {
        let json = br#"{"metadata":{"name":"web-0"},"spec":{"containers":[]}}"#;
        assert!(ProtobufObject::from_json(json).is_err());
        let encoded = ProtobufObject::from_json_of(json, "v1", "Pod").unwrap();
        let decoded = protobuf::decode(&encoded.body, "", "").unwrap();
        assert_eq!(decoded["kind"], "Pod");
        assert_eq!(decoded["metadata"]["name"], "web-0");
    }

    #[tokio::test]
    async fn a_bookmark_is_encoded_from_its_line() {
        let line = apimachinery::runtime::serializer::streaming::encode_line(
            EventType::Bookmark,
            br#"{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"9"}}"#,
        );
        let watch =
            futures::stream::iter([EncodedEvent::new(EventType::Bookmark, line)])
                .boxed();
        let sent: Vec<EncodedEvent> = watch_frames(watch).collect().await;
        let frame = protobuf::read_watch_frame(&sent[0].line).unwrap().unwrap();
        assert_eq!(frame.event_type, "BOOKMARK");
        let decoded = protobuf::decode(&frame.object, "", "").unwrap();
        assert_eq!(decoded["metadata"]["resourceVersion"], "9");
    }
}
