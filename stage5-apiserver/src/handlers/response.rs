//! Transforming an answer into the representation the client negotiated:
//! mirrors apiserver's `pkg/endpoints/handlers/response.go`
//! (`transformResponseObject`, `optionsForTransform`, `doTransformObject`,
//! `asTable`, `asPartialObjectMetadata`, `asPartialObjectMetadataList`, and the
//! watch's `watchEmbeddedEncoder`).
//!
//! - A `Table` ([`crate::printers`]): the kind's columns and one row per object;
//!   each row's `object` as `includeObject` asks: `Metadata` (the default) a
//!   `PartialObjectMetadata`, `Object` the whole object, `None` `null`.
//! - A `PartialObjectMetadata` (one object) or `PartialObjectMetadataList` (a
//!   list): `kind`, `apiVersion` and the full `metadata`; asking for the one on
//!   the other is 406.
//! - On a watch every event's object is transformed; a `Table` carries the
//!   column definitions on the first event only (`NoHeaders` from then on), and
//!   an `ERROR` event's `Status` is left as it is.
//!
//! A Table's `Content-Type` is `application/json`, as upstream's; metadata
//! alone may also be protobuf ([`super::responsewriters`]).

use apimachinery::runtime::cache_encode;
use apimachinery::runtime::serializer::streaming::{
    EncodedEvent, EncodedWatch, encode_line, encode_status,
};
use apimachinery::watch::WatchEvent;
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use stage5_storage::Watch;
use stage5_storage::{EncodedListResult, ListResult, Object, ResourceInfo};

use super::negotiation::{MediaType, MediaTypeOptions};
use super::rest::QueryParams;
use crate::printers::{self, GenerateOptions, RowObject, Table, TableMeta};
use crate::status::ApiError;

/// Mirrors `metav1.IncludeObjectPolicy`: what a Table row's `object` holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IncludeObject {
    /// `None`: `null`.
    None,
    /// `Metadata` (and the default): a `PartialObjectMetadata`.
    #[default]
    Metadata,
    /// `Object`: the whole object.
    Object,
}

/// Mirrors `metav1.TableOptions`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableOptions {
    /// `?includeObject=`.
    pub include_object: IncludeObject,
    /// Leave the column definitions out (set by the watch after its first event).
    pub no_headers: bool,
}

/// The conversion a request negotiated (`MediaTypeOptions.Convert` with its
/// options), in `meta.k8s.io/v1` or `v1beta1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transform {
    /// A `Table`.
    Table {
        /// `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`.
        api_version: &'static str,
        /// From the query.
        options: TableOptions,
    },
    /// A `PartialObjectMetadata` (of one object).
    PartialObjectMetadata {
        /// `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`.
        api_version: &'static str,
    },
    /// A `PartialObjectMetadataList` (of a list).
    PartialObjectMetadataList {
        /// `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`.
        api_version: &'static str,
    },
}

/// The 406 of a conversion that does not fit the answer (`newNotAcceptableError`).
fn not_acceptable(message: String) -> ApiError {
    ApiError::not_acceptable(message)
}

/// Mirrors `optionsForTransform` with `targetEncodingForTransform`: the
/// conversion and its options, `None` for a plain answer. A Table reads
/// `includeObject` from the query (`ValidateTableOptions`: anything but
/// `Metadata`, `Object`, `None` or empty is 400).
pub fn transform_for(
    media: &MediaTypeOptions,
    query: &QueryParams,
) -> Result<Option<Transform>, ApiError> {
    let Some(target) = &media.convert else {
        return Ok(None);
    };
    let api_version = match (target.group.as_str(), target.version.as_str()) {
        ("meta.k8s.io", "v1") => "meta.k8s.io/v1",
        ("meta.k8s.io", "v1beta1") => "meta.k8s.io/v1beta1",
        _ => return Err(unknown_conversion()),
    };
    match target.kind.as_str() {
        "Table" => {
            let include_object = match query.str("includeObject") {
                "" | "Metadata" => IncludeObject::Metadata,
                "None" => IncludeObject::None,
                "Object" => IncludeObject::Object,
                other => {
                    return Err(ApiError::bad_request(format!(
                        "Unable to convert to Table as requested: includeObject: Invalid value: {}: must be 'Metadata', 'Object', 'None', or empty",
                        apimachinery::util::validation::field::go_quote(other)
                    )));
                }
            };
            Ok(Some(Transform::Table {
                api_version,
                options: TableOptions {
                    include_object,
                    no_headers: false,
                },
            }))
        }
        "PartialObjectMetadata" => {
            Ok(Some(Transform::PartialObjectMetadata { api_version }))
        }
        "PartialObjectMetadataList" => {
            Ok(Some(Transform::PartialObjectMetadataList { api_version }))
        }
        _ => Err(unknown_conversion()),
    }
}

