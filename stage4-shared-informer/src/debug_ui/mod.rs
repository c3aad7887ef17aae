//! An informer's live page: the client half of the workshop's projector, as
//! `mini-apiserver`'s `/debug/ui` is the server half.
//!
//! [`InformerPage`] gathers informers (each with a name) and serves, with the
//! frame every live page shares (`tools/live-page`), `/debug/ui`: for each
//! informer the Reflector's phase (listing, watching, backing off) and last
//! resource version, the queue's keys with their deltas, the indexer's size
//! and indexes, each listener's pending notifications and resync state, and a
//! strip of the deltas popped last. The view is pushed when the informer
//! applies deltas (and at least once a second, for the phase); the page never
//! polls.
//!
//! client-go has no such page: its informers show themselves only through
//! metrics (the workqueue's) and `klog` lines.

use std::collections::VecDeque;
use std::sync::Arc;

use kube::Resource;
use parking_lot::Mutex;
use serde::Serialize;
use stage1_store::{Cache, Indexer, Store, meta_namespace_key_func};
use stage2_deltafifo::{DeltaObject, Deltas};
use stage3_reflector::Phase;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::controller::InformerQueue;

const PANELS: &str = include_str!("panels.html");
const SCRIPT: &str = include_str!("page.js");

/// The popped deltas a page's strip keeps.
pub const RECENT_DELTAS: usize = 12;
/// The queued keys a view lists (the count is always whole).
pub const QUEUE_KEYS_SHOWN: usize = 30;
/// The values of each index a view lists, the largest first.
pub const INDEX_VALUES_SHOWN: usize = 8;

/// One informer as its page draws it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InformerView {
    /// The name it was added to the page under.
    pub name: String,
    /// The Reflector's phase: `idle`, `listing`, `streamingList`, `watching`,
    /// `backingOff` or `stopped`.
    pub phase: &'static str,
    /// The Reflector's last synced resource version.
    pub last_sync_resource_version: String,
    /// Whether the first list has been popped and applied.
    pub has_synced: bool,
    /// The queue between the Reflector and the process loop.
    pub queue: QueueView,
    /// The indexer.
    pub indexer: IndexerView,
    /// Each handler's listener.
    pub listeners: Vec<ListenerView>,
    /// The deltas popped last, newest first.
    pub recent: Vec<PoppedView>,
}

/// The queue.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueView {
    /// `DeltaFIFO` or `RealFIFO`.
    pub kind: &'static str,
    /// Its items (keys for the DeltaFIFO, deltas for the RealFIFO).
    pub len: usize,
    /// The first keys, each with its deltas (the DeltaFIFO's).
    pub items: Vec<QueuedView>,
}

/// One queued key.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedView {
    /// `namespace/name`.
    pub key: String,
    /// Its deltas, oldest first.
    pub deltas: Vec<DeltaView>,
}

/// One delta.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeltaView {
    /// `Added`, `Updated`, `Deleted`, `Replaced` or `Sync`.
    pub delta_type: String,
    /// The object's resource version, if it has one.
    pub resource_version: String,
}

/// The indexer.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexerView {
    /// Objects cached.
    pub len: usize,
    /// Each index with its largest values.
    pub indexes: Vec<IndexView>,
}

/// One index.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexView {
    /// Its name (`namespace`, ...).
    pub name: String,
    /// How many values it holds.
    pub values: usize,
    /// The largest values with their key counts.
    pub top: Vec<(String, usize)>,
}

/// One listener (one handler).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListenerView {
    /// Its registration's id.
    pub id: u64,
    /// Notifications waiting for the handler.
    pub pending: usize,
    /// The most that ever waited.
    pub high_water_mark: usize,
    /// Its resync period in seconds (0: none).
    pub resync_period_secs: f64,
    /// Whether it takes part in the resync now running.
    pub is_syncing: bool,
    /// Whether its next resync is due.
    pub resync_due: bool,
}

/// Deltas the process loop popped for one key.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoppedView {
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// `namespace/name`.
    pub key: String,
    /// Its deltas, oldest first.
    pub deltas: Vec<DeltaView>,
    /// Whether they came from the initial list.
    pub initial: bool,
}

/// What an informer keeps for its page: the deltas popped last, and a counter
/// that moves when it applies deltas. Nothing is kept while no page watches.
#[derive(Debug)]
pub struct PageHook {
    changes: watch::Sender<u64>,
    recent: Mutex<VecDeque<PoppedView>>,
}

impl Default for PageHook {
    fn default() -> Self {
        PageHook {
            changes: watch::Sender::new(0),
            recent: Mutex::new(VecDeque::with_capacity(RECENT_DELTAS)),
        }
    }
}

impl PageHook {
    /// Whether a page watches.
    pub fn is_watched(&self) -> bool {
        self.changes.receiver_count() > 0
    }

