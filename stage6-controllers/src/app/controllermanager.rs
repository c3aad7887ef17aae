//! The controller manager: mirrors `cmd/kube-controller-manager/app/controllermanager.go`
//! (`Run`, `CreateControllerContext`, `NewControllerDescriptors`,
//! `StartControllers`) with the start functions of `apps.go`
//! (`newReplicaSetControllerDescriptor`, `newDeploymentControllerDescriptor`)
//! and `core.go` (`newGarbageCollectorControllerDescriptor`).
//!
//! One shared informer factory feeds every controller: each one registers its
//! handlers (asking the factory for the informers it needs), then the factory
//! starts them all, and each controller's workers start once the caches have
//! synced. The workqueues report to `/metrics`, as kube-controller-manager's do.
//!
//! ```text
//!                     ┌── ReplicaSet controller ──(5 workers)──┐
//!  SharedInformerFactory ── Deployment controller ──(5 workers)──┼──► API server
//!  (Deployments, ReplicaSets, └── garbage collector ──(20 workers)──┘
//!   Pods, ConfigMaps, Secrets)
//! ```
//!
//! Where it differs: upstream elects a leader through a Lease before it starts
//! anything, serves `/metrics` and `/healthz` over HTTPS with delegated
//! authentication, and runs some forty controllers; here one process runs the
//! three a Deployment needs, and serves its metrics over plain HTTP.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::Router;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::registry::Registry;
use rand::RngExt as _;
use stage4_shared_informer::{KubeSource, SharedInformerFactory};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::options::{
    ControllerManagerOptions, DEPLOYMENT_CONTROLLER, GARBAGE_COLLECTOR_CONTROLLER,
    REPLICASET_CONTROLLER,
};
use crate::controller::{Controller, Reconcile, SyncError};
use crate::deployment::deployment_controller::DeploymentController;
use crate::garbagecollector::GarbageCollector;
use crate::replicaset::replica_set::ReplicaSetController;
use crate::workqueue::{PrometheusMetricsProvider, set_provider};

/// The running controllers of one manager.
pub struct ControllerManager {
    factory: Arc<SharedInformerFactory<KubeSource>>,
    shutdown: CancellationToken,
    tasks: TaskTracker,
    started: Vec<&'static str>,
    /// The ReplicaSet controller, when it runs.
    pub replica_sets: Option<Arc<ReplicaSetController>>,
    /// The Deployment controller, when it runs.
    pub deployments: Option<Arc<DeploymentController>>,
    /// The garbage collector, when it runs.
    pub garbage_collector: Option<Arc<GarbageCollector>>,
}

impl std::fmt::Debug for ControllerManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerManager")
            .field("started", &self.started)
            .finish_non_exhaustive()
    }
}

/// The process's workqueue metrics: registered once, as client-go's global
/// provider is set once (`workqueue.SetProvider` in component-base's
/// `metrics/prometheus/workqueue` `init`).
pub fn workqueue_metrics() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut registry = Registry::default();
        set_provider(Arc::new(PrometheusMetricsProvider::register(&mut registry)));
        registry
    })
}

/// Mirrors `ResyncPeriod`: a random period between the minimum and twice it,
/// so that the informers of many controllers do not resync together.
fn resync_period(min: Duration) -> Duration {
    if min.is_zero() {
        return Duration::ZERO;
    }
    min.mul_f64(rand::rng().random_range(1.0..2.0))
}