/// `doTransformObject`'s default: the media types of the meta codecs.
fn unknown_conversion() -> ApiError {
    not_acceptable(format!(
        "only the following media types are accepted: {}",
        super::negotiation::SUPPORTED_MEDIA_TYPES.join(", ")
    ))
}

/// `metav1.PartialObjectMetadata`.
#[derive(Serialize)]
struct PartialObjectMetadata<'a> {
    kind: &'static str,
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    metadata: &'a ObjectMeta,
}

/// Mirrors `meta.AsPartialObjectMetadata` with its kind set.
fn partial<'a>(
    obj: &'a Object,
    api_version: &'static str,
) -> PartialObjectMetadata<'a> {
    PartialObjectMetadata {
        kind: "PartialObjectMetadata",
        api_version,
        metadata: &obj.metadata,
    }
}

/// The whole object, with its kind and apiVersion.
fn whole(info: &ResourceInfo, obj: &Object) -> Value {
    if obj.types.is_some() {
        serde_json::to_value(obj).unwrap_or(Value::Null)
    } else {
        let mut typed = obj.clone();
        typed.types = Some(info.type_meta());
        serde_json::to_value(&typed).unwrap_or(Value::Null)
    }
}

/// Mirrors `asTable`: the printed table, each row's object as asked.
fn as_table(
    info: &ResourceInfo,
    objects: &[&Object],
    metadata: TableMeta,
    api_version: &'static str,
    options: TableOptions,
) -> Table {
    let mut table = printers::generate_table(
        crate::registry::strategy_for(info).table_handler(),
        objects,
        metadata,
        GenerateOptions {
            no_headers: options.no_headers,
        },
        Timestamp::now(),
    );
    table.api_version = api_version;
    for (row, obj) in table.rows.iter_mut().zip(objects) {
        row.object = RowObject::Value(match options.include_object {
            IncludeObject::None => Value::Null,
            IncludeObject::Metadata => {
                serde_json::to_value(partial(obj, api_version))
                    .unwrap_or(Value::Null)
            }
            IncludeObject::Object => whole(info, obj),
        });
    }
    table
}

/// The Go type of a list or object for a 406 message (`%T`: `*core.PodList`).
fn go_type(info: &ResourceInfo, list: bool) -> String {
    let package = match info.group {
        "" => "core",
        group => group.split('.').next().unwrap_or(group),
    };
    format!("*{package}.{}{}", info.kind, if list { "List" } else { "" })
}

fn json_answer<T: Serialize>(value: &T) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let mut response = (StatusCode::OK, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A `PartialObjectMetadata` of an object the watch cache keeps encoded: its
/// `metadata` copied as the cache has it, never decoded.
#[derive(Serialize)]
struct RawPartialObjectMetadata<'a> {
    kind: &'static str,
    #[serde(rename = "apiVersion")]
    api_version: &'a str,
    metadata: &'a RawValue,
}

/// The `PartialObjectMetadata` of an object's JSON, as JSON, its metadata
/// copied as it is encoded.
pub(crate) fn partial_metadata_json(
    json: &[u8],
    api_version: &str,
) -> Result<Bytes, String> {
    #[derive(serde::Deserialize)]
    struct MetadataOnly<'a> {
        #[serde(borrow)]
        metadata: &'a RawValue,
    }
    let only: MetadataOnly<'_> =
        serde_json::from_slice(json).map_err(|e| e.to_string())?;
    serde_json::to_vec(&RawPartialObjectMetadata {
        kind: "PartialObjectMetadata",
        api_version,
        metadata: only.metadata,
    })
    .map(Bytes::from)
    .map_err(|e| e.to_string())
}

fn internal(error: serde_json::Error) -> ApiError {
    ApiError::from(stage5_storage::StorageError::Internal(error.to_string()))
}

