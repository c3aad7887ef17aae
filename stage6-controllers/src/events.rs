//! [`EventRecorder`]: `events.k8s.io/v1` Events about an object, as a
//! component reports them (`FailedScheduling`, `Scheduled`).
//!
//! Mirrors client-go's
//! [tools/events](https://github.com/kubernetes/client-go/blob/v0.36.0/tools/events/event_recorder.go)
//! (`recorderImpl.Eventf`, `generateEvent`) and the isomorphic-event series of
//! [event_broadcaster.go](https://github.com/kubernetes/client-go/blob/v0.36.0/tools/events/event_broadcaster.go)
//! (`recordToSink`, `getKey`): an Event is named `<object>.<unix nanos in
//! hex>`, lives in the object's namespace, carries `reportingController` (the
//! component, e.g. `default-scheduler`, which core `v1` readers see as
//! `reportingComponent`) and `reportingInstance` (`<controller>-<hostname>`).
//! The same action and reason about the same object again, within six
//! minutes, is not a new Event: the first one's `series` counts it.
//!
//! Where this differs: upstream's broadcaster records from its own goroutine,
//! retries a failed write up to 12 times, and writes a series' count only on
//! its second occurrence and then every 30 minutes; here
//! [`EventRecorder::eventf`] writes before it returns, once (a failure is
//! logged), and patches the series' count on every occurrence.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event, EventSeries};
use kube::api::{Api, Patch, PatchParams, PostParams};
use parking_lot::Mutex;
use serde_json::json;

use apimachinery::apis::meta::v1::time::now_micro;

/// Mirrors the events broadcaster's `finishTime`: how long an isomorphic
/// series stays open after its last occurrence (six minutes).
pub const SERIES_FINISH_TIME: Duration = Duration::from_secs(6 * 60);

/// Mirrors `v1.EventTypeNormal` and `v1.EventTypeWarning`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Nothing to worry about (`Scheduled`).
    Normal,
    /// Something went wrong (`FailedScheduling`).
    Warning,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// Mirrors `eventKey` (`getKey`): what makes two Events the same series.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct EventKey {
    action: String,
    reason: String,
    regarding: (String, String, String, String),
}

/// A recorded Event: where it is, how often it happened, when last.
#[derive(Clone, Debug)]
struct Recorded {
    namespace: String,
    name: String,
    count: i32,
    last_observed: Instant,
}

/// Mirrors `recorderImpl`: records Events of one reporting controller.
pub struct EventRecorder {
    client: kube::Client,
    reporting_controller: String,
    reporting_instance: String,
    /// Mirrors the broadcaster's `eventCache`.
    series: Mutex<HashMap<EventKey, Recorded>>,
}

impl std::fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRecorder")
            .field("reporting_controller", &self.reporting_controller)
            .field("reporting_instance", &self.reporting_instance)
            .finish_non_exhaustive()
    }
}

/// This machine's name, for `reportingInstance` (upstream's `os.Hostname()`).
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

impl EventRecorder {
    /// Mirrors `eventBroadcasterImpl.NewRecorder(scheme, reportingController)`:
    /// `reportingInstance` is `<reportingController>-<hostname>`.
    #[must_use]
    pub fn new(
        client: kube::Client,
        reporting_controller: impl Into<String>,
    ) -> Self {
        let reporting_controller = reporting_controller.into();
        let reporting_instance = format!("{reporting_controller}-{}", hostname());
        EventRecorder {
            client,
            reporting_controller,
            reporting_instance,
            series: Mutex::new(HashMap::new()),
        }
    }

    /// The `reportingController` of the Events.
    #[must_use]
    pub fn reporting_controller(&self) -> &str {
        &self.reporting_controller
    }

    /// Mirrors `recorderImpl.Eventf(regarding, nil, eventtype, reason, action,
    /// note)`: records an Event about `regarding`, or counts it in the series
    /// of an isomorphic one. A failed write is logged and dropped.
    pub async fn eventf(
        &self,
        regarding: &ObjectReference,
        event_type: EventType,
        reason: &str,
        action: &str,
        note: &str,
    ) {
        let key = EventKey {
            action: action.to_string(),
            reason: reason.to_string(),
            regarding: (
                regarding.kind.clone().unwrap_or_default(),
                regarding.namespace.clone().unwrap_or_default(),
                regarding.name.clone().unwrap_or_default(),
                regarding.uid.clone().unwrap_or_default(),
            ),
        };
        let repeat = {
            let mut series = self.series.lock();
            series.retain(|_, r| r.last_observed.elapsed() < SERIES_FINISH_TIME);
            series.get_mut(&key).map(|recorded| {
                recorded.count += 1;
                recorded.last_observed = Instant::now();
                recorded.clone()
            })
        };
        let result = match repeat {
            Some(recorded) => self.patch_series(&recorded).await,
            None => {
                self.create(key, regarding, event_type, reason, action, note)
                    .await
            }
        };
        if let Err(error) = result {
            tracing::warn!(%error, reason, "could not record an event");
        }
    }

    /// Mirrors `recordEvent` of a series: patches `series` of the first Event.
    async fn patch_series(&self, recorded: &Recorded) -> Result<(), kube::Error> {
        let events: Api<Event> =
            Api::namespaced(self.client.clone(), &recorded.namespace);
        let series = EventSeries {
            count: recorded.count,
            last_observed_time: now_micro(),
        };
        events
            .patch(
                &recorded.name,
                &PatchParams::default(),
                &Patch::Merge(json!({"series": series})),
            )
            .await
            .map(drop)
    }

    /// Mirrors `generateEvent` and the create of `recordEvent`.
    async fn create(
        &self,
        key: EventKey,
        regarding: &ObjectReference,
        event_type: EventType,
        reason: &str,
        action: &str,
        note: &str,
    ) -> Result<(), kube::Error> {
        let event_time = now_micro();
        let namespace = regarding
            .namespace
            .clone()
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| "default".to_string());
        let nanos = event_time.0.as_nanosecond();
        let name = format!(
            "{}.{:x}",
            regarding.name.as_deref().unwrap_or_default(),
            nanos
        );
        let event = Event {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(namespace.clone()),
                ..Default::default()
            },
            event_time: Some(event_time),
            reporting_controller: Some(self.reporting_controller.clone()),
            reporting_instance: Some(self.reporting_instance.clone()),
            action: Some(action.to_string()),
            reason: Some(reason.to_string()),
            regarding: Some(regarding.clone()),
            note: Some(note.to_string()),
            type_: Some(event_type.as_str().to_string()),
            ..Event::default()
        };
        let events: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        events.create(&PostParams::default(), &event).await?;
        self.series.lock().insert(
            key,
            Recorded {
                namespace,
                name,
                count: 1,
                last_observed: Instant::now(),
            },
        );
        Ok(())
    }
}

/// Mirrors `reference.GetReference` for a pod: the `ObjectReference` an Event
/// about it carries.
#[must_use]
pub fn pod_reference(pod: &k8s_openapi::api::core::v1::Pod) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        namespace: pod.metadata.namespace.clone(),
        name: pod.metadata.name.clone(),
        uid: pod.metadata.uid.clone(),
        resource_version: pod.metadata.resource_version.clone(),
        ..ObjectReference::default()
    }
}
