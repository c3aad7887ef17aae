//! `/metrics` in the Prometheus text format, through the `prometheus-client` crate.
//!
//! Mirrors the apiserver series a watch workshop looks at:
//!
//! | Series                                              | Upstream                                    |
//! |-----------------------------------------------------|---------------------------------------------|
//! | `apiserver_request_total{verb,resource,code}`       | `pkg/endpoints/metrics` `apiserver_request_total` |
//! | `apiserver_registered_watchers{resource}`           | live HTTP watches (`apiserver_registered_watchers`) |
//! | `apiserver_watch_cache_watchers{resource}`          | the Cacher's `cacheWatcher`s               |
//! | `apiserver_watch_cache_events_dispatched_total{resource}` | `apiserver_watch_events_total` (cacher side) |
//! | `apiserver_terminated_watchers_total{resource}`     | same name: watchers closed for being slow   |
//! | `apiserver_watch_cache_capacity{resource}`          | same name                                   |
//! | `apiserver_watch_cache_resource_version{resource}`  | same name                                   |
//! | `apiserver_watch_cache_ready{resource}`             | `apiserver_watch_cache_initializations_total`'s state |
//! | `apiserver_watch_error_events_total`                | ERROR events written to watch streams (410s) |
//! | `apiserver_watch_cache_watcher_buffer_fill_max{resource}` | the fullest cache watcher buffer right now (its high-water mark at scrape time) |
//!
//! Request counts live for the server's life; the watch figures are read from the
//! storages at each scrape (a fresh registry per scrape, so a counter is exactly the
//! cache's own count).

use axum::http::Method;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::live_watches::WatchRegistry;
use crate::request_info::{self, ApiPath};

type Labels = Vec<(String, String)>;

/// The metrics that live as long as the server.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Family<Labels, Counter>,
    watch_errors: Counter,
}

impl Metrics {
    /// Empty metrics.
    pub fn new() -> Self {
        Metrics::default()
    }

    /// Counts one answered request.
    pub fn count_request(&self, verb: &str, resource: &str, code: u16) {
        self.requests
            .get_or_create(&vec![
                ("verb".to_string(), verb.to_string()),
                ("resource".to_string(), resource.to_string()),
                ("code".to_string(), code.to_string()),
            ])
            .inc();
    }

    /// Counts one `ERROR` event written to a watch stream (410 Expired, mostly).
    pub fn count_watch_error(&self) {
        self.watch_errors.inc();
    }

    /// `ERROR` events written to watch streams so far.
    pub fn watch_errors(&self) -> u64 {
        self.watch_errors.get()
    }

    /// Answered requests so far with this verb, resource and code.
    pub fn requests(&self, verb: &str, resource: &str, code: u16) -> u64 {
        self.requests
            .get_or_create(&vec![
                ("verb".to_string(), verb.to_string()),
                ("resource".to_string(), resource.to_string()),
                ("code".to_string(), code.to_string()),
            ])
            .get()
    }
}

/// Mirrors `metrics.CleanVerb`: LIST and WATCH told apart from GET, and the
/// resource, for a request.
pub(crate) fn verb_and_resource(
    method: &Method,
    uri: &axum::http::Uri,
) -> (String, String) {
    let watch = uri.query().is_some_and(|q| {
        q.split('&').any(|kv| kv == "watch=true" || kv == "watch=1")
    });
    match request_info::parse(uri.path()) {
        Some(ApiPath::Resource(r)) => {
            let verb = match (method, r.name.is_some()) {
                (&Method::GET, _) if watch || r.legacy_watch => "WATCH",
                (&Method::GET, false) => "LIST",
                (m, _) => m.as_str(),
            };
            (verb.to_string(), r.resource)
        }
        _ => (method.as_str().to_string(), String::new()),
    }
}

fn gauge(registry: &mut Registry, name: &str, help: &str) -> Family<Labels, Gauge> {
    let family = Family::<Labels, Gauge>::default();
    registry.register(name, help, family.clone());
    family
}

fn counter(
    registry: &mut Registry,
    name: &str,
    help: &str,
) -> Family<Labels, Counter> {
    let family = Family::<Labels, Counter>::default();
    registry.register(name, help, family.clone());
    family
}

fn to_i64(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

/// Renders every metric: the server's own (`metrics`), the live HTTP watches
/// and each resource's watch cache.
pub fn render(
    metrics: &Metrics,
    resources: &crate::registry::Registry,
    watches: &WatchRegistry,
) -> String {
    let mut registry = Registry::default();
    registry.register(
        "apiserver_request",
        "Requests answered, by verb, resource and HTTP code.",
        metrics.requests.clone(),
    );
    registry.register(
        "apiserver_watch_error_events",
        "ERROR events (410 Expired, mostly) written to watch streams.",
        metrics.watch_errors.clone(),
    );
    let http_watchers = gauge(
        &mut registry,
        "apiserver_registered_watchers",
        "Live HTTP watches per resource.",
    );
    let cache_watchers = gauge(
        &mut registry,
        "apiserver_watch_cache_watchers",
        "Live watch cache watchers per resource.",
    );
    let dispatched = counter(
        &mut registry,
        "apiserver_watch_cache_events_dispatched",
        "Events the watch cache handed to its watchers.",
    );
    let terminated = counter(
        &mut registry,
        "apiserver_terminated_watchers",
        "Watchers closed because they could not keep up.",
    );
    let capacity = gauge(
        &mut registry,
        "apiserver_watch_cache_capacity",
        "Events the watch cache keeps.",
    );
    let resource_version = gauge(
        &mut registry,
        "apiserver_watch_cache_resource_version",
        "The watch cache's resource version.",
    );
    let ready = gauge(
        &mut registry,
        "apiserver_watch_cache_ready",
        "1 when the watch cache serves, 0 while it (re)initializes.",
    );
    let buffer_max = gauge(
        &mut registry,
        "apiserver_watch_cache_watcher_buffer_fill_max",
        "Events waiting in the fullest watcher buffer at scrape time.",
    );
    let by_resource = watches.count_by_resource();
    for r in resources.resources() {
        let labels = vec![("resource".to_string(), r.info.plural.to_string())];
        let live = by_resource.get(r.info.plural).copied().unwrap_or(0);
        http_watchers.get_or_create(&labels).set(to_i64(live));
        if let Some(stats) = r.storage.cache_stats() {
            cache_watchers
                .get_or_create(&labels)
                .set(to_i64(stats.watchers));
            dispatched
                .get_or_create(&labels)
                .inc_by(stats.events_dispatched);
            terminated
                .get_or_create(&labels)
                .inc_by(stats.watchers_terminated_slow);
            capacity.get_or_create(&labels).set(to_i64(stats.capacity));
            resource_version
                .get_or_create(&labels)
                .set(to_i64(stats.resource_version));
            ready.get_or_create(&labels).set(i64::from(stats.ready));
            let fullest = r
                .storage
                .cache_watchers()
                .iter()
                .map(|w| w.buffered)
                .max()
                .unwrap_or(0);
            buffer_max.get_or_create(&labels).set(to_i64(fullest));
        } else {
            // Without a watch cache every HTTP watch is its own etcd watch.
            dispatched.get_or_create(&labels).inc_by(0);
            terminated.get_or_create(&labels).inc_by(0);
        }
    }
    let mut text = String::new();
    if encode(&mut text, &registry).is_err() {
        text.clear();
    }
    text
}
