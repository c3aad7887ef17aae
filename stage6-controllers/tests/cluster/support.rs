//! A cluster for one test: the API server, a client, and the controller
//! manager with the controllers the test names; and a bounded wait that
//! follows a watch instead of sleeping.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::Duration;

use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use kube::{Client, Resource, ResourceExt as _};
use serde::de::DeserializeOwned;
use stage5_apiserver::{RunningServer, Server, ServerConfig};
use stage6_controllers::app::controllermanager::ControllerManager;
use stage6_controllers::app::options::ControllerManagerOptions;

/// The longest a test waits for the controllers to get somewhere. Each test
/// takes a second or two; the bound is short enough that a test whose
/// controller is stubbed (an exercise not yet written) fails well within
/// `cargo xtask exercise verify`'s 60 s limit for one test, instead of
/// running into it.
pub const WAIT: Duration = Duration::from_secs(25);

/// An API server and a controller manager over it.
pub struct Cluster {
    pub server: RunningServer,
    pub client: Client,
    pub manager: ControllerManager,
}

impl Cluster {
    /// Starts the server on a free loopback port and the `controllers`.
    pub async fn start(controllers: &[&str]) -> Self {
        let server = Server::start(ServerConfig::for_tests())
            .await
            .expect("server starts");
        let url: axum::http::Uri = server.url().parse().expect("url");
        let client = Client::try_from(kube::Config::new(url)).expect("client");
        let manager = ControllerManager::start(
            client.clone(),
            &ControllerManagerOptions::only(controllers),
        )
        .await
        .expect("controllers start");
        Self {
            server,
            client,
            manager,
        }
    }

    /// The namespaced API of `K` in `default`.
    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as Resource>::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), "default")
    }

    /// Stops the controllers, then the server. Panics after [`WAIT`] if the
    /// controllers do not stop: each drains its queue, and a key whose sync
    /// panicked (a stubbed exercise, say) is never done.
    pub async fn stop(self) {
        tokio::time::timeout(WAIT, self.manager.shutdown())
            .await
            .expect("the controllers stop, each queue drained");
        self.server.shutdown().await;
    }
}

/// Follows `api`'s objects (a list, then a watch from its resourceVersion)
/// until `done` holds for them, and returns them by name. Panics after
/// [`WAIT`], saying what it waited for and what it saw last.
pub async fn wait_until<K>(
    api: &Api<K>,
    what: &str,
    done: impl Fn(&BTreeMap<String, K>) -> bool,
) -> BTreeMap<String, K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    let mut objects = BTreeMap::new();
    let outcome = tokio::time::timeout(WAIT, async {
        loop {
            let list = api.list(&ListParams::default()).await.expect("list");
            objects = list
                .items
                .into_iter()
                .map(|object| (object.name_any(), object))
                .collect();
            if done(&objects) {
                return;
            }
            let version = list.metadata.resource_version.unwrap_or_default();
            let mut events = api
                .watch(&WatchParams::default().timeout(290), &version)
                .await
                .expect("watch")
                .boxed();
            while let Some(event) = events.try_next().await.expect("watch event") {
                match event {
                    WatchEvent::Added(object) | WatchEvent::Modified(object) => {
                        objects.insert(object.name_any(), object);
                    }
                    WatchEvent::Deleted(object) => {
                        objects.remove(&object.name_any());
                    }
                    WatchEvent::Bookmark(_) => {}
                    // Too old: list again.
                    WatchEvent::Error(_) => break,
                }
                if done(&objects) {
                    return;
                }
            }
        }
    })
    .await;
    if outcome.is_err() {
        panic!(
            "timed out after {WAIT:?} waiting for {what}; last seen: {:#?}",
            objects.keys().collect::<Vec<_>>()
        );
    }
    objects
}

/// A ReplicaSet of `replicas` pods labelled `app: <name>`.
pub fn replica_set(name: &str, replicas: i32) -> ReplicaSet {
    let labels: BTreeMap<String, String> =
        [("app".to_string(), name.to_string())].into();
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..ObjectMeta::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "web".to_string(),
                        image: Some("nginx:1.27".to_string()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            }),
            ..ReplicaSetSpec::default()
        },
        ..ReplicaSet::default()
    }
}