/// Mirrors `transformResponseObject` for a list: a Table or a
/// `PartialObjectMetadataList` of a list the
/// storage answered encoded (the watch cache's JSON, shared), with the same
/// bytes as from decoded objects but without decoding what the answer does not
/// show, as upstream's `cachingObject` avoids encoding an object twice:
/// - a `PartialObjectMetadataList` copies each object's `metadata` as it is
///   encoded;
/// - a Table decodes each object without its `managedFields`, which no printer
///   reads, and in the same pass keeps its encoded `metadata` for the row's
///   `PartialObjectMetadata`.
pub fn encoded_list_answer(
    info: &ResourceInfo,
    result: &EncodedListResult,
    transform: Transform,
    media_type: MediaType,
) -> Result<Response, ApiError> {
    let metadata = list_meta(result);
    match transform {
        Transform::Table {
            api_version,
            options,
        } if result.cacheable.len() == result.items.len()
            && options.include_object != IncludeObject::Object =>
        {
            cached_table(info, result, metadata, api_version, options)
        }
        Transform::Table {
            api_version,
            options,
        } => {
            let decoded = result
                .items
                .iter()
                .map(|json| {
                    Object::from_json_without_managed_fields_with_metadata(json)
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(internal)?;
            let refs: Vec<&Object> = decoded.iter().map(|(obj, _)| obj).collect();
            let mut table = printers::generate_table(
                crate::registry::strategy_for(info).table_handler(),
                &refs,
                metadata,
                GenerateOptions {
                    no_headers: options.no_headers,
                },
                Timestamp::now(),
            );
            table.api_version = api_version;
            for ((row, json), (_, metadata)) in
                table.rows.iter_mut().zip(&result.items).zip(&decoded)
            {
                row.object = match options.include_object {
                    IncludeObject::None => RowObject::Value(Value::Null),
                    IncludeObject::Metadata => {
                        let metadata = metadata.ok_or_else(|| {
                            ApiError::from(stage5_storage::StorageError::Internal(
                                "a stored object has no metadata".into(),
                            ))
                        })?;
                        RowObject::Raw(
                            serde_json::value::to_raw_value(
                                &RawPartialObjectMetadata {
                                    kind: "PartialObjectMetadata",
                                    api_version,
                                    metadata,
                                },
                            )
                            .map_err(internal)?,
                        )
                    }
                    IncludeObject::Object => {
                        let whole_object: Object =
                            serde_json::from_slice(json).map_err(internal)?;
                        RowObject::Value(whole(info, &whole_object))
                    }
                };
            }
            Ok(json_answer(&table))
        }
        Transform::PartialObjectMetadataList { api_version } => {
            // Each item's metadata alone, kept by the watch cache's object
            // after the first list that asks.
            let items = super::responsewriters::partial_metadata_items(
                result,
                api_version,
                media_type,
            )?;
            Ok(match media_type {
                MediaType::Protobuf => {
                    super::responsewriters::protobuf_partial_metadata_list(
                        &items,
                        api_version,
                        &metadata,
                    )
                }
                MediaType::Json => json_list_response(
                    "PartialObjectMetadataList",
                    api_version,
                    &metadata,
                    stage5_storage::comma_separated(&items),
                ),
            })
        }
        Transform::PartialObjectMetadata { .. } => Err(not_acceptable(format!(
            "you requested PartialObjectMetadata, but the requested object is a list ({})",
            go_type(info, true)
        ))),
    }
}

/// A Table row as the watch cache's object keeps it, from `{"cells":[` to
/// `"object":`: JSON, with the ages left to render between the pieces.
#[derive(Debug, Default)]
struct PrintedRow {
    pieces: Vec<RowPiece>,
}

/// A piece of a [`PrintedRow`].
#[derive(Debug)]
enum RowPiece {
    /// JSON as it is written.
    Json(Box<[u8]>),
    /// A cell whose text is a time since, rendered for each answer.
    Since(printers::Cell),
}

impl PrintedRow {
    /// Prints `obj` once: its cells and row conditions as JSON, each age kept
    /// as a time.
    fn print(handler: &printers::TableHandler, obj: &Object) -> Self {
        let (cells, conditions) = (handler.print)(obj);
        let mut row = PrintedRow::default();
        let mut json = b"{\"cells\":[".to_vec();
        for (i, cell) in cells.into_iter().enumerate() {
            if i > 0 {
                json.push(b',');
            }
            match cell {
                printers::Cell::Value(value) => push_json(&mut json, &value),
                since => {
                    let done = std::mem::take(&mut json);
                    row.pieces.push(RowPiece::Json(done.into_boxed_slice()));
                    row.pieces.push(RowPiece::Since(since));
                }
            }
        }
        json.push(b']');
        if !conditions.is_empty() {
            json.extend_from_slice(b",\"conditions\":");
            push_json(&mut json, &conditions);
        }
        json.extend_from_slice(b",\"object\":");
        row.pieces.push(RowPiece::Json(json.into_boxed_slice()));
        row
    }

    /// Writes the row as of `now`, up to its object.
    fn write(&self, now: Timestamp, body: &mut Vec<u8>) {
        for piece in &self.pieces {
            match piece {
                RowPiece::Json(json) => body.extend_from_slice(json),
                RowPiece::Since(cell) => push_json(body, &cell.render(now)),
            }
        }
    }
}

/// A Table of a list from the watch cache: each object printed once and
/// kept ([`super::responsewriters::TABLE_ROW`]), its `PartialObjectMetadata`
/// kept too; only the ages are rendered for this answer. The bytes equal
/// [`as_table`]'s for the same objects.
fn cached_table(
    info: &ResourceInfo,
    result: &EncodedListResult,
    metadata: TableMeta,
    api_version: &'static str,
    options: TableOptions,
) -> Result<Response, ApiError> {
    use super::responsewriters::{TABLE_ROW, metadata_id};
    let handler = crate::registry::strategy_for(info).table_handler();
    let now = Timestamp::now();
    let metadata_id = metadata_id(api_version, MediaType::Json);
    let internal =
        |e: String| ApiError::from(stage5_storage::StorageError::Internal(e));
    let mut rows = Vec::with_capacity(result.cacheable.len());
    let mut size = 1024;
    for object in &result.cacheable {
        let row = cache_encode(object.as_ref(), TABLE_ROW, |json| {
            let obj = Object::from_json_without_managed_fields(json)
                .map_err(|e| e.to_string())?;
            Ok(PrintedRow::print(handler, &obj))
        })
        .map_err(internal)?;
        let partial = match options.include_object {
            IncludeObject::Metadata => Some(
                cache_encode(object.as_ref(), metadata_id, |json| {
                    partial_metadata_json(json, api_version)
                })
                .map_err(internal)?,
            ),
            _ => None,
        };
        size += 160 + partial.as_ref().map_or(4, |p| p.len());
        size += row
            .pieces
            .iter()
            .map(|p| match p {
                RowPiece::Json(json) => json.len(),
                RowPiece::Since(_) => 16,
            })
            .sum::<usize>();
        rows.push((row, partial));
    }
    let mut body = Vec::with_capacity(size);
    body.extend_from_slice(b"{\"kind\":\"Table\",\"apiVersion\":");
    push_json(&mut body, api_version);
    body.extend_from_slice(b",\"metadata\":");
    push_json(&mut body, &metadata);
    body.extend_from_slice(b",\"columnDefinitions\":");
    push_json(&mut body, &(!options.no_headers).then_some(handler.columns));
    body.extend_from_slice(b",\"rows\":[");
    for (i, (row, partial)) in rows.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        row.write(now, &mut body);
        match partial {
            Some(partial) => body.extend_from_slice(partial),
            None => body.extend_from_slice(b"null"),
        }
        body.push(b'}');
    }
    body.extend_from_slice(b"]}");
    Ok(chunks_response(vec![Bytes::from(body)], "application/json"))
}

/// Mirrors `transformResponseObject` for one object: the object, a Table with
/// its one row, or its `PartialObjectMetadata`.
pub fn object_answer(
    info: &ResourceInfo,
    obj: &Object,
    transform: Option<Transform>,
) -> Result<Response, ApiError> {
    match transform {
        None => Ok(super::rest::json_response(StatusCode::OK, obj)),
        Some(transform) => {
            transform_object(info, obj, transform).map(|value| json_answer(&value))
        }
    }
}

/// Mirrors `doTransformObject` for one object (of an answer or a watch event).
fn transform_object(
    info: &ResourceInfo,
    obj: &Object,
    transform: Transform,
) -> Result<Value, ApiError> {
    match transform {
        Transform::Table {
            api_version,
            options,
        } => {
            let metadata = TableMeta {
                resource_version: obj.resource_version().to_string(),
                ..TableMeta::default()
            };
            serde_json::to_value(as_table(
                info,
                &[obj],
                metadata,
                api_version,
                options,
            ))
            .map_err(|e| {
                ApiError::from(stage5_storage::StorageError::Internal(e.to_string()))
            })
        }
        Transform::PartialObjectMetadata { api_version } => {
            Ok(serde_json::to_value(partial(obj, api_version))
                .unwrap_or(Value::Null))
        }
        Transform::PartialObjectMetadataList { .. } => Err(not_acceptable(format!(
            "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
            go_type(info, false)
        ))),
    }
}

/// Mirrors `watchEmbeddedEncoder`: transforms each event's object; after the
/// first event a Table leaves its column definitions out. An object that cannot
/// be transformed is sent as it is, as upstream logs and falls back.
struct WatchEmbeddedEncoder {
    info: ResourceInfo,
    transform: Transform,
}

impl WatchEmbeddedEncoder {
    fn encode(&mut self, obj: &Object) -> Bytes {
        let encoded = match transform_object(&self.info, obj, self.transform) {
            Ok(value) => Bytes::from(value.to_string()),
            Err(_) => Bytes::from(whole(&self.info, obj).to_string()),
        };
        if let Transform::Table { options, .. } = &mut self.transform {
            options.no_headers = true;
        }
        encoded
    }

    fn encode_event(&mut self, event: &WatchEvent<Object>) -> EncodedEvent {
        let event_type = event.event_type();
        let object = match event {
            WatchEvent::Added(obj)
            | WatchEvent::Modified(obj)
            | WatchEvent::Deleted(obj) => self.encode(obj),
            // The bookmark's object (kind, apiVersion, resourceVersion and
            // annotations) is transformed like any other.
            WatchEvent::Bookmark(bookmark) => {
                let mut obj = Object::new(&self.info, None, "");
                obj.metadata.name = None;
                obj.metadata.resource_version =
                    Some(bookmark.resource_version.clone());
                if !bookmark.annotations.is_empty() {
                    obj.metadata.annotations = Some(bookmark.annotations.clone());
                }
                self.encode(&obj)
            }
            WatchEvent::Error(status) => {
                if let Transform::Table { options, .. } = &mut self.transform {
                    options.no_headers = true;
                }
                encode_status(status)
            }
        };
        EncodedEvent::new(event_type, encode_line(event_type, &object))
    }
}

/// Encodes every event of a watch transformed as negotiated (the counterpart of
/// [`encode_watch`](apimachinery::runtime::serializer::streaming::encode_watch)); a stream error becomes an `ERROR`
/// event and ends it.
pub fn encode_watch(
    info: ResourceInfo,
    watch: Watch<Object>,
    transform: Transform,
) -> EncodedWatch {
    let mut encoder = WatchEmbeddedEncoder {
        info: info.clone(),
        transform,
    };
    apimachinery::runtime::serializer::streaming::encode_watch_with(
        watch,
        move |event| encoder.encode_event(event),
    )
}

/// Encodes a list: each item encoded, then written as
/// [`encoded_list_response`] writes it.
pub fn list_response(info: &ResourceInfo, result: &ListResult) -> Response {
    encoded_list_response(info, &EncodedListResult::encode(result))
}

/// Writes a list whose items are already encoded. The items' bytes are not
/// copied: the body is the list's head, the items' shared JSON with commas
/// between, and the tail, and it announces its exact length.
pub fn encoded_list_response(
    info: &ResourceInfo,
    result: &EncodedListResult,
) -> Response {
    let list_type = info.list_type_meta();
    json_list_response(
        &list_type.kind,
        &list_type.api_version,
        &list_meta(result),
        result.item_chunks(),
    )
}

/// A JSON list, `{"kind":…,"apiVersion":…,"metadata":…,"items":[…]}`, whose
/// items are `item_chunks` (shared, with their commas).
fn json_list_response(
    kind: &str,
    api_version: &str,
    metadata: &TableMeta,
    item_chunks: Vec<Bytes>,
) -> Response {
    let mut head = Vec::with_capacity(128);
    head.extend_from_slice(b"{\"kind\":");
    push_json(&mut head, kind);
    head.extend_from_slice(b",\"apiVersion\":");
    push_json(&mut head, api_version);
    head.extend_from_slice(b",\"metadata\":");
    push_json(&mut head, metadata);
    head.extend_from_slice(b",\"items\":[");
    let mut chunks = Vec::with_capacity(item_chunks.len() + 2);
    chunks.push(Bytes::from(head));
    chunks.extend(item_chunks);
    chunks.push(Bytes::from_static(b"]}"));
    chunks_response(chunks, "application/json")
}

/// A list's `metadata`: its resourceVersion, continue token and remaining
/// item count.
pub(crate) fn list_meta(result: &EncodedListResult) -> TableMeta {
    TableMeta {
        resource_version: result.resource_version.to_string(),
        continue_token: result.continue_token.clone(),
        remaining_item_count: result.remaining_item_count,
    }
}

/// A 200 whose body is `chunks`, sent one after another without copying, with
/// its exact length and `content_type`.
pub(crate) fn chunks_response(
    chunks: Vec<Bytes>,
    content_type: &'static str,
) -> Response {
    let mut response = Response::new(Body::new(ChunksBody::new(chunks)));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A response body made of shared pieces, sent in order, with its exact length
/// known up front (so the answer carries `Content-Length`, as a list answer
/// from kube-apiserver does).
struct ChunksBody {
    chunks: std::collections::VecDeque<Bytes>,
    remaining: u64,
}

impl ChunksBody {
    fn new(chunks: Vec<Bytes>) -> Self {
        let remaining = chunks.iter().map(|c| c.len() as u64).sum();
        ChunksBody {
            chunks: chunks.into_iter().filter(|c| !c.is_empty()).collect(),
            remaining,
        }
    }
}

impl http_body::Body for ChunksBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let next = self.chunks.pop_front();
        if let Some(chunk) = &next {
            self.remaining -= chunk.len() as u64;
        }
        std::task::Poll::Ready(next.map(|chunk| Ok(http_body::Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.remaining)
    }
}

pub(crate) fn push_json<T: serde::Serialize + ?Sized>(
    buffer: &mut Vec<u8>,
    value: &T,
) {
    if serde_json::to_writer(&mut *buffer, value).is_err() {
        buffer.extend_from_slice(b"null");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apimachinery::watch::Bookmark;
    use futures::StreamExt;

    fn line(event: &EncodedEvent) -> Value {
        serde_json::from_slice(&event.line).expect("a JSON line")
    }

    #[tokio::test]
    async fn a_table_watch_sends_columns_once_and_errors_as_status() {
        let info = ResourceInfo::PODS;
        let pod = std::sync::Arc::new(Object::new(&info, Some("default"), "web-0"));
        let status =
            stage5_storage::StorageError::Expired("too old".into()).to_status();
        let watch = Watch::from_items([
            Ok(WatchEvent::Added(pod.clone())),
            Ok(WatchEvent::Bookmark(Bookmark::initial_events_end("7"))),
            Ok(WatchEvent::Deleted(pod)),
            Ok(WatchEvent::Error(Box::new(status))),
        ]);
        let transform = Transform::Table {
            api_version: "meta.k8s.io/v1",
            options: TableOptions {
                include_object: IncludeObject::None,
                no_headers: false,
            },
        };
        let lines: Vec<Value> = encode_watch(info, watch, transform)
            .map(|event| line(&event))
            .collect()
            .await;
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0]["type"], "ADDED");
        assert_eq!(lines[0]["object"]["kind"], "Table");
        assert_eq!(lines[0]["object"]["columnDefinitions"][0]["name"], "Name");
        assert_eq!(lines[0]["object"]["rows"][0]["cells"][0], "web-0");
        assert_eq!(lines[0]["object"]["rows"][0]["object"], Value::Null);
        // A bookmark's object is printed like any other: a row without a name.
        assert_eq!(lines[1]["type"], "BOOKMARK");
        assert_eq!(lines[1]["object"]["metadata"]["resourceVersion"], "7");
        assert_eq!(lines[1]["object"]["columnDefinitions"], Value::Null);
        assert_eq!(lines[1]["object"]["rows"][0]["cells"][0], "");
        assert_eq!(lines[2]["type"], "DELETED");
        assert_eq!(lines[2]["object"]["columnDefinitions"], Value::Null);
        assert_eq!(lines[3]["type"], "ERROR");
        assert_eq!(lines[3]["object"]["kind"], "Status");
        assert_eq!(lines[3]["object"]["code"], 410);
    }

    #[test]
    fn a_partial_object_metadata_list_of_one_object_is_406() {
        let info = ResourceInfo::DEPLOYMENTS;
        let obj = Object::new(&info, Some("default"), "web");
        let error = object_answer(
            &info,
            &obj,
            Some(Transform::PartialObjectMetadataList {
                api_version: "meta.k8s.io/v1",
            }),
        )
        .unwrap_err();
        assert_eq!(error.code(), 406);
        assert_eq!(
            error.status.message.as_deref(),
            Some(
                "you requested PartialObjectMetadataList, but the requested object is not a list (*apps.Deployment)"
            )
        );
    }
}
