//! The page's own server, for a process without one: `GET /debug/ui` and the
//! server-sent event stream `GET /debug/ui/events`.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::Stream;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The least time between two views.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// The most time between two views.
pub const MAX_INTERVAL: Duration = Duration::from_secs(1);

/// What a page draws: a view of the process, and a signal that it changed.
pub trait Source: Send + Sync + 'static {
    /// The state now, as the page's script reads it.
    fn view(&self) -> serde_json::Value;
    /// A receiver that sees a change whenever the state changed.
    fn changes(&self) -> watch::Receiver<u64>;
}

struct Served {
    html: String,
    source: Arc<dyn Source>,
    shutdown: CancellationToken,
}

/// The routes: `html` at `/debug/ui` and `source`'s views at
/// `/debug/ui/events`, whose streams end at `shutdown`. A process with a server
/// of its own merges them into its router.
pub fn router(
    html: String,
    source: Arc<dyn Source>,
    shutdown: CancellationToken,
) -> Router {
    let served = Arc::new(Served {
        html,
        source,
        shutdown,
    });
    Router::new()
        .route("/debug/ui", get(page))
        .route("/debug/ui/events", get(events))
        .with_state(served)
}

/// Serves [`router`] on `listener` until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    html: String,
    source: Arc<dyn Source>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let router = router(html, source, shutdown.clone());
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
}

async fn page(State(served): State<Arc<Served>>) -> Response {
    let mut response = served.html.clone().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

async fn events(
    State(served): State<Arc<Served>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let changes = served.source.changes();
    let start = (served, changes, true);
    let stream =
        futures::stream::unfold(start, |(served, mut changes, first)| async move {
            if !first {
                let next = Instant::now() + MIN_INTERVAL;
                tokio::select! {
                    biased;
                    () = served.shutdown.cancelled() => return None,
                    _ = tokio::time::timeout(MAX_INTERVAL, changes.changed()) => {}
                }
                // Coalesce a burst of changes into one view.
                tokio::select! {
                    biased;
                    () = served.shutdown.cancelled() => return None,
                    () = tokio::time::sleep_until(next) => {}
                }
                changes.borrow_and_update();
            }
            let view = served.source.view();
            let event = Event::default()
                .event("view")
                .data(serde_json::to_string(&view).unwrap_or_default());
            Some((Ok(event), (served, changes, false)))
        });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
