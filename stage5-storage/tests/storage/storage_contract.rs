//! apiserver's storage contract suite (`stage5_storage::testing::contract`, a port
//! of `k8s.io/apiserver/pkg/storage/testing`) on the etcd3 store, as upstream's
//! `pkg/storage/etcd3/store_test.go` and `watcher_test.go` run it: over the
//! embedded KV and, with feature `etcd`, over a real etcd started per scenario.
//!
//! Every scenario gets a fresh store (upstream's `testSetup`) whose KV has etcd's
//! default progress-notify interval (10 minutes), except the progress-notify
//! scenario, which needs notifications every 200 ms. The tests run on a
//! multi-threaded runtime: `RunTestGuaranteedUpdateWithConflict` blocks inside
//! update functions, as the Go test does.

use std::sync::Arc;
use std::time::Duration;

use stage5_storage::etcd3::Etcd3Store;
use stage5_storage::kv::{EmbeddedKv, EmbeddedKvOptions, Kv};
use stage5_storage::testing::contract as c;
use stage5_storage::{ResourceInfo, testing::ETCD_DEFAULT_PROGRESS_NOTIFY_INTERVAL};

/// The store under test and what its hooks need.
pub(crate) struct Backend {
    kv: Arc<dyn Kv>,
    store: Arc<Etcd3Store>,
    /// Keeps a real etcd running for the scenario.
    #[cfg(feature = "etcd")]
    _server: Option<stage5_storage::testing::EtcdServer>,
}

impl Backend {
    fn new(kv: Arc<dyn Kv>, info: ResourceInfo) -> Self {
        Backend {
            store: Arc::new(Etcd3Store::new(Arc::clone(&kv), info)),
            kv,
            #[cfg(feature = "etcd")]
            _server: None,
        }
    }

    fn compaction(&self) -> c::Compaction {
        c::compact_storage(Arc::clone(&self.kv))
    }

    fn increase_rv(&self) -> c::IncreaseRv {
        c::increase_rv(Arc::clone(&self.kv))
    }

    fn validation(&self) -> c::KeyValidation {
        c::check_storage_invariants(Arc::clone(&self.kv))
    }
}

fn embedded(info: ResourceInfo, progress_notify_interval: Duration) -> Backend {
    let options = EmbeddedKvOptions::default()
        .with_progress_notify_interval(progress_notify_interval);
    Backend::new(Arc::new(EmbeddedKv::with_options(options)), info)
}

// ---------------------------------------------------------------- scenarios

async fn run_test_create(b: Backend) {
    c::run_test_create(&b.store, &b.validation()).await;
}

async fn run_test_create_with_key_exist(b: Backend) {
    c::run_test_create_with_key_exist(&b.store).await;
}

async fn run_test_get(b: Backend) {
    c::run_test_get(&b.store).await;
}

async fn run_test_unconditional_delete(b: Backend) {
    c::run_test_unconditional_delete(&b.store).await;
}

async fn run_test_conditional_delete(b: Backend) {
    c::run_test_conditional_delete(&b.store).await;
}

async fn run_test_delete_with_suggestion(b: Backend) {
    c::run_test_delete_with_suggestion(&b.store).await;
}

async fn run_test_delete_with_suggestion_and_conflict(b: Backend) {
    c::run_test_delete_with_suggestion_and_conflict(&b.store).await;
}

async fn run_test_delete_with_suggestion_of_deleted_object(b: Backend) {
    c::run_test_delete_with_suggestion_of_deleted_object(&b.store).await;
}

async fn run_test_preconditional_delete_with_suggestion(b: Backend) {
    c::run_test_preconditional_delete_with_suggestion(&b.store).await;
}

async fn run_test_preconditional_delete_with_only_suggestion_pass(b: Backend) {
    c::run_test_preconditional_delete_with_only_suggestion_pass(&b.store).await;
}

async fn run_test_list(b: Backend) {
    c::run_test_list(&b.store, &b.compaction(), false).await;
}

async fn run_test_consistent_list(b: Backend) {
    c::run_test_consistent_list(&b.store, &b.increase_rv(), false, true, false)
        .await;
}

async fn run_test_get_list_non_recursive(b: Backend) {
    c::run_test_get_list_non_recursive(&b.store, &b.increase_rv()).await;
}

async fn run_test_get_list_recursive_prefix(b: Backend) {
    c::run_test_get_list_recursive_prefix(&b.store).await;
}

async fn run_test_list_continuation(b: Backend) {
    c::run_test_list_continuation(&b.store).await;
}

async fn run_test_list_pagination_rare_object(b: Backend) {
    c::run_test_list_pagination_rare_object(&b.store).await;
}

async fn run_test_list_continuation_with_filter(b: Backend) {
    c::run_test_list_continuation_with_filter(&b.store).await;
}

async fn run_test_list_inconsistent_continuation(b: Backend) {
    c::run_test_list_inconsistent_continuation(&b.store, Some(&b.compaction()))
        .await;
}

async fn run_test_guaranteed_update(b: Backend) {
    c::run_test_guaranteed_update(&b.store, &b.validation()).await;
}

async fn run_test_guaranteed_update_with_conflict(b: Backend) {
    c::run_test_guaranteed_update_with_conflict(&b.store).await;
}