    /// Records popped deltas (built only while a page watches) and tells the
    /// page.
    pub fn popped(&self, popped: impl FnOnce() -> PoppedView) {
        if !self.is_watched() {
            return;
        }
        let mut recent = self.recent.lock();
        if recent.len() == RECENT_DELTAS {
            recent.pop_back();
        }
        recent.push_front(popped());
        drop(recent);
        self.changes.send_modify(|n| *n += 1);
    }

    /// The deltas popped last, newest first.
    pub fn recent(&self) -> Vec<PoppedView> {
        self.recent.lock().iter().cloned().collect()
    }

    /// A receiver of the change counter.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }
}

/// Anything a page can show: a [`SharedIndexInformer`](crate::SharedIndexInformer)
/// of any type.
pub trait Inspect: Send + Sync + 'static {
    /// Its state now, under `name`.
    fn view(&self, name: &str) -> InformerView;
    /// A receiver that sees a change whenever it applies deltas.
    fn changes(&self) -> watch::Receiver<u64>;
}

/// A page of several informers.
pub struct InformerPage {
    informers: Vec<(String, Arc<dyn Inspect>)>,
    /// Moves when any of them changes.
    merged: watch::Sender<u64>,
}

impl Default for InformerPage {
    fn default() -> Self {
        InformerPage {
            informers: Vec::new(),
            merged: watch::Sender::new(0),
        }
    }
}

impl std::fmt::Debug for InformerPage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> =
            self.informers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("InformerPage")
            .field("informers", &names)
            .finish()
    }
}

impl InformerPage {
    /// An empty page.
    pub fn new() -> Self {
        InformerPage::default()
    }

    /// Adds `informer` under `name` (e.g. `pods`).
    #[must_use]
    pub fn with(
        mut self,
        name: impl Into<String>,
        informer: Arc<dyn Inspect>,
    ) -> Self {
        self.informers.push((name.into(), informer));
        self
    }

    /// Every informer's view.
    pub fn views(&self) -> Vec<InformerView> {
        self.informers
            .iter()
            .map(|(name, informer)| informer.view(name))
            .collect()
    }

    /// The page's HTML.
    pub fn html() -> String {
        live_page::page("title", PANELS, "", SCRIPT)
    }

    /// Serves the page on `listener` until `shutdown`.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: CancellationToken,
    ) -> std::io::Result<()> {
        self.forward_changes(&shutdown);
        live_page::serve(listener, Self::html(), Arc::new(self), shutdown).await
    }

    /// The page's routes (`/debug/ui`, `/debug/ui/events`), to merge into a
    /// process's own server; its streams end at `shutdown`.
    pub fn router(self, shutdown: CancellationToken) -> axum::Router {
        self.forward_changes(&shutdown);
        live_page::router(Self::html(), Arc::new(self), shutdown)
    }

    /// Moves the page's change counter whenever one of its informers changes,
    /// until `shutdown`.
    fn forward_changes(&self, shutdown: &CancellationToken) {
        for (_, informer) in &self.informers {
            let mut changes = informer.changes();
            let merged = self.merged.clone();
            let stop = shutdown.clone();
            tokio::spawn(async move {
                loop {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        changed = changes.changed() => {
                            if changed.is_err() {
                                return;
                            }
                            merged.send_modify(|n| *n += 1);
                        }
                    }
                }
            });
        }
    }
}

impl live_page::Source for InformerPage {
    fn view(&self) -> serde_json::Value {
        serde_json::json!({ "informers": self.views() })
    }

    fn changes(&self) -> watch::Receiver<u64> {
        self.merged.subscribe()
    }
}

pub(crate) fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Idle => "idle",
        Phase::Listing => "listing",
        Phase::StreamingList => "streamingList",
        Phase::Watching => "watching",
        Phase::BackingOff => "backingOff",
        Phase::Stopped => "stopped",
    }
}

fn delta_views<K: Resource>(deltas: &Deltas<K>) -> Vec<DeltaView> {
    deltas
        .0
        .iter()
        .map(|delta| DeltaView {
            delta_type: format!("{:?}", delta.delta_type),
            resource_version: match &delta.object {
                DeltaObject::Object(obj) => {
                    obj.meta().resource_version.clone().unwrap_or_default()
                }
                DeltaObject::Tombstone(t) => t
                    .obj
                    .as_ref()
                    .and_then(|o| o.meta().resource_version.clone())
                    .unwrap_or_default(),
                DeltaObject::Bookmark(rv) => rv.to_string(),
                DeltaObject::ReplacedAll(_) | DeltaObject::SyncAll => String::new(),
            },
        })
        .collect()
}

