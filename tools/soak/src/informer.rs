//! The informer under test: stage 4's `SharedIndexInformer` on pods in all
//! namespaces, over stage 3's `KubeListerWatcher` (what client-go's
//! `NewSharedIndexInformer` over a `ListWatch` from `NewListWatchFromClient` is),
//! against the server.
//!
//! The Reflector counts nothing itself, so its `ListerWatcher` is wrapped in
//! [`CountingListerWatcher`], which counts every list (its first page; a paged
//! list is one list) and every watch it opens. Its first list fills the cache;
//! every later one is a relist (client-go's `ListAndWatch` after a watch error
//! it cannot resume from, such as 410 Expired). The informer's watch error
//! handler (client-go's `SetWatchErrorHandler`) keeps the errors behind them.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use parking_lot::Mutex;
use stage3_reflector::{
    Error as ReflectorError, KubeListerWatcher, ListOptions, ListPage,
    ListerWatcher, Watch, WatchOptions, default_watch_error_handler,
};
use stage4_shared_informer::SharedIndexInformer;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Errors kept for the report.
const KEPT_ERRORS: usize = 8;

/// What the informer's Reflector asked of the server.
#[derive(Debug, Default)]
pub struct InformerCounts {
    /// Lists (first pages).
    pub lists: AtomicU64,
    /// Watches opened.
    pub watches: AtomicU64,
    /// Errors the Reflector reported.
    pub errors: AtomicU64,
    /// The first few of them.
    pub error_samples: Mutex<Vec<String>>,
}

impl InformerCounts {
    /// Lists beyond the first: relists.
    pub fn relists(&self) -> u64 {
        self.lists.load(Ordering::Relaxed).saturating_sub(1)
    }
}

/// A [`ListerWatcher`] that counts the lists and watches of the one it wraps.
pub struct CountingListerWatcher<L> {
    inner: L,
    counts: Arc<InformerCounts>,
}

impl<L: ListerWatcher<Pod>> ListerWatcher<Pod> for CountingListerWatcher<L> {
    fn list(
        &self,
        options: ListOptions,
    ) -> impl Future<Output = Result<ListPage<Pod>, ReflectorError>> + Send {
        if options.continue_token.is_empty() {
            self.counts.lists.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.list(options)
    }

    fn watch(
        &self,
        options: WatchOptions,
    ) -> impl Future<Output = Result<Watch<Pod>, ReflectorError>> + Send {
        self.counts.watches.fetch_add(1, Ordering::Relaxed);
        self.inner.watch(options)
    }
}

/// The informer type the soak runs.
pub type PodInformer =
    SharedIndexInformer<Pod, CountingListerWatcher<KubeListerWatcher<Pod>>>;

/// A running informer and its counts.
pub struct Informer {
    /// The informer (its cache is read for the samples and the final check).
    pub informer: PodInformer,
    /// Its lists, watches and errors.
    pub counts: Arc<InformerCounts>,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Informer {
    /// Starts a pod informer (no resync) against `server` and waits, within
    /// `sync_timeout`, until it has synced.
    pub async fn start(
        server: &hyper::Uri,
        sync_timeout: Duration,
    ) -> Result<Informer, String> {
        let client =
            KubeListerWatcher::<Pod>::client(kube::Config::new(server.clone()))
                .map_err(|error| error.to_string())?;
        let counts = Arc::new(InformerCounts::default());
        let lister_watcher = CountingListerWatcher {
            inner: KubeListerWatcher::<Pod>::for_namespace(client, None),
            counts: Arc::clone(&counts),
        };
        let informer: PodInformer = SharedIndexInformer::new(
            lister_watcher,
            Duration::ZERO,
            stage1_store::Indexers::new(),
        );
        let errors = Arc::clone(&counts);
        informer
            .set_watch_error_handler(move |name, error| {
                errors.errors.fetch_add(1, Ordering::Relaxed);
                let mut samples = errors.error_samples.lock();
                if samples.len() < KEPT_ERRORS {
                    samples.push(error.to_string());
                }
                default_watch_error_handler(name, error);
            })
            .map_err(|error| error.to_string())?;
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let (informer, stop) = (informer.clone(), stop.clone());
            async move { informer.run(stop).await }
        });
        let running = Informer {
            informer,
            counts,
            stop,
            task,
        };
        let deadline = tokio::time::Instant::now() + sync_timeout;
        while !running.informer.has_synced() {
            if tokio::time::Instant::now() >= deadline {
                running.stop().await;
                return Err(format!(
                    "the informer did not sync within {sync_timeout:?}"
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(running)
    }

    /// Pods in its cache.
    pub fn cache_len(&self) -> usize {
        self.informer.get_indexer().len()
    }

    /// Its cache as `namespace/name` → resourceVersion.
    pub fn state(&self) -> BTreeMap<String, String> {
        let store = self.informer.get_indexer();
        let pods = store.thread_safe_store().list();
        pods.iter().map(|pod| pod_state(pod)).collect()
    }

    /// Stops it and waits (within 30 s) for its tasks.
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(30), self.task).await;
    }
}

/// A pod's `namespace/name` and resourceVersion.
pub fn pod_state(pod: &Pod) -> (String, String) {
    (
        format!(
            "{}/{}",
            pod.metadata.namespace.as_deref().unwrap_or(""),
            pod.metadata.name.as_deref().unwrap_or("")
        ),
        pod.metadata.resource_version.clone().unwrap_or_default(),
    )
}

/// Where two states differ: up to `max` keys of each side whose value the other
/// lacks or has differently.
pub fn differences(
    informer: &BTreeMap<String, String>,
    server: &BTreeMap<String, String>,
    max: usize,
) -> String {
    let only_server: Vec<String> = server
        .iter()
        .filter(|(k, v)| informer.get(*k) != Some(*v))
        .take(max)
        .map(|(k, v)| format!("{k}@{v}"))
        .collect();
    let only_informer: Vec<String> = informer
        .iter()
        .filter(|(k, v)| server.get(*k) != Some(*v))
        .take(max)
        .map(|(k, v)| format!("{k}@{v}"))
        .collect();
    format!(
        "informer {} pods, server {}; server has {only_server:?}, informer has {only_informer:?}",
        informer.len(),
        server.len()
    )
}