async fn run_test_guaranteed_update_with_suggestion_and_conflict(b: Backend) {
    c::run_test_guaranteed_update_with_suggestion_and_conflict(&b.store).await;
}

async fn run_test_list_paging(b: Backend) {
    c::run_test_list_paging(&b.store).await;
}

async fn run_test_namespace_scoped_list(b: Backend) {
    c::run_test_namespace_scoped_list(&b.store).await;
}

async fn run_test_count(b: Backend) {
    c::run_test_count(&b.store).await;
}

async fn run_test_watch(b: Backend) {
    c::run_test_watch(&b.store).await;
}

async fn run_test_watch_from_zero(b: Backend) {
    c::run_test_watch_from_zero(&b.store, Some(&b.compaction())).await;
}

async fn run_test_delete_trigger_watch(b: Backend) {
    c::run_test_delete_trigger_watch(&b.store).await;
}

async fn run_test_watch_from_non_zero(b: Backend) {
    c::run_test_watch_from_non_zero(&b.store).await;
}

async fn run_test_delayed_watch_delivery(b: Backend) {
    c::run_test_delayed_watch_delivery(&b.store).await;
}

async fn run_test_watcher_timeout(b: Backend) {
    c::run_test_watcher_timeout(&b.store).await;
}

async fn run_test_watch_delete_event_object_have_latest_rv(b: Backend) {
    c::run_test_watch_delete_event_object_have_latest_rv(&b.store).await;
}

async fn run_test_namespace_scoped_watch(b: Backend) {
    c::run_test_namespace_scoped_watch(&b.store).await;
}

/// etcd ignores `allowWatchBookmarks`: no bookmark is expected.
async fn run_test_watch_dispatch_bookmark_events(b: Backend) {
    c::run_test_watch_dispatch_bookmark_events(&b.store, false).await;
}

async fn run_send_initial_events_backward_compatibility(b: Backend) {
    c::run_send_initial_events_backward_compatibility(&b.store).await;
}

async fn run_watch_semantics(b: Backend) {
    c::run_watch_semantics(&b.store).await;
}

async fn run_watch_semantic_initial_events_extended(b: Backend) {
    c::run_watch_semantic_initial_events_extended(&b.store).await;
}

async fn run_watch_list_match_single(b: Backend) {
    c::run_watch_list_match_single(&b.store).await;
}

mod embedded {
    use super::*;

    macro_rules! embedded_tests {
        ($($name:ident),* $(,)?) => {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(embedded(
                        ResourceInfo::PODS,
                        ETCD_DEFAULT_PROGRESS_NOTIFY_INTERVAL,
                    ))
                    .await;
                }
            )*
        };
    }

    stage5_storage::for_each_contract_scenario!(embedded_tests);

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn run_test_cluster_scoped_watch() {
        let b = embedded(
            c::CLUSTER_SCOPED_PODS,
            ETCD_DEFAULT_PROGRESS_NOTIFY_INTERVAL,
        );
        c::run_test_cluster_scoped_watch(&b.store).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn run_optional_test_progress_notify() {
        let b = embedded(ResourceInfo::PODS, Duration::from_millis(200));
        c::run_optional_test_progress_notify(&b.store, &b.increase_rv()).await;
    }
}

#[cfg(feature = "etcd")]
mod real_etcd {
    use super::*;
    use stage5_storage::kv::EtcdKv;
    use stage5_storage::testing::{EtcdServer, TEST_PROGRESS_NOTIFY_INTERVAL};

    /// A fresh etcd for one scenario, or `None` when the test is skipped.
    async fn real_etcd(
        test: &str,
        info: ResourceInfo,
        progress_notify_interval: Duration,
    ) -> Option<Backend> {
        let server = EtcdServer::start_or_skip_with(test, progress_notify_interval)?;
        let kv: Arc<dyn Kv> = Arc::new(
            EtcdKv::connect([server.client_url()])
                .await
                .expect("connect to the test etcd"),
        );
        Some(Backend {
            _server: Some(server),
            ..Backend::new(kv, info)
        })
    }

    macro_rules! etcd_tests {
        ($($name:ident),* $(,)?) => {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let test = concat!("storage_contract::real_etcd::", stringify!($name));
                    let Some(b) = real_etcd(
                        test,
                        ResourceInfo::PODS,
                        ETCD_DEFAULT_PROGRESS_NOTIFY_INTERVAL,
                    )
                    .await
                    else {
                        return;
                    };
                    super::$name(b).await;
                }
            )*
        };
    }

    stage5_storage::for_each_contract_scenario!(etcd_tests);

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn run_test_cluster_scoped_watch() {
        let test = "storage_contract::real_etcd::run_test_cluster_scoped_watch";
        let Some(b) = real_etcd(
            test,
            c::CLUSTER_SCOPED_PODS,
            ETCD_DEFAULT_PROGRESS_NOTIFY_INTERVAL,
        )
        .await
        else {
            return;
        };
        c::run_test_cluster_scoped_watch(&b.store).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn run_optional_test_progress_notify() {
        let test = "storage_contract::real_etcd::run_optional_test_progress_notify";
        let Some(b) =
            real_etcd(test, ResourceInfo::PODS, TEST_PROGRESS_NOTIFY_INTERVAL).await
        else {
            return;
        };
        c::run_optional_test_progress_notify(&b.store, &b.increase_rv()).await;
    }
}
