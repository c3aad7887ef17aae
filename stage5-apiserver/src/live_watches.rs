//! Every live HTTP watch, for `/metrics` (`apiserver_registered_watchers`) and
//! the `/debug/watchers` page. Upstream counts its watchers in
//! `pkg/endpoints/metrics` (`RegisteredWatchers`); this server also keeps what
//! each one watches, so a workshop can see the fan-out.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

/// One live HTTP watch.
#[derive(Clone, Debug)]
pub struct LiveWatch {
    /// The resource, e.g. `pods`.
    pub resource: &'static str,
    /// What it watches: namespace, selectors and starting version.
    pub identifier: String,
    /// When it started.
    pub started: Instant,
    /// Events written so far.
    pub events: Arc<AtomicU64>,
}

/// Every live HTTP watch, by id.
#[derive(Debug, Default)]
pub struct WatchRegistry {
    next_id: AtomicU64,
    live: Mutex<BTreeMap<u64, LiveWatch>>,
}

impl WatchRegistry {
    /// Keeps `watch` until [`unregister`](Self::unregister) is called with the
    /// id it returns.
    pub fn register(&self, watch: LiveWatch) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.live.lock().insert(id, watch);
        id
    }

    /// Forgets the watch `id` (its response body was dropped).
    pub fn unregister(&self, id: u64) {
        self.live.lock().remove(&id);
    }

    /// A snapshot of the live watches.
    pub fn snapshot(&self) -> Vec<LiveWatch> {
        self.live.lock().values().cloned().collect()
    }

    /// How many watches each resource has.
    pub fn count_by_resource(&self) -> BTreeMap<&'static str, usize> {
        let mut counts = BTreeMap::new();
        for w in self.live.lock().values() {
            *counts.entry(w.resource).or_insert(0) += 1;
        }
        counts
    }
}
