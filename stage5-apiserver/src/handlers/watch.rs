//! Serving a watch over HTTP: mirrors apiserver's `pkg/endpoints/handlers/watch.go`
//! (`serveWatch` and `WatchServer.HandleHTTP`).
//!
//! The storage hands out finished JSON lines
//! ([`Storage::watch_encoded`](stage5_storage::Storage::watch_encoded): the Cacher
//! encodes each object once for every watcher). This module only frames them: a
//! `200` with `Content-Type: application/json` and a chunked body, one line per
//! event, until the storage ends the watch (an `ERROR` event such as 410 Expired is
//! the last line), the timeout (`timeoutSeconds`, or a random time between
//! `--min-request-timeout` and twice that, so that watches spread their reconnects),
//! the server's shutdown, or the client going away.
//!
//! Each live watch is kept in the server's
//! [`WatchRegistry`](crate::live_watches::WatchRegistry), for `/metrics` and
//! `/debug/watchers`, until its body is dropped.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::handlers::negotiation::MediaType;
use apimachinery::apis::meta::v1::WatchOptions;
use apimachinery::watch::EventType;
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use futures::{FutureExt, StreamExt};
use rand::RngExt as _;
use tokio_util::sync::CancellationToken;

use super::response::{self, Transform};
use crate::app_state::AppState;
use crate::live_watches::LiveWatch;
use crate::registry::RegisteredResource;
use crate::status::ApiError;
use stage5_storage::SelectionPredicate;
use stage5_storage::list_prefix;

/// Removes its watch from the registry when the response body is dropped.
#[derive(Debug)]
pub struct WatchGuard {
    state: Arc<AppState>,
    id: u64,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        self.state.watches.unregister(self.id);
    }
}

/// The length of a watch without `timeoutSeconds`: mirrors `serveWatch`'s
/// `time.Duration(float64(minRequestTimeout) * (rand.Float64() + 1.0))`.
pub fn default_watch_timeout(min_request_timeout: Duration) -> Duration {
    let factor: f64 = rand::rng().random_range(1.0..2.0);
    min_request_timeout.mul_f64(factor)
}

// ANCHOR: serve_watch
/// Mirrors `serveWatch`: opens the storage's encoded watch and streams its lines as
/// a chunked `application/json` body, or its protobuf frames; with a negotiated
/// `transform` (a Table, metadata only) each event's object is transformed
/// first. Errors before the
/// first byte (a bad resourceVersion, a cache that is not ready) are ordinary
/// error responses; errors after it are `ERROR` events from the storage.
pub async fn serve_watch(
    state: &Arc<AppState>,
    resource: &RegisteredResource,
    namespace: Option<&str>,
    options: WatchOptions,
    predicate: SelectionPredicate,
    transform: Option<Transform>,
    media_type: MediaType,
) -> Result<Response, ApiError> {
    let prefix = list_prefix(&resource.info, namespace);
    let identifier = format!(
        "{}{} rv={:?} labels={:?} fields={:?}{}",
        namespace.map(|ns| format!("ns={ns} ")).unwrap_or_default(),
        resource.info.plural,
        options.resource_version,
        options.label_selector,
        options.field_selector,
        if options.send_initial_events {
            " sendInitialEvents"
        } else {
            ""
        },
    );
    // `timeoutSeconds=0` arrives here as `None` (see `watch_options`).
    let timeout = options.timeout_seconds.filter(|&s| s > 0).map_or_else(
        || default_watch_timeout(state.min_request_timeout),
        |s| Duration::from_secs(u64::from(s)),
    );
    let lines = match transform {
        None => {
            resource
                .dyn_storage
                .watch_encoded(prefix, options, predicate)
                .await?
        }
        // A Table or metadata watch (`kubectl get -w`): each event's object
        // transformed (`watchEmbeddedEncoder`).
        Some(transform) => {
            let watch = resource
                .dyn_storage
                .watch(prefix, options, predicate)
                .await?;
            response::encode_watch(resource.info.clone(), watch, transform)
        }
    };
    // Protobuf: each event a length-prefixed frame, shared by every watcher
    // of a cached object.
    let lines = match media_type {
        MediaType::Json => lines,
        MediaType::Protobuf => super::responsewriters::watch_frames(lines),
    };
    // ANCHOR_END: serve_watch

    // ANCHOR: serve_watch_stream
    let events = Arc::new(AtomicU64::new(0));
    let id = state.watches.register(LiveWatch {
        resource: resource.info.plural,
        identifier,
        started: Instant::now(),
        events: Arc::clone(&events),
    });
    let guard = WatchGuard {
        state: Arc::clone(state),
        id,
    };
    // The stream ends at the timeout or at shutdown, whichever comes first; dropping
    // it (also when the client goes away) drops the storage's watch and the
    // guard.
    let stop = end_of_watch(state.shutdown.clone(), timeout);
    let body = lines.take_until(stop).map(move |event| {
        events.fetch_add(1, Ordering::Relaxed);
        if event.event_type == EventType::Error {
            guard.state.metrics.count_watch_error();
        }
        Ok::<Bytes, Infallible>(event.line)
    });
    let mut response = Response::new(Body::from_stream(body));
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(media_type.watch_content_type()),
    );
    Ok(response)
}
// ANCHOR_END: serve_watch_stream

fn end_of_watch(
    shutdown: CancellationToken,
    timeout: Duration,
) -> futures::future::BoxFuture<'static, ()> {
    async move {
        tokio::select! {
            () = shutdown.cancelled() => {}
            () = tokio::time::sleep(timeout) => {}
        }
    }
    .boxed()
}
