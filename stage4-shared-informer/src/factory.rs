//! One informer per type, shared by everything in a program: the
//! SharedInformerFactory.
//!
//! Mirrors client-go's `informers/factory.go`: `NewSharedInformerFactoryWithOptions`
//! with `WithNamespace`, `WithTweakListOptions`, `WithCustomResyncConfig` and
//! `WithTransform`; `InformerFor`, `Start`, `WaitForCacheSync` and `Shutdown`; and
//! the generated typed accessors (`factory.Core().V1().Pods()` →
//! [`SharedInformerFactory::pods`]).
//!
//! Where the objects come from is a [`ListerWatcherSource`]: [`KubeSource`] over a
//! kube `Client` (a real cluster or stage 5's server), or [`FakeSource`] over stage
//! 3's scriptable fakes (tests and the in-process demo).

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use hashbrown::{HashMap, HashSet};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod};
use kube::Resource;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use stage2_deltafifo::TransformFunc;
use stage3_reflector::{
    Error as ReflectorError, FakeListerWatcher, KubeListerWatcher, ListOptions,
    ListPage, ListerWatcher, Watch, WatchOptions,
};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::listers::Lister;
use crate::shared_informer::SharedIndexInformer;

/// What the factory can build informers for: any k8s-openapi resource type.
pub trait FactoryResource:
    Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static
{
}

impl<K> FactoryResource for K where
    K: Resource<DynamicType = ()>
        + Clone
        + Debug
        + DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// Mirrors client-go's `TweakListOptionsFunc`: adjusts the options of every list and
/// watch an informer makes (typically to set a label or field selector).
pub type TweakListOptions = Arc<dyn Fn(&mut ListOptions) + Send + Sync>;

/// Makes the [`ListerWatcher`] of each type for a factory.
pub trait ListerWatcherSource: Send + Sync + 'static {
    /// The lister-watcher for objects of type `K`.
    type ListerWatcher<K: FactoryResource>: ListerWatcher<K> + 'static;

    /// A lister-watcher for `K`, limited to `namespace` for namespaced types when
    /// one is given.
    fn lister_watcher<K: FactoryResource>(
        &self,
        namespace: Option<&str>,
    ) -> Self::ListerWatcher<K>;
}

/// A [`ListerWatcherSource`] over a kube `Client`.
#[derive(Clone)]
pub struct KubeSource {
    client: kube::Client,
}

impl KubeSource {
    /// A source that talks to the API server behind `client`. Build the client with
    /// [`KubeListerWatcher::client`], which turns kube's own retries off so that 429
    /// and 504 reach the Reflector.
    pub fn new(client: kube::Client) -> Self {
        Self { client }
    }
}

impl ListerWatcherSource for KubeSource {
    type ListerWatcher<K: FactoryResource> = KubeListerWatcher<K>;

    fn lister_watcher<K: FactoryResource>(
        &self,
        namespace: Option<&str>,
    ) -> KubeListerWatcher<K> {
        KubeListerWatcher::for_namespace(self.client.clone(), namespace)
    }
}

/// A [`ListerWatcherSource`] over stage 3's [`FakeListerWatcher`]s: register one per
/// type with [`FakeSource::insert`]; a type never registered gets an empty fake.
#[derive(Default, Clone)]
pub struct FakeSource {
    fakes: Arc<Mutex<HashMap<TypeId, Box<dyn Any + Send + Sync>>>>,
}

impl FakeSource {
    /// An empty source.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `K` from `fake` (a handle: the test keeps a clone to drive it).
    pub fn insert<K: FactoryResource>(&self, fake: FakeListerWatcher<K>) {
        self.fakes.lock().insert(TypeId::of::<K>(), Box::new(fake));
    }
}

impl ListerWatcherSource for FakeSource {
    type ListerWatcher<K: FactoryResource> = FakeListerWatcher<K>;

    fn lister_watcher<K: FactoryResource>(
        &self,
        _namespace: Option<&str>,
    ) -> FakeListerWatcher<K> {
        let mut fakes = self.fakes.lock();
        let entry = fakes
            .entry(TypeId::of::<K>())
            .or_insert_with(|| Box::new(FakeListerWatcher::<K>::new()));
        match entry.downcast_ref::<FakeListerWatcher<K>>() {
            Some(fake) => fake.clone(),
            None => FakeListerWatcher::new(),
        }
    }
}

/// A lister-watcher with the factory's tweak applied to every call.
pub struct TweakedListerWatcher<L> {
    inner: L,
    tweak: Option<TweakListOptions>,
}

impl<K, L> ListerWatcher<K> for TweakedListerWatcher<L>
where
    L: ListerWatcher<K>,
{
    fn list(
        &self,
        mut options: ListOptions,
    ) -> impl Future<Output = Result<ListPage<K>, ReflectorError>> + Send {
        if let Some(tweak) = &self.tweak {
            tweak(&mut options);
        }
        self.inner.list(options)
    }

    fn watch(
        &self,
        mut options: WatchOptions,
    ) -> impl Future<Output = Result<Watch<K>, ReflectorError>> + Send {
        if let Some(tweak) = &self.tweak {
            let mut selectors = ListOptions {
                label_selector: std::mem::take(&mut options.label_selector),
                field_selector: std::mem::take(&mut options.field_selector),
                ..ListOptions::default()
            };
            tweak(&mut selectors);
            options.label_selector = selectors.label_selector;
            options.field_selector = selectors.field_selector;
        }
        self.inner.watch(options)
    }
}

