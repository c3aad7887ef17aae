//! apiserver's storage contract suite (`stage5_storage::testing::contract`, a port
//! of `k8s.io/apiserver/pkg/storage/testing`) on the Cacher, as upstream's
//! `pkg/storage/cacher/cacher_test.go` runs it: a fresh Cacher per scenario, over
//! the embedded KV and, with feature `etcd`, over a real etcd started per scenario.
//! Writes pass through the Cacher to etcd; reads and watches come from its cache.
//!
//! The hooks are the Cacher's: compaction also forgets the watch cache's events
//! (upstream's `compactStorage`), and the watch-list scenarios run on a wrapper
//! whose `create` waits until the cache has the object (upstream's
//! `createWrapper`). Plus one Cacher-only scenario,
//! [`run_wait_until_watch_cache_fresh_and_force_all_events`].

use std::sync::Arc;

use apimachinery::apis::meta::v1::{ListOptions, WatchOptions};
use apimachinery::watch::WatchEvent;
use futures::FutureExt;
use futures::future::BoxFuture;
use stage5_cacher::{Cacher, CacherConfig};
use stage5_storage::Watch;
use stage5_storage::etcd3::Etcd3Store;
use stage5_storage::kv::{EmbeddedKv, Kv};
use stage5_storage::testing::contract as c;
use stage5_storage::{
    GetOptions, KeyScope, ListResult, Object, Preconditions, ResourceInfo,
    SelectionPredicate, Storage, StorageError, UpdateFn,
};

/// The Cacher under test and what its hooks need.
pub(crate) struct Backend {
    kv: Arc<dyn Kv>,
    cacher: Arc<Cacher>,
    /// Keeps a real etcd running for the scenario.
    #[cfg(feature = "etcd")]
    _server: Option<stage5_storage::testing::EtcdServer>,
}

impl Backend {
    async fn new(kv: Arc<dyn Kv>, info: ResourceInfo) -> Self {
        let store = Etcd3Store::new(Arc::clone(&kv), info);
        let cacher = Cacher::new(store, CacherConfig::default());
        assert!(
            cacher.wait_ready(c::WAIT).await,
            "the cacher lists and becomes ready"
        );
        Backend {
            kv,
            cacher,
            #[cfg(feature = "etcd")]
            _server: None,
        }
    }

    /// Mirrors the Cacher tests' `compactStorage`: once the cache has caught up,
    /// forget its events up to `rv` (no watcher may be open), then compact etcd.
    fn compaction(&self) -> c::Compaction {
        let cacher = Arc::clone(&self.cacher);
        let compact_etcd = c::compact_storage(Arc::clone(&self.kv));
        Arc::new(move |rv: u64| {
            let cacher = Arc::clone(&cacher);
            let compact_etcd = Arc::clone(&compact_etcd);
            Box::pin(async move {
                cacher
                    .watch_cache()
                    .wait_until_fresh(rv)
                    .await
                    .unwrap_or_else(|e| {
                        panic!("the watch cache did not reach {rv}: {e}")
                    });
                assert_eq!(
                    cacher.stats().watchers,
                    0,
                    "Open watchers are not supported during compaction"
                );
                cacher.watch_cache().compact(rv);
                compact_etcd(rv).await;
            })
        })
    }

    fn increase_rv(&self) -> c::IncreaseRv {
        c::increase_rv(Arc::clone(&self.kv))
    }

    /// Upstream's `testSetupWithEtcdAndCreateWrapper`.
    fn create_wrapper(&self) -> Arc<CreateWrapper> {
        Arc::new(CreateWrapper {
            cacher: Arc::clone(&self.cacher),
        })
    }
}

async fn embedded(info: ResourceInfo) -> Backend {
    // etcd's default progress-notify interval: no periodic notifications.
    Backend::new(Arc::new(EmbeddedKv::new()), info).await
}

/// Mirrors `createWrapper`: a Cacher whose `create` returns once the cache has the
/// new object, so that a watch started next sees it.
pub(crate) struct CreateWrapper {
    cacher: Arc<Cacher>,
}

impl Storage for CreateWrapper {
    fn info(&self) -> &ResourceInfo {
        self.cacher.info()
    }

    fn create(
        &self,
        key: String,
        obj: Object,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        async move {
            let out = self.cacher.create(key, obj).await?;
            let rv = c::rv_of(&out);
            self.cacher.watch_cache().wait_until_fresh(rv).await?;
            Ok(out)
        }
        .boxed()
    }

