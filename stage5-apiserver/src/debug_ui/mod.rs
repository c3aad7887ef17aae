//! `/debug/ui`: the watch machinery drawn live, for a workshop's projector.
//!
//! The page (its panels in `panels.html` and its drawing in `page.js`, in the
//! frame every live page shares, `tools/live-page`) opens one server-sent event
//! stream, `/debug/ui/events`, and draws what arrives:
//!
//! - `view` events: the state of one resource's watch cache (its ring, the
//!   dispatcher's time budget, each cacheWatcher with its buffer fill and
//!   bookmarks) and the etcd revision, pushed when something changed (at most
//!   four a second) and at least every two seconds;
//! - `note` events: each moment as it happens ([`stage5_cacher::What`]): an event
//!   entering the ring and being dispatched, a watcher starting or ending (and
//!   why), a bookmark, a 410, a relist, and every API request answered.
//!
//! Nothing polls: the browser holds one stream, and the server builds notes only
//! while a page listens ([`stage5_cacher::Probe`]). The paths sit behind the
//! server's authentication like every other path.
//!
//! kube-apiserver has no such page: it shows the same machinery only as metrics
//! (`apiserver_watch_cache_*`, `apiserver_terminated_watchers_total`) and log
//! lines.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Query, Request, State};
use axum::http::{HeaderValue, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use serde::{Deserialize, Serialize};
use stage5_cacher::{CacherView, Note, What};
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use crate::app_state::AppState;
use crate::registry::ResourceStorage;

const PANELS: &str = include_str!("panels.html");
const SCRIPT: &str = include_str!("page.js");

/// The least time between two views.
pub const VIEW_MIN_INTERVAL: Duration = Duration::from_millis(250);
/// The most time between two views (ages and the budget move on their own).
pub const VIEW_MAX_INTERVAL: Duration = Duration::from_secs(2);

/// `GET /debug/ui`: the page, its style and script inlined.
pub async fn serve_page() -> Response {
    let mut response = live_page::page("title", PANELS, "", SCRIPT).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

/// The stream's query: which resource to draw in full.
#[derive(Debug, Deserialize)]
pub struct EventsQuery {
    /// The resource's plural; `pods` when absent.
    resource: Option<String>,
}

/// What a `view` event carries.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct View {
    /// etcd's current revision.
    pub etcd_revision: Option<u64>,
    /// The resource drawn in full.
    pub resource: String,
    /// Its watch cache, if it has one.
    pub cacher: Option<CacherView>,
    /// Every resource with its live watcher count (HTTP watches).
    pub resources: Vec<ResourceSummary>,
}

/// One resource in the page's list.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSummary {
    /// The plural.
    pub resource: &'static str,
    /// Its group, `""` for the core group.
    pub group: &'static str,
    /// Its live HTTP watches.
    pub watches: usize,
}

/// The state of `resource` as the page draws it.
pub async fn view(state: &AppState, resource: &str) -> View {
    let registry = &state.registry;
    let counts = state.watches.count_by_resource();
    // Events of the core group and of events.k8s.io share a plural; the
    // converted one has no storage of its own.
    let served = registry.resources().iter().find(|r| {
        r.info.plural == resource
            && !matches!(r.storage, ResourceStorage::Converted(_))
    });
    let (cacher, etcd_revision) = match served.map(|r| &r.storage) {
        Some(ResourceStorage::Cached(c)) => (
            Some(c.view()),
            c.storage().current_resource_version().await.ok(),
        ),
        Some(ResourceStorage::Direct(store)) => {
            (None, store.current_resource_version().await.ok())
        }
        Some(ResourceStorage::Converted(_)) | None => (None, None),
    };
    let resources = registry
        .resources()
        .iter()
        .map(|r| ResourceSummary {
            resource: r.info.plural,
            group: r.info.group,
            watches: counts.get(r.info.plural).copied().unwrap_or(0),
        })
        .collect();
    View {
        etcd_revision,
        resource: resource.to_string(),
        cacher,
        resources,
    }
}