/// The informer type a factory hands out for `K`.
pub type FactoryInformer<S, K> = SharedIndexInformer<
    K,
    TweakedListerWatcher<<S as ListerWatcherSource>::ListerWatcher<K>>,
>;

/// What the factory needs of an informer whatever its type.
trait AnyInformer: Send + Sync {
    fn has_synced(&self) -> bool;
    fn run(
        &self,
        shutdown: CancellationToken,
    ) -> Pin<Box<dyn Future<Output = ()> + Send>>;
    fn as_any(&self) -> &dyn Any;
    fn inspect(&self) -> Arc<dyn crate::debug_ui::Inspect>;
}

impl<K, L> AnyInformer for SharedIndexInformer<K, L>
where
    K: Resource + Send + Sync + 'static,
    K::DynamicType: Default,
    L: ListerWatcher<K> + 'static,
{
    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }

    fn run(
        &self,
        shutdown: CancellationToken,
    ) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let informer = self.clone();
        Box::pin(async move { informer.run(shutdown).await })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn inspect(&self) -> Arc<dyn crate::debug_ui::Inspect> {
        Arc::new(self.clone())
    }
}

struct Entry {
    type_name: &'static str,
    informer: Box<dyn AnyInformer>,
}

// ANCHOR: struct
/// Mirrors client-go's `sharedInformerFactory`.
pub struct SharedInformerFactory<S> {
    source: S,
    namespace: Option<String>,
    tweak_list_options: Option<TweakListOptions>,
    default_resync: Duration,
    custom_resync: HashMap<TypeId, Duration>,
    transforms: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    informers: Mutex<HashMap<TypeId, Entry>>,
    started: Mutex<HashSet<TypeId>>,
    shutdown: CancellationToken,
    tasks: TaskTracker,
}
// ANCHOR_END: struct

/// Builds a [`SharedInformerFactory`]; mirrors the `SharedInformerOption`s.
#[must_use]
pub struct SharedInformerFactoryBuilder<S> {
    factory: SharedInformerFactory<S>,
}

impl<S: ListerWatcherSource> SharedInformerFactoryBuilder<S> {
    /// Mirrors `WithNamespace`: namespaced informers see only this namespace.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.factory.namespace = Some(namespace.into());
        self
    }

    /// Mirrors `WithTweakListOptions`.
    pub fn tweak_list_options(
        mut self,
        tweak: impl Fn(&mut ListOptions) + Send + Sync + 'static,
    ) -> Self {
        self.factory.tweak_list_options = Some(Arc::new(tweak));
        self
    }

    /// Mirrors `WithCustomResyncConfig`: a resync period for informers of type `K`.
    pub fn custom_resync<K: FactoryResource>(mut self, period: Duration) -> Self {
        self.factory.custom_resync.insert(TypeId::of::<K>(), period);
        self
    }

    /// Mirrors `WithTransform`, per type: rewrites objects of type `K` before they
    /// are cached.
    pub fn transform<K: FactoryResource>(
        mut self,
        transform: TransformFunc<K>,
    ) -> Self {
        self.factory
            .transforms
            .insert(TypeId::of::<K>(), Box::new(transform));
        self
    }

    /// The factory.
    pub fn build(self) -> SharedInformerFactory<S> {
        self.factory
    }
}

impl<S: ListerWatcherSource> SharedInformerFactory<S> {
    /// Mirrors `NewSharedInformerFactory`: every informer resyncs every
    /// `default_resync` (zero for never) and sees all namespaces.
    pub fn new(source: S, default_resync: Duration) -> Self {
        Self::builder(source, default_resync).build()
    }

    /// Mirrors `NewSharedInformerFactoryWithOptions`.
    pub fn builder(
        source: S,
        default_resync: Duration,
    ) -> SharedInformerFactoryBuilder<S> {
        SharedInformerFactoryBuilder {
            factory: SharedInformerFactory {
                source,
                namespace: None,
                tweak_list_options: None,
                default_resync,
                custom_resync: HashMap::new(),
                transforms: HashMap::new(),
                informers: Mutex::new(HashMap::new()),
                started: Mutex::new(HashSet::new()),
                shutdown: CancellationToken::new(),
                tasks: TaskTracker::new(),
            },
        }
    }