    fn get_with(
        &self,
        key: String,
        options: GetOptions,
    ) -> BoxFuture<'_, Result<Option<Arc<Object>>, StorageError>> {
        self.cacher.get_with(key, options)
    }

    fn get_list_scoped(
        &self,
        key: String,
        scope: KeyScope,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<ListResult, StorageError>> {
        self.cacher.get_list_scoped(key, scope, options, predicate)
    }

    fn guaranteed_update_with(
        &self,
        key: String,
        ignore_not_found: bool,
        preconditions: Preconditions,
        update: UpdateFn,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        self.cacher.guaranteed_update_with(
            key,
            ignore_not_found,
            preconditions,
            update,
        )
    }

    fn delete(
        &self,
        key: String,
        preconditions: Preconditions,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        self.cacher.delete(key, preconditions)
    }

    fn watch_scoped(
        &self,
        key: String,
        scope: KeyScope,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<Watch<Object>, StorageError>> {
        self.cacher.watch_scoped(key, scope, options, predicate)
    }

    fn count(&self, key: String) -> BoxFuture<'_, Result<i64, StorageError>> {
        self.cacher.count(key)
    }

    fn get_current_resource_version(
        &self,
    ) -> BoxFuture<'_, Result<u64, StorageError>> {
        self.cacher.get_current_resource_version()
    }
}

// ---------------------------------------------------------------- scenarios

async fn run_test_create(b: Backend) {
    c::run_test_create(&b.cacher, &c::no_key_validation()).await;
}

async fn run_test_create_with_key_exist(b: Backend) {
    c::run_test_create_with_key_exist(&b.cacher).await;
}

async fn run_test_get(b: Backend) {
    c::run_test_get(&b.cacher).await;
}

async fn run_test_unconditional_delete(b: Backend) {
    c::run_test_unconditional_delete(&b.cacher).await;
}

async fn run_test_conditional_delete(b: Backend) {
    c::run_test_conditional_delete(&b.cacher).await;
}

async fn run_test_delete_with_suggestion(b: Backend) {
    c::run_test_delete_with_suggestion(&b.cacher).await;
}

async fn run_test_delete_with_suggestion_and_conflict(b: Backend) {
    c::run_test_delete_with_suggestion_and_conflict(&b.cacher).await;
}

async fn run_test_delete_with_suggestion_of_deleted_object(b: Backend) {
    c::run_test_delete_with_suggestion_of_deleted_object(&b.cacher).await;
}

async fn run_test_preconditional_delete_with_suggestion(b: Backend) {
    c::run_test_preconditional_delete_with_suggestion(&b.cacher).await;
}

async fn run_test_preconditional_delete_with_only_suggestion_pass(b: Backend) {
    c::run_test_preconditional_delete_with_only_suggestion_pass(&b.cacher).await;
}

async fn run_test_list(b: Backend) {
    c::run_test_list(&b.cacher, &b.compaction(), true).await;
}

/// The Cacher serves consistent reads from its cache (`ConsistentListFromCache`)
/// when the KV's progress notifications can be trusted, as upstream's test asks
/// `etcdfeature.DefaultFeatureSupportChecker`; never continuations (no
/// `ListFromCacheSnapshot`).
async fn run_test_consistent_list(b: Backend) {
    let consistent_reads_supported = b.kv.supports_request_watch_progress().await;
    c::run_test_consistent_list(
        &b.cacher,
        &b.increase_rv(),
        true,
        consistent_reads_supported,
        false,
    )
    .await;
}

async fn run_test_get_list_non_recursive(b: Backend) {
    c::run_test_get_list_non_recursive(&b.cacher, &b.increase_rv()).await;
}

async fn run_test_get_list_recursive_prefix(b: Backend) {
    c::run_test_get_list_recursive_prefix(&b.cacher).await;
}

async fn run_test_list_continuation(b: Backend) {
    c::run_test_list_continuation(&b.cacher).await;
}

async fn run_test_list_pagination_rare_object(b: Backend) {
    c::run_test_list_pagination_rare_object(&b.cacher).await;
}

async fn run_test_list_continuation_with_filter(b: Backend) {
    c::run_test_list_continuation_with_filter(&b.cacher).await;
}

async fn run_test_list_inconsistent_continuation(b: Backend) {
    // Upstream passes no compaction (TODO #109831): the cache ignores the limit of
    // an RV=0 list (#108003), so the first page would not be one.
    c::run_test_list_inconsistent_continuation(&b.cacher, None).await;
}