impl ControllerManager {
    // ANCHOR: start
    /// Mirrors `Run` from `CreateControllerContext` to `StartControllers` and
    /// the factory's `Start`: builds every enabled controller over one informer
    /// factory, starts the informers, and runs each controller's workers once
    /// the caches have synced.
    pub async fn start(
        client: kube::Client,
        options: &ControllerManagerOptions,
    ) -> Result<Self, SyncError> {
        options.validate()?;
        workqueue_metrics();
        let factory = Arc::new(SharedInformerFactory::new(
            KubeSource::new(client.clone()),
            resync_period(options.min_resync_period),
        ));
        let mut manager = Self {
            factory,
            shutdown: CancellationToken::new(),
            tasks: TaskTracker::new(),
            started: Vec::new(),
            replica_sets: None,
            deployments: None,
            garbage_collector: None,
        };
        if options.is_enabled(REPLICASET_CONTROLLER) {
            let (controller, runner) =
                ReplicaSetController::new(client.clone(), &manager.factory)?;
            manager.replica_sets = Some(controller);
            manager.run(
                REPLICASET_CONTROLLER,
                runner,
                options.concurrent_replicaset_syncs,
            );
        }
        if options.is_enabled(DEPLOYMENT_CONTROLLER) {
            let (controller, runner) =
                DeploymentController::new(client.clone(), &manager.factory)?;
            manager.deployments = Some(controller);
            manager.run(
                DEPLOYMENT_CONTROLLER,
                runner,
                options.concurrent_deployment_syncs,
            );
        }
        if options.is_enabled(GARBAGE_COLLECTOR_CONTROLLER) {
            let (gc, workers) =
                GarbageCollector::new(client.clone(), &manager.factory)?;
            manager.garbage_collector = Some(gc);
            manager.run(
                GARBAGE_COLLECTOR_CONTROLLER,
                workers.attempt_to_delete,
                options.concurrent_gc_syncs,
            );
            manager.run(GARBAGE_COLLECTOR_CONTROLLER, workers.attempt_to_orphan, 1);
        }
        manager.factory.start();
        Ok(manager)
    }
    // ANCHOR_END: start

    // ANCHOR: run_controller
    /// Runs `controller`'s `workers` once the factory's caches have synced.
    fn run<R: Reconcile>(
        &mut self,
        name: &'static str,
        controller: Arc<Controller<R>>,
        workers: usize,
    ) {
        if !self.started.contains(&name) {
            self.started.push(name);
        }
        let factory = Arc::clone(&self.factory);
        let shutdown = self.shutdown.clone();
        let synced = {
            let shutdown = shutdown.clone();
            async move {
                let status = factory.wait_for_cache_sync(&shutdown).await;
                status.values().all(|synced| *synced)
            }
        };
        self.tasks.spawn(controller.run(workers, synced, shutdown));
    }
    // ANCHOR_END: run_controller

    /// The controllers started, by name.
    pub fn started(&self) -> &[&'static str] {
        &self.started
    }

    /// Whether every informer has synced (`/healthz` says ok only then).
    pub async fn has_synced(&self) -> bool {
        let token = CancellationToken::new();
        token.cancel();
        self.factory
            .wait_for_cache_sync(&token)
            .await
            .values()
            .all(|synced| *synced)
    }

    /// `/metrics` (the workqueues' series) and `/healthz`.
    pub fn router() -> Router {
        Router::new()
            .route(
                "/metrics",
                get(|| async {
                    let mut text = String::new();
                    match prometheus_client::encoding::text::encode(
                        &mut text,
                        workqueue_metrics(),
                    ) {
                        Ok(()) => (
                            [(
                                CONTENT_TYPE,
                                "text/plain; version=0.0.4; charset=utf-8",
                            )],
                            text,
                        )
                            .into_response(),
                        Err(error) => (
                            [(CONTENT_TYPE, "text/plain; charset=utf-8")],
                            format!("cannot encode the metrics: {error}"),
                        )
                            .into_response(),
                    }
                }),
            )
            .route("/healthz", get(|| async { "ok" }))
    }

    /// The live page of the manager's informers (`/debug/ui`, stage 4's
    /// `InformerPage`), to merge into [`router`](Self::router); its streams end
    /// at `shutdown`.
    pub fn page_router(&self, shutdown: CancellationToken) -> Router {
        self.factory.page().router(shutdown)
    }

    /// Stops every controller (each drains its queue) and then the informers.
    pub async fn shutdown(self) {
        self.shutdown.cancel();
        self.tasks.close();
        self.tasks.wait().await;
        self.factory.shutdown().await;
    }
}
