//! Unit-level checks of the pieces a learner writes: the resync period rule, the
//! filtering handler, and process_deltas against a real indexer.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use parking_lot::Mutex;
use stage1_store::{Cache, KeyGetter, Store};
use stage2_deltafifo::{Delta, DeltaType, Deltas};
use stage4_shared_informer::{
    DeletedObject, FilteringResourceEventHandler, ResourceEventHandler,
    determine_resync_period, process_deltas,
};

fn pod(name: &str, rv: &str, app: &str) -> Arc<Pod> {
    let mut pod = Pod::default();
    pod.metadata.name = Some(name.into());
    pod.metadata.namespace = Some("default".into());
    pod.metadata.resource_version = Some(rv.into());
    pod.metadata.labels = Some([("app".to_string(), app.to_string())].into());
    Arc::new(pod)
}

/// Records calls as strings.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl ResourceEventHandler<Pod> for Log {
    fn on_add(&self, obj: &Arc<Pod>, initial: bool) {
        let name = obj.metadata.name.clone().unwrap_or_default();
        self.0.lock().push(format!("add {name} initial={initial}"));
    }
    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        let rv = |p: &Pod| p.metadata.resource_version.clone().unwrap_or_default();
        let name = new.metadata.name.clone().unwrap_or_default();
        self.0
            .lock()
            .push(format!("update {name} {}->{}", rv(old), rv(new)));
    }
    fn on_delete(&self, obj: &DeletedObject<Pod>) {
        let what = match obj {
            DeletedObject::Object(p) => p.metadata.name.clone().unwrap_or_default(),
            DeletedObject::Tombstone(t) => format!("tombstone {}", t.key),
        };
        self.0.lock().push(format!("delete {what}"));
    }
}

impl Log {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock())
    }
}

mod ex4_resync_period {
    use super::*;
    use pretty_assertions::assert_eq;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn no_resync_asked_is_zero() {
        assert_eq!(
            determine_resync_period(Duration::ZERO, 10 * S),
            Duration::ZERO
        );
    }

    #[test]
    fn an_informer_without_resync_gives_zero() {
        assert_eq!(
            determine_resync_period(5 * S, Duration::ZERO),
            Duration::ZERO
        );
    }

    #[test]
    fn a_period_below_the_check_period_is_raised() {
        assert_eq!(determine_resync_period(2 * S, 10 * S), 10 * S);
    }

    #[test]
    fn a_period_at_or_above_the_check_period_stays() {
        assert_eq!(determine_resync_period(10 * S, 10 * S), 10 * S);
        assert_eq!(determine_resync_period(30 * S, 10 * S), 30 * S);
    }
}

mod ex4_filter_update {
    use super::*;
    use pretty_assertions::assert_eq;

    pub(super) fn filtered()
    -> (Arc<Log>, FilteringResourceEventHandler<Pod, Arc<Log>>) {
        let log = Arc::new(Log::default());
        let handler = FilteringResourceEventHandler::new(
            |p: &Pod| {
                p.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("app"))
                    .is_some_and(|app| app == "web")
            },
            Arc::clone(&log),
        );
        (log, handler)
    }

    #[test]
    fn an_update_inside_the_filter_stays_an_update() {
        let (log, h) = filtered();
        h.on_update(&pod("a", "1", "web"), &pod("a", "2", "web"));
        assert_eq!(log.take(), ["update a 1->2"]);
    }

    #[test]
    fn an_update_into_the_filter_becomes_an_add() {
        let (log, h) = filtered();
        h.on_update(&pod("a", "1", "db"), &pod("a", "2", "web"));
        assert_eq!(log.take(), ["add a initial=false"]);
    }

    #[test]
    fn an_update_out_of_the_filter_becomes_a_delete_of_the_old_object() {
        let (log, h) = filtered();
        h.on_update(&pod("a", "1", "web"), &pod("a", "2", "db"));
        assert_eq!(log.take(), ["delete a"]);
    }

    #[test]
    fn an_update_outside_the_filter_is_dropped() {
        let (log, h) = filtered();
        h.on_update(&pod("a", "1", "db"), &pod("a", "2", "db"));
        assert!(log.take().is_empty());
    }
}

mod ex4_process_deltas {
    use super::*;
    use pretty_assertions::assert_eq;

    fn deltas(items: Vec<Delta<Pod>>) -> Deltas<Pod> {
        items.into_iter().collect()
    }

    #[test]
    fn an_unknown_key_is_an_add_and_a_known_one_an_update() {
        let cache = Cache::<Pod>::for_resources();
        let log = Arc::new(Log::default());
        let d = deltas(vec![
            Delta::new(DeltaType::Replaced, pod("a", "1", "web")),
            Delta::new(DeltaType::Updated, pod("a", "2", "web")),
            Delta::new(DeltaType::Sync, pod("a", "2", "web")),
        ]);
        process_deltas(&log, &cache, d, true).unwrap();
        assert_eq!(
            log.take(),
            ["add a initial=true", "update a 1->2", "update a 2->2"]
        );
        assert_eq!(
            cache
                .get_by_key("default/a")
                .unwrap()
                .metadata
                .resource_version
                .as_deref(),
            Some("2")
        );
    }

    #[test]
    fn the_indexer_is_updated_before_the_handler_is_told() {
        struct SeesCache(Arc<Cache<Pod>>, Arc<Mutex<Vec<bool>>>);
        impl ResourceEventHandler<Pod> for SeesCache {
            fn on_add(&self, obj: &Arc<Pod>, _: bool) {
                self.1.lock().push(self.0.get(obj).unwrap().is_some());
            }
            fn on_delete(&self, obj: &DeletedObject<Pod>) {
                let cached = self.0.get(obj.object().unwrap()).unwrap();
                self.1.lock().push(cached.is_none());
            }
        }
        let cache = Arc::new(Cache::<Pod>::for_resources());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler = SeesCache(Arc::clone(&cache), Arc::clone(&seen));
        let d = deltas(vec![
            Delta::new(DeltaType::Added, pod("a", "1", "web")),
            Delta::new(DeltaType::Deleted, pod("a", "2", "web")),
        ]);
        process_deltas(&handler, &cache, d, false).unwrap();
        assert_eq!(*seen.lock(), [true, true]);
    }

    #[test]
    fn deletions_remove_objects_and_tombstones_by_key() {
        let cache = Cache::<Pod>::for_resources();
        cache.add(pod("a", "1", "web")).unwrap();
        cache.add(pod("b", "1", "web")).unwrap();
        let log = Arc::new(Log::default());
        let d = deltas(vec![Delta::new(DeltaType::Deleted, pod("a", "1", "web"))]);
        process_deltas(&log, &cache, d, false).unwrap();
        let d = deltas(vec![Delta::tombstone(Arc::from("default/b"), None)]);
        process_deltas(&log, &cache, d, false).unwrap();
        assert_eq!(log.take(), ["delete a", "delete tombstone default/b"]);
        assert!(cache.is_empty());
    }
}

/// Adds and deletes through the filter (not part of the update exercise).
mod filtering {
    use super::*;
    use pretty_assertions::assert_eq;

    use super::ex4_filter_update::filtered;

    #[test]
    fn adds_and_deletes_are_filtered_too() {
        let (log, h) = filtered();
        h.on_add(&pod("a", "1", "web"), true);
        h.on_add(&pod("b", "1", "db"), true);
        h.on_delete(&DeletedObject::Object(pod("b", "1", "db")));
        h.on_delete(&DeletedObject::Object(pod("a", "1", "web")));
        assert_eq!(log.take(), ["add a initial=true", "delete a"]);
    }
}