async fn run_test_guaranteed_update(b: Backend) {
    c::run_test_guaranteed_update(&b.cacher, &c::no_key_validation()).await;
}

async fn run_test_guaranteed_update_with_conflict(b: Backend) {
    c::run_test_guaranteed_update_with_conflict(&b.cacher).await;
}

async fn run_test_guaranteed_update_with_suggestion_and_conflict(b: Backend) {
    c::run_test_guaranteed_update_with_suggestion_and_conflict(&b.cacher).await;
}

async fn run_test_list_paging(b: Backend) {
    c::run_test_list_paging(&b.cacher).await;
}

async fn run_test_namespace_scoped_list(b: Backend) {
    c::run_test_namespace_scoped_list(&b.cacher).await;
}

async fn run_test_count(b: Backend) {
    c::run_test_count(&b.cacher).await;
}

async fn run_test_watch(b: Backend) {
    c::run_test_watch(&b.cacher).await;
}

async fn run_test_watch_from_zero(b: Backend) {
    c::run_test_watch_from_zero(&b.cacher, Some(&b.compaction())).await;
}

async fn run_test_delete_trigger_watch(b: Backend) {
    c::run_test_delete_trigger_watch(&b.cacher).await;
}

async fn run_test_watch_from_non_zero(b: Backend) {
    c::run_test_watch_from_non_zero(&b.cacher).await;
}

async fn run_test_delayed_watch_delivery(b: Backend) {
    c::run_test_delayed_watch_delivery(&b.cacher).await;
}

async fn run_test_watcher_timeout(b: Backend) {
    c::run_test_watcher_timeout(&b.cacher).await;
}

async fn run_test_watch_delete_event_object_have_latest_rv(b: Backend) {
    c::run_test_watch_delete_event_object_have_latest_rv(&b.cacher).await;
}

async fn run_test_namespace_scoped_watch(b: Backend) {
    c::run_test_namespace_scoped_watch(&b.cacher).await;
}

/// The Cacher sends bookmarks to watchers that allow them.
async fn run_test_watch_dispatch_bookmark_events(b: Backend) {
    c::run_test_watch_dispatch_bookmark_events(&b.cacher, true).await;
}

async fn run_test_optional_watch_bookmarks_with_correct_resource_version(
    b: Backend,
) {
    c::run_test_optional_watch_bookmarks_with_correct_resource_version(&b.cacher)
        .await;
}

async fn run_send_initial_events_backward_compatibility(b: Backend) {
    c::run_send_initial_events_backward_compatibility(&b.cacher).await;
}

async fn run_watch_semantics(b: Backend) {
    c::run_watch_semantics(&b.create_wrapper()).await;
}

async fn run_watch_semantic_initial_events_extended(b: Backend) {
    c::run_watch_semantic_initial_events_extended(&b.create_wrapper()).await;
}

async fn run_watch_list_match_single(b: Backend) {
    c::run_watch_list_match_single(&b.create_wrapper()).await;
}

