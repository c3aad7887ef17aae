//! `/debug/watchers`: a small HTML page of the live watchers, per resource, so a
//! workshop can see the fan-out. The apiserver has no such page (its closest are
//! `/debug/api_priority_and_fairness` dumps); the figures are the ones the Cacher
//! keeps per `cacheWatcher` (identifier, buffer fill) and those the HTTP layer keeps
//! per watch (what it watches, age, events sent).

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::Html;

use crate::app_state::AppState;

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn age(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// Renders the page.
pub fn render(state: &AppState) -> String {
    let mut html = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>watchers</title>\
         <style>body{font-family:sans-serif}table{border-collapse:collapse}\
         td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}</style></head><body>\n\
         <h1>Live watchers</h1>\n",
    );
    let http = state.watches.snapshot();
    for r in state.registry.resources() {
        let plural = r.info.plural;
        let http_watches: Vec<_> =
            http.iter().filter(|w| w.resource == plural).collect();
        let cache_watchers = r.storage.cache_watchers();
        let stats = r.storage.cache_stats();
        let _ = writeln!(
            html,
            "<h2>{plural}</h2>\n<p>{} HTTP watch(es); {}</p>",
            http_watches.len(),
            match &stats {
                Some(s) => format!(
                    "watch cache: {} watcher(s), capacity {}, resource version {}, {}",
                    s.watchers,
                    s.capacity,
                    s.resource_version,
                    if s.ready { "ready" } else { "not ready" }
                ),
                None => "no watch cache: every watch is an etcd watch".to_string(),
            }
        );
        if !cache_watchers.is_empty() {
            html.push_str(
                "<table><tr><th>cache watcher</th><th>buffer fill</th><th>age</th></tr>\n",
            );
            for w in &cache_watchers {
                let _ = writeln!(
                    html,
                    "<tr><td>{}</td><td>{}/{}</td><td>{}</td></tr>",
                    escape(&w.identifier),
                    w.buffered,
                    w.buffer_capacity,
                    age(w.age)
                );
            }
            html.push_str("</table>\n");
        }
        if !http_watches.is_empty() {
            html.push_str("<table><tr><th>HTTP watch</th><th>events sent</th><th>age</th></tr>\n");
            for w in http_watches {
                let _ = writeln!(
                    html,
                    "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&w.identifier),
                    w.events.load(std::sync::atomic::Ordering::Relaxed),
                    age(w.started.elapsed())
                );
            }
            html.push_str("</table>\n");
        }
    }
    html.push_str("</body></html>\n");
    html
}

/// `GET /debug/watchers`.
pub async fn serve_watchers(State(state): State<Arc<AppState>>) -> Html<String> {
    Html(render(&state))
}