    // ANCHOR: informer_for
    /// Mirrors `InformerFor`: the one informer of type `K`, created on first use
    /// with the `"namespace"` index, the type's resync period and transform.
    pub fn informer_for<K: FactoryResource>(&self) -> FactoryInformer<S, K> {
        let mut informers = self.informers.lock();
        if let Some(entry) = informers.get(&TypeId::of::<K>())
            && let Some(informer) = entry
                .informer
                .as_any()
                .downcast_ref::<FactoryInformer<S, K>>()
        {
            return informer.clone();
        }
        let resync = self
            .custom_resync
            .get(&TypeId::of::<K>())
            .copied()
            .unwrap_or(self.default_resync);
        let lister_watcher = TweakedListerWatcher {
            inner: self.source.lister_watcher::<K>(self.namespace.as_deref()),
            tweak: self.tweak_list_options.clone(),
        };
        let informer = SharedIndexInformer::new(
            lister_watcher,
            resync,
            stage1_store::namespace_indexers(),
        );
        if let Some(transform) = self
            .transforms
            .get(&TypeId::of::<K>())
            .and_then(|t| t.downcast_ref::<TransformFunc<K>>())
        {
            // A new informer has not started, so this cannot fail.
            let _ = informer.set_transform(Arc::clone(transform));
        }
        informers.insert(
            TypeId::of::<K>(),
            Entry {
                type_name: std::any::type_name::<K>(),
                informer: Box::new(informer.clone()),
            },
        );
        informer
    }
    // ANCHOR_END: informer_for

    // ANCHOR: lifecycle
    /// Mirrors `Start`: runs every informer that is not running yet, on the current
    /// tokio runtime. Call it again after asking for more informers.
    pub fn start(&self) {
        let informers = self.informers.lock();
        let mut started = self.started.lock();
        for (type_id, entry) in informers.iter() {
            if started.insert(*type_id) {
                self.tasks
                    .spawn(entry.informer.run(self.shutdown.child_token()));
            }
        }
    }

    /// Mirrors `WaitForCacheSync`: waits until every started informer has synced, or
    /// until `stop` is cancelled, and says for each (by type name) whether it
    /// synced.
    pub async fn wait_for_cache_sync(
        &self,
        stop: &CancellationToken,
    ) -> BTreeMap<&'static str, bool> {
        loop {
            let status = self.sync_status();
            if status.values().all(|synced| *synced) {
                return status;
            }
            tokio::select! {
                _ = stop.cancelled() => return self.sync_status(),
                _ = self.shutdown.cancelled() => return self.sync_status(),
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
    }

    fn sync_status(&self) -> BTreeMap<&'static str, bool> {
        let informers = self.informers.lock();
        let started = self.started.lock();
        informers
            .iter()
            .filter(|(type_id, _)| started.contains(*type_id))
            .map(|(_, entry)| (entry.type_name, entry.informer.has_synced()))
            .collect()
    }

    /// Mirrors `Shutdown`: stops every informer and waits until all their tasks have
    /// ended. Informers cannot be started again afterwards.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        self.tasks.close();
        self.tasks.wait().await;
    }
    // ANCHOR_END: lifecycle

    // ANCHOR: typed
    /// A typed informer and lister for `K` (the generated
    /// `factory.Group().Version().Kind()`).
    pub fn for_resource<K: FactoryResource>(&self) -> TypedInformer<S, K> {
        TypedInformer {
            informer: self.informer_for::<K>(),
        }
    }

    /// Mirrors `factory.Core().V1().Pods()`.
    pub fn pods(&self) -> TypedInformer<S, Pod> {
        self.for_resource()
    }
    // ANCHOR_END: typed

    /// A live page of every informer asked for so far, each under its type's
    /// name (`Pod`, `ReplicaSet`, ...), in name order.
    pub fn page(&self) -> crate::debug_ui::InformerPage {
        let informers = self.informers.lock();
        let mut entries: Vec<&Entry> = informers.values().collect();
        entries.sort_by_key(|e| e.type_name);
        entries.into_iter().fold(
            crate::debug_ui::InformerPage::new(),
            |page, entry| {
                let name = entry
                    .type_name
                    .rsplit("::")
                    .next()
                    .unwrap_or(entry.type_name);
                page.with(name, entry.informer.inspect())
            },
        )
    }

    /// Mirrors `factory.Core().V1().ConfigMaps()`.
    pub fn config_maps(&self) -> TypedInformer<S, ConfigMap> {
        self.for_resource()
    }

    /// Mirrors `factory.Core().V1().Nodes()`.
    pub fn nodes(&self) -> TypedInformer<S, Node> {
        self.for_resource()
    }

    /// Mirrors `factory.Apps().V1().Deployments()`.
    pub fn deployments(&self) -> TypedInformer<S, Deployment> {
        self.for_resource()
    }
}

// ANCHOR: typed_informer
/// Mirrors a generated typed informer such as `PodInformer`: `Informer()` and
/// `Lister()`.
pub struct TypedInformer<S: ListerWatcherSource, K: FactoryResource> {
    informer: FactoryInformer<S, K>,
}

impl<S: ListerWatcherSource, K: FactoryResource> TypedInformer<S, K> {
    /// The shared informer.
    pub fn informer(&self) -> FactoryInformer<S, K> {
        self.informer.clone()
    }

    /// A lister over the informer's cache.
    pub fn lister(&self) -> Lister<K> {
        Lister::new(self.informer.get_indexer())
    }
}
// ANCHOR_END: typed_informer
