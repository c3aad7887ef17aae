//! `GET`: mirrors apiserver's `pkg/endpoints/handlers/get.go` (`GetResource`, and
//! `ListResource`, which also turns a `?watch=true` list into a watch).

use apimachinery::apis::meta::v1::{
    ListOptions, ResourceVersionMatch, WatchOptions,
};
use axum::response::Response;

use crate::registry::RegisteredResource;
use crate::status::ApiError;
use stage5_storage::{GetOptions, StorageError};
use stage5_storage::{ResourceInfo, SelectionPredicate};
use stage5_storage::{list_prefix, object_key, parse_resource_version};

use super::negotiation::{MediaType, MediaTypeOptions};
use super::response::encoded_list_response;
use super::rest::{QueryParams, invalid_options, parse_match, predicate};

// ANCHOR: list_options
/// Mirrors `ListResource` up to the storage call: reads `metav1.ListOptions` from
/// the query and validates them like `ValidateListOptions`. A resourceVersion
/// that is not a `uint64` (`-1`, `18446744073709551616`) is 400 `invalid resource
/// version: ...`, as the etcd3 store and `storage.ValidateListOptions` answer
/// (the watch cache's own parse, and any watch, answer 500 upstream); every
/// `uint64` is a version, so `9223372036854775808` and up are simply newer than
/// the store: 504 `ResourceVersionTooLarge`. `resourceVersionMatch` needs a
/// resourceVersion, and `Exact` needs one other than `0`. The storage then gives
/// each resourceVersion its meaning: `""` the newest state (from etcd, a consistent
/// read), `"0"` any state (the watch cache answers at once), `N` not older than `N`,
/// `N` with `Exact` exactly `N` (410 if compacted), and a continue token pins every
/// page to the first page's revision.
pub fn list_options(
    info: &ResourceInfo,
    query: &QueryParams,
) -> Result<(ListOptions, SelectionPredicate), ApiError> {
    let resource_version = query.str("resourceVersion").to_string();
    parse_resource_version(&resource_version)?;
    let resource_version_match = parse_match(query.str("resourceVersionMatch"))?;
    let continue_token = query.str("continue").to_string();
    let limit: i64 = query.number("limit")?.unwrap_or(0);
    if resource_version_match.is_some() {
        if resource_version.is_empty() {
            return Err(invalid_options(
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if !continue_token.is_empty() {
            return Err(invalid_options(
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if resource_version_match == Some(ResourceVersionMatch::Exact)
            && resource_version == "0"
        {
            return Err(invalid_options(
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if query.bool("sendInitialEvents")?.is_some() {
        return Err(invalid_options(
            "sendInitialEvents",
            "Forbidden: sendInitialEvents is forbidden for list",
        ));
    }
    let label_selector = query.str("labelSelector").to_string();
    let field_selector = query.str("fieldSelector").to_string();
    let predicate = predicate(info, &label_selector, &field_selector)?;
    let options = ListOptions {
        resource_version,
        resource_version_match,
        // A negative limit means no limit, as upstream ignores it.
        limit: u32::try_from(limit.max(0)).unwrap_or(u32::MAX),
        continue_token,
        label_selector,
        field_selector,
    };
    Ok((options, predicate))
}
// ANCHOR_END: list_options

/// Mirrors `ListResource`: `{kind: PodList, apiVersion, metadata: {resourceVersion,
/// continue, remainingItemCount}, items}`. A compacted resourceVersion or continue
/// token is 410 Expired.
pub(crate) async fn list(
    resource: &RegisteredResource,
    namespace: Option<&str>,
    query: &QueryParams,
    media: &MediaTypeOptions,
) -> Result<Response, ApiError> {
    let (options, predicate) = list_options(&resource.info, query)?;
    let prefix = list_prefix(&resource.info, namespace);
    // `transformResponseObject`: a Table or metadata if negotiated.
    let transform = super::response::transform_for(media, query)?;
    // The items' JSON as the storage has it (the watch cache keeps each object
    // encoded): the list copies it into the body; a Table or metadata is
    // built from it, decoding only what it shows.
    let result = resource
        .dyn_storage
        .get_list_encoded(prefix, options, predicate)
        .await?;
    match (transform, media.media_type) {
        (None, MediaType::Json) => {
            Ok(encoded_list_response(&resource.info, &result))
        }
        (None, MediaType::Protobuf) => {
            super::responsewriters::protobuf_list(&resource.info, &result)
        }
        (Some(transform), media_type) => super::response::encoded_list_answer(
            &resource.info,
            &result,
            transform,
            media_type,
        ),
    }
}

/// Reads the watch options (`ListOptions` with `watch=true`) and validates them like
/// `ValidateListOptions`: `sendInitialEvents` needs `allowWatchBookmarks` and
/// `resourceVersionMatch=NotOlderThan`; `resourceVersionMatch` needs
/// `sendInitialEvents`. A watch of one object (`/pods/web-0?watch=1`) is a watch
/// with `metadata.name=web-0` added to the field selector, as upstream does.
/// `timeoutSeconds=0` is no timeout at all, as `ListResource` reads it (`if
/// timeout == 0 && minRequestTimeout > 0`): the watch gets the server's
/// randomised default length, not an immediate end.
pub fn watch_options(
    info: &ResourceInfo,
    query: &QueryParams,
    name: Option<&str>,
) -> Result<(WatchOptions, SelectionPredicate), ApiError> {
    let resource_version = query.str("resourceVersion").to_string();
    parse_resource_version(&resource_version)?;
    let resource_version_match = parse_match(query.str("resourceVersionMatch"))?;
    let allow_watch_bookmarks = query.bool("allowWatchBookmarks")?.unwrap_or(false);
    let send_initial_events = query.bool("sendInitialEvents")?;
    let timeout_seconds: Option<u32> = query
        .number("timeoutSeconds")?
        .filter(|&seconds: &u32| seconds > 0);
    match send_initial_events {
        Some(_) => {
            if resource_version_match != Some(ResourceVersionMatch::NotOlderThan) {
                return Err(invalid_options(
                    "sendInitialEvents",
                    "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ));
            }
            if !allow_watch_bookmarks {
                return Err(invalid_options(
                    "sendInitialEvents",
                    "Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true",
                ));
            }
        }
        None if resource_version_match.is_some() => {
            return Err(invalid_options(
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        None => {}
    }
    let label_selector = query.str("labelSelector").to_string();
    let mut field_selector = query.str("fieldSelector").to_string();
    if let Some(name) = name {
        let by_name = format!("metadata.name={name}");
        field_selector = if field_selector.is_empty() {
            by_name
        } else {
            format!("{field_selector},{by_name}")
        };
    }
    let predicate = predicate(info, &label_selector, &field_selector)?;
    Ok((
        WatchOptions {
            resource_version,
            resource_version_match,
            timeout_seconds,
            allow_watch_bookmarks,
            send_initial_events: send_initial_events.unwrap_or(false),
            label_selector,
            field_selector,
        },
        predicate,
    ))
}

/// Mirrors `GetResource` with its `metav1.GetOptions`: `resourceVersion` is
/// passed to the storage's `Get` as is. `""` reads etcd; any other version
/// must parse as a `uint64` (else 400) and the answer must be at least that new:
/// the etcd3 store answers at once with 504 `ResourceVersionTooLarge`
/// (`validateMinimumResourceVersion`), the watch cache after waiting up to 3 s
/// for it.
pub(crate) async fn get(
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    query: &QueryParams,
    media: &MediaTypeOptions,
) -> Result<Response, ApiError> {
    let key = object_key(&resource.info, namespace, name);
    let options = GetOptions {
        ignore_not_found: false,
        resource_version: query.str("resourceVersion").to_string(),
    };
    match resource.dyn_storage.get_with(key, options).await? {
        Some(obj) => {
            let transform = super::response::transform_for(media, query)?;
            super::response::object_answer(&resource.info, &obj, transform)
        }
        None => Err(StorageError::NotFound {
            plural: resource.info.qualified_resource(),
            name: name.to_string(),
        }
        .into()),
    }
}