pub(crate) fn popped_view<K>(deltas: &Deltas<K>, initial: bool) -> PoppedView
where
    K: Resource,
    K::DynamicType: Default,
{
    let key = deltas
        .0
        .last()
        .map(|delta| match &delta.object {
            DeltaObject::Object(obj) => {
                meta_namespace_key_func(&**obj).unwrap_or_default()
            }
            DeltaObject::Tombstone(t) => t.key.to_string(),
            DeltaObject::Bookmark(_)
            | DeltaObject::ReplacedAll(_)
            | DeltaObject::SyncAll => String::new(),
        })
        .unwrap_or_default();
    PoppedView {
        at_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        key,
        deltas: delta_views(deltas),
        initial,
    }
}

pub(crate) fn queue_view<K>(queue: &InformerQueue<K>) -> QueueView
where
    K: Resource + Send + Sync + 'static,
{
    match queue {
        InformerQueue::DeltaFifo(fifo) => {
            let keys = fifo.list_keys();
            let items = keys
                .iter()
                .take(QUEUE_KEYS_SHOWN)
                .map(|key| QueuedView {
                    key: key.to_string(),
                    deltas: fifo
                        .get_deltas(key)
                        .map(|d| delta_views(&d))
                        .unwrap_or_default(),
                })
                .collect();
            QueueView {
                kind: "DeltaFIFO",
                len: fifo.len(),
                items,
            }
        }
        InformerQueue::RealFifo(fifo) => QueueView {
            kind: "RealFIFO",
            len: fifo.len(),
            items: Vec::new(),
        },
    }
}

pub(crate) fn indexer_view<K>(indexer: &Cache<K>) -> IndexerView
where
    K: Resource + Send + Sync + 'static,
{
    let mut indexes: Vec<IndexView> = indexer
        .get_indexers()
        .keys()
        .map(|name| {
            let values = indexer.list_index_func_values(name).unwrap_or_default();
            let mut top: Vec<(String, usize)> = values
                .iter()
                .map(|value| {
                    let count =
                        indexer.index_keys(name, value).map_or(0, |k| k.len());
                    (value.clone(), count)
                })
                .collect();
            top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            top.truncate(INDEX_VALUES_SHOWN);
            IndexView {
                name: name.clone(),
                values: values.len(),
                top,
            }
        })
        .collect();
    indexes.sort_by(|a, b| a.name.cmp(&b.name));
    IndexerView {
        len: indexer.list().len(),
        indexes,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::Pod;
    use stage3_reflector::FakeListerWatcher;
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::{FakeSource, ResourceEventHandlerFuncs, SharedInformerFactory};

    fn pod(name: &str) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = Some(name.into());
        pod.metadata.namespace = Some("default".into());
        pod
    }

    /// A factory's page names its informer, and a view shows it synced and
    /// watching, its pods in the indexer and the namespace index, its handler's
    /// listener, and (while the page listens) the deltas it popped.
    #[tokio::test(start_paused = true)]
    async fn a_view_shows_the_reflector_the_indexer_the_listeners_and_the_popped_deltas()
     {
        let pods = FakeListerWatcher::<Pod>::new();
        pods.add(pod("web-0")).unwrap();
        let source = FakeSource::new();
        source.insert(pods.clone());
        let factory = SharedInformerFactory::new(source, Duration::ZERO);
        let informer = factory.pods().informer();
        informer
            .add_event_handler(ResourceEventHandlerFuncs::<Pod>::new())
            .unwrap();
        let page = factory.page();
        let mut changes = informer.changes();
        factory.start();
        let give_up = CancellationToken::new();
        tokio::select! {
            _ = factory.wait_for_cache_sync(&give_up) => {}
            () = tokio::time::sleep(Duration::from_secs(10)) => panic!("no sync"),
        }
        pods.add(pod("web-1")).unwrap();
        let popped_web_1 = async {
            loop {
                changes.changed().await.expect("the informer is alive");
                let recent = page.views()[0].recent.clone();
                if recent.first().is_some_and(|p| p.key == "default/web-1") {
                    return recent;
                }
            }
        };
        let recent = tokio::time::timeout(Duration::from_secs(10), popped_web_1)
            .await
            .expect("web-1 popped in time");
        assert_eq!(recent[0].deltas[0].delta_type, "Added");
        assert!(!recent[0].initial);

        let view = &page.views()[0];
        assert_eq!(view.name, "Pod");
        assert_eq!(view.phase, "watching");
        assert!(view.has_synced);
        assert_eq!(view.queue.kind, "DeltaFIFO");
        assert_eq!(view.indexer.len, 2);
        let namespace = &view.indexer.indexes[0];
        assert_eq!(namespace.name, "namespace");
        assert_eq!(namespace.top, [("default".to_string(), 2)]);
        assert_eq!(view.listeners.len(), 1);
        let json = live_page::Source::view(&page);
        assert_eq!(
            json["informers"][0]["lastSyncResourceVersion"],
            view.last_sync_resource_version
        );
        factory.shutdown().await;
    }
}