/// `GET /debug/ui/events?resource=pods`: the page's stream.
pub async fn serve_events(
    State(state): State<Arc<AppState>>,
    Query(query): Query<EventsQuery>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let resource = query.resource.unwrap_or_else(|| "pods".to_string());
    let notes = state.registry.probe().subscribe();
    let start = PageStream {
        state,
        resource,
        notes,
        dirty: true,
        next_view: Instant::now(),
    };
    let stream = futures::stream::unfold(start, |mut s| async move {
        let event = s.next().await?;
        Some((Ok(event), s))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// The stream's state between two events.
struct PageStream {
    state: Arc<AppState>,
    resource: String,
    notes: tokio::sync::broadcast::Receiver<Arc<Note>>,
    /// Whether a note came since the last view.
    dirty: bool,
    /// When the next view may (if dirty) or must go out.
    next_view: Instant,
}

impl PageStream {
    /// The next event: a note as it comes, a view when one is due; `None` when
    /// the server shuts down.
    async fn next(&mut self) -> Option<Event> {
        loop {
            let due = if self.dirty {
                self.next_view
            } else {
                self.next_view + VIEW_MAX_INTERVAL - VIEW_MIN_INTERVAL
            };
            tokio::select! {
                biased;
                () = self.state.shutdown.cancelled() => return None,
                () = tokio::time::sleep_until(due) => {
                    self.dirty = false;
                    self.next_view = Instant::now() + VIEW_MIN_INTERVAL;
                    let view = view(&self.state, &self.resource).await;
                    return Some(json_event("view", &view));
                }
                note = self.notes.recv() => match note {
                    Ok(note) => {
                        if !shown(&note, &self.resource) {
                            continue;
                        }
                        self.dirty = true;
                        return Some(json_event("note", &*note));
                    }
                    // Notes were missed: a fresh view covers them.
                    Err(RecvError::Lagged(_)) => self.dirty = true,
                    Err(RecvError::Closed) => return None,
                },
            }
        }
    }
}

/// Whether the page of `resource` shows `note`: its own resource's, and every
/// request (the relists and watches of any client).
fn shown(note: &Note, resource: &str) -> bool {
    note.resource == resource || matches!(note.what, What::Request { .. })
}

fn json_event<T: Serialize + ?Sized>(name: &str, value: &T) -> Event {
    Event::default()
        .event(name)
        .data(serde_json::to_string(value).unwrap_or_default())
}

/// A request to note once it is answered.
#[derive(Debug)]
pub struct RequestNote {
    resource: &'static str,
    path: String,
    client: String,
}

impl RequestNote {
    /// The note of an API `request` on `resource`, if a page listens.
    pub fn of(state: &AppState, request: &Request, resource: &str) -> Option<Self> {
        if resource.is_empty() || !state.registry.probe().is_watched() {
            return None;
        }
        let resource = state
            .registry
            .resources()
            .iter()
            .find(|r| r.info.plural == resource)?
            .info
            .plural;
        let path = request
            .uri()
            .path_and_query()
            .map_or_else(String::new, |p| p.as_str().to_string());
        let client = request
            .headers()
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .and_then(|agent| agent.split_whitespace().next())
            .unwrap_or("")
            .to_string();
        Some(RequestNote {
            resource,
            path,
            client,
        })
    }

    /// Sends the note with the answer's `verb` (as `apiserver_request_total`
    /// counts it) and `code`; the verb is written as the audit log writes it.
    pub fn send(self, state: &AppState, verb: &str, code: u16) {
        let verb = match verb {
            "POST" => "create".to_string(),
            "PUT" => "update".to_string(),
            other => other.to_ascii_lowercase(),
        };
        state
            .registry
            .probe()
            .send(self.resource, || What::Request {
                verb,
                path: self.path,
                code,
                client: self.client,
            });
    }
}
