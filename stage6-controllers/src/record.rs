//! Events about the objects a controller acts on: mirrors client-go's
//! [`tools/record`] (`EventRecorder.Event`, `Eventf`), which every controller of
//! kube-controller-manager uses to write core `v1` Events (`kubectl describe`
//! shows them, `kubectl get events` lists them).
//!
//! Recording never blocks the controller: each event is written by a task of
//! its own, and a failed write is logged and dropped, as upstream's broadcaster
//! drops events it cannot send. Upstream also aggregates repeated events
//! (`EventCorrelator`); here every event is written once, with `count: 1`.
//!
//! [`tools/record`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/record/event.go

use k8s_openapi::api::core::v1::{
    Event, EventSource, ObjectReference as CoreObjectReference,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use kube::api::{Api, PostParams};
use rand::RngExt as _;
use tokio_util::task::TaskTracker;

/// `v1.EventTypeNormal`.
pub const NORMAL: &str = "Normal";
/// `v1.EventTypeWarning`.
pub const WARNING: &str = "Warning";

/// The object an event is about (`v1.ObjectReference`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectReference {
    /// `apps/v1`.
    pub api_version: String,
    /// `ReplicaSet`.
    pub kind: String,
    /// The namespace.
    pub namespace: String,
    /// The name.
    pub name: String,
    /// The uid.
    pub uid: String,
    /// The resourceVersion the event saw.
    pub resource_version: String,
}

impl ObjectReference {
    /// The reference of an object of `api_version`/`kind` with `meta`
    /// (`reference.GetReference`).
    pub fn of(api_version: &str, kind: &str, meta: &ObjectMeta) -> Self {
        ObjectReference {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
            uid: meta.uid.clone().unwrap_or_default(),
            resource_version: meta.resource_version.clone().unwrap_or_default(),
        }
    }
}

/// Mirrors `record.EventRecorder` of one component (`replicaset-controller`,
/// `default-scheduler`). Cheap to clone.
#[derive(Clone)]
pub struct EventRecorder {
    client: kube::Client,
    component: String,
    tasks: TaskTracker,
}

impl std::fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRecorder")
            .field("component", &self.component)
            .finish_non_exhaustive()
    }
}

impl EventRecorder {
    /// A recorder for `component`, writing through `client`.
    pub fn new(client: kube::Client, component: impl Into<String>) -> Self {
        Self {
            client,
            component: component.into(),
            tasks: TaskTracker::new(),
        }
    }

    /// Mirrors `EventRecorder.Event`: records `reason` and `message` about
    /// `object` (`type_` is [`NORMAL`] or [`WARNING`]) without waiting.
    pub fn event(
        &self,
        object: &ObjectReference,
        type_: &str,
        reason: &str,
        message: &str,
    ) {
        let event = self.build(object, type_, reason, message);
        let api: Api<Event> =
            Api::namespaced(self.client.clone(), &object.namespace);
        self.tasks.spawn(async move {
            if let Err(error) = api.create(&PostParams::default(), &event).await {
                tracing::debug!(%error, "event not recorded");
            }
        });
    }

    /// Waits for the events recorded so far to be written (or to fail).
    pub async fn flush(&self) {
        self.tasks.close();
        self.tasks.wait().await;
        self.tasks.reopen();
    }

    /// The Event `makeEvent` builds: named `<object>.<random>`, in the object's
    /// namespace, first and last seen now, count 1.
    fn build(
        &self,
        object: &ObjectReference,
        type_: &str,
        reason: &str,
        message: &str,
    ) -> Event {
        let now = k8s_openapi::jiff::Timestamp::now();
        let suffix: u64 = rand::rng().random();
        Event {
            metadata: ObjectMeta {
                name: Some(format!("{}.{suffix:016x}", object.name)),
                namespace: Some(object.namespace.clone()),
                ..ObjectMeta::default()
            },
            involved_object: CoreObjectReference {
                api_version: Some(object.api_version.clone()),
                kind: Some(object.kind.clone()),
                name: Some(object.name.clone()),
                namespace: Some(object.namespace.clone()),
                uid: Some(object.uid.clone()),
                resource_version: Some(object.resource_version.clone()),
                field_path: None,
            },
            reason: Some(reason.to_string()),
            message: Some(message.to_string()),
            type_: Some(type_.to_string()),
            count: Some(1),
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            event_time: None::<MicroTime>,
            source: Some(EventSource {
                component: Some(self.component.clone()),
                host: None,
            }),
            reporting_component: Some(self.component.clone()),
            reporting_instance: Some(self.component.clone()),
            ..Event::default()
        }
    }
}