/// Mirrors the first case, "allowWatchBookmarks=true, sendInitialEvents=true,
/// RV=105", of the Cacher's `RunWaitUntilWatchCacheFreshAndForceAllEventsTest`
/// (`consistent_list_from_cache` tests): a watch-list at a version the cache has
/// not reached gets a 504 `ResourceVersionTooLarge` error event after the 3 s wait;
/// once the version arrives (written while the second watch waits), the watch
/// starts with the object at it. Upstream's fake storage primes the cache at 100;
/// here the cache is at the store's current revision `C`, the watches ask for
/// `C+5`, and four writes to another resource put the pod at exactly `C+5`. (Its
/// check that progress was requested from the storage is not ported: the etcd3
/// store keeps no count.)
async fn run_wait_until_watch_cache_fresh_and_force_all_events(b: Backend) {
    let cacher = &b.cacher;
    let current = cacher
        .get_current_resource_version()
        .await
        .expect("current resource version");
    let target = current + 5;
    let options = WatchOptions {
        resource_version: target.to_string(),
        allow_watch_bookmarks: true,
        send_initial_events: true,
        ..WatchOptions::default()
    };
    let namespace = c::key("/pods/ns");
    let mut w = cacher
        .watch(
            namespace.clone(),
            options.clone(),
            SelectionPredicate::default(),
        )
        .await
        .expect("failed to create watch");
    match c::next_event(&mut w).await {
        WatchEvent::Error(status) => {
            assert_eq!(status.code, Some(504), "{status:?}");
            assert_eq!(status.reason.as_deref(), Some("Timeout"));
            assert_eq!(status.status.as_deref(), Some("Failure"));
            assert_eq!(
                status.message.as_deref(),
                Some(
                    format!(
                        "Timeout: Too large resource version: {target}, current: {current}"
                    )
                    .as_str()
                )
            );
            let details = status.details.expect("details");
            assert_eq!(details.retry_after_seconds, Some(1));
            let causes = details.causes.expect("causes");
            assert_eq!(causes[0].reason.as_deref(), Some("ResourceVersionTooLarge"));
        }
        other => panic!("expected a 504 error event, got {other:?}"),
    }
    drop(w);

    // Meanwhile, bring the store to `target`, the pod being the last write.
    let writer = async {
        let configmaps =
            Etcd3Store::new(Arc::clone(&b.kv), ResourceInfo::CONFIGMAPS);
        for i in 0..4 {
            let cm = Object::new(
                &ResourceInfo::CONFIGMAPS,
                Some("ns"),
                &format!("cm-{i}"),
            );
            configmaps
                .create(format!("/registry/configmaps/ns/cm-{i}"), cm)
                .await
                .expect("create a configmap");
        }
        let pod = c::base_namespaced_pod_assigned("pod1", "ns", "node1")
            .with_labels([("label", "value1")]);
        let out = cacher
            .create(c::compute_pod_key(&**cacher, &pod), pod)
            .await
            .expect("failed adding a pod");
        assert_eq!(c::rv_of(&out), target, "the pod is written at the target");
        out
    };
    let watch = cacher.watch(namespace, options, SelectionPredicate::default());
    let (pod, w) = futures::join!(writer, watch);
    let mut w = w.expect("failed to create watch");
    c::check_result(&mut w, WatchEvent::Added(pod)).await;
}

mod embedded {
    use super::*;

    macro_rules! embedded_tests {
        ($($name:ident),* $(,)?) => {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(embedded(ResourceInfo::PODS).await).await;
                }
            )*
        };
    }

    stage5_storage::for_each_contract_scenario!(
        embedded_tests,
        run_test_optional_watch_bookmarks_with_correct_resource_version,
        run_wait_until_watch_cache_fresh_and_force_all_events,
    );

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn run_test_cluster_scoped_watch() {
        let b = embedded(c::CLUSTER_SCOPED_PODS).await;
        c::run_test_cluster_scoped_watch(&b.cacher).await;
    }
}

#[cfg(feature = "etcd")]
mod real_etcd {
    use super::*;
    use stage5_storage::kv::EtcdKv;
    use stage5_storage::testing::{
        ETCD_DEFAULT_PROGRESS_NOTIFY_INTERVAL, EtcdServer,
    };

    /// A fresh etcd and Cacher for one scenario, or `None` when the test is
    /// skipped.
    async fn real_etcd(test: &str, info: ResourceInfo) -> Option<Backend> {
        let server = EtcdServer::start_or_skip_with(
            test,
            ETCD_DEFAULT_PROGRESS_NOTIFY_INTERVAL,
        )?;
        let kv: Arc<dyn Kv> = Arc::new(
            EtcdKv::connect([server.client_url()])
                .await
                .expect("connect to the test etcd"),
        );
        Some(Backend {
            _server: Some(server),
            ..Backend::new(kv, info).await
        })
    }

    macro_rules! etcd_tests {
        ($($name:ident),* $(,)?) => {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let test = concat!("storage_contract::real_etcd::", stringify!($name));
                    let Some(b) = real_etcd(test, ResourceInfo::PODS).await else {
                        return;
                    };
                    super::$name(b).await;
                }
            )*
        };
    }

    stage5_storage::for_each_contract_scenario!(
        etcd_tests,
        run_test_optional_watch_bookmarks_with_correct_resource_version,
        run_wait_until_watch_cache_fresh_and_force_all_events,
    );

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn run_test_cluster_scoped_watch() {
        let test = "storage_contract::real_etcd::run_test_cluster_scoped_watch";
        let Some(b) = real_etcd(test, c::CLUSTER_SCOPED_PODS).await else {
            return;
        };
        c::run_test_cluster_scoped_watch(&b.cacher).await;
    }
}
