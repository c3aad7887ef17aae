//! The etcd2 etcdWatcher (source document 002) against a real etcd 3.4 with the v2
//! API: the initial GET, the long poll from an index, 410 for an index older than
//! etcd's 1000-event history, stopping before and during a long poll, and etcd dying
//! under an open watch.
//!
//! Each test starts its own etcd ([`EtcdServer::start_or_skip`]); without the binary
//! a local run skips loudly and CI fails. Every wait is bounded.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use apimachinery::watch::WatchEvent;
use futures::StreamExt;
use serde_json::json;
use stage5_storage::Watch;
use stage5_storage::etcd2::{
    EtcdClient, EtcdWatcher, EtcdWatcherConfig, SetOptions, new_etcd_watcher,
};
use stage5_storage::testing::EtcdServer;
use stage5_storage::{Object, ResourceInfo};

const BOUND: Duration = Duration::from_secs(20);
const PREFIX: &str = "/registry/pods/default/";

fn key(name: &str) -> String {
    format!("{PREFIX}{name}")
}

fn pod(name: &str, image: &str) -> String {
    let pod = Object::new(&ResourceInfo::PODS, Some("default"), name)
        .with_data(json!({"spec": {"containers": [{"name": "c", "image": image}]}}));
    serde_json::to_string(&pod).expect("a pod serializes")
}

fn image(obj: &Object) -> String {
    obj.data["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// (type, name, resourceVersion, image) of the next event, or `None` at the end.
async fn next(
    watch: &mut Watch<Object>,
) -> Option<(String, String, String, String)> {
    let item = tokio::time::timeout(BOUND, watch.next())
        .await
        .expect("the watch must answer in time")?;
    let event = item.expect("the etcd2 watch yields events, not stream errors");
    Some(describe(&event))
}

fn describe(event: &WatchEvent<Object>) -> (String, String, String, String) {
    match event {
        WatchEvent::Error(status) => (
            "ERROR".to_string(),
            status.reason.clone().unwrap_or_default(),
            status.code.unwrap_or_default().to_string(),
            status.message.clone().unwrap_or_default(),
        ),
        other => {
            let obj = other.object().expect("an object event");
            (
                other.event_type().to_string(),
                obj.name().to_string(),
                obj.resource_version().to_string(),
                image(obj),
            )
        }
    }
}

fn ev(
    kind: &str,
    name: &str,
    rv: u64,
    image: &str,
) -> (String, String, String, String) {
    (
        kind.to_string(),
        name.to_string(),
        rv.to_string(),
        image.to_string(),
    )
}

fn modified_index(response: &stage5_storage::etcd2::Response) -> u64 {
    response
        .node
        .as_ref()
        .map(|n| n.modified_index)
        .expect("a write answers with its node")
}

fn list_watch(client: &EtcdClient, rv: u64) -> (Arc<EtcdWatcher>, Watch<Object>) {
    let w = new_etcd_watcher(
        client.clone(),
        PREFIX,
        rv,
        EtcdWatcherConfig::default().list(true),
    );
    let watch = Arc::clone(&w).into_watch();
    (w, watch)
}

mod etcd2_live {
    use super::*;

    #[tokio::test]
    async fn resource_version_0_lists_existing_objects_then_streams_changes() {
        let Some(etcd) = EtcdServer::start_or_skip("etcd2 initial get") else {
            return;
        };
        let client = EtcdClient::new(etcd.client_url());
        let a = modified_index(
            &client
                .create(&key("a"), &pod("a", "v1"))
                .await
                .expect("create"),
        );
        let b = modified_index(
            &client
                .create(&key("b"), &pod("b", "v1"))
                .await
                .expect("create"),
        );

        let (w, mut watch) = list_watch(&client, 0);
        // The initial GET is not sorted: compare as a set.
        let initial: BTreeSet<_> = [next(&mut watch).await, next(&mut watch).await]
            .into_iter()
            .map(|e| e.expect("an initial event"))
            .collect();
        assert_eq!(
            initial,
            BTreeSet::from([ev("ADDED", "a", a, "v1"), ev("ADDED", "b", b, "v1")])
        );

        let c = modified_index(
            &client
                .create(&key("c"), &pod("c", "v1"))
                .await
                .expect("create"),
        );
        assert_eq!(next(&mut watch).await, Some(ev("ADDED", "c", c, "v1")));
        let options = SetOptions::default();
        let c2 = client
            .set(&key("c"), &pod("c", "v2"), &options)
            .await
            .expect("set");
        assert_eq!(
            next(&mut watch).await,
            Some(ev("MODIFIED", "c", modified_index(&c2), "v2"))
        );
        let deleted = client.delete(&key("c"), None).await.expect("delete");
        // The old object, stamped with the delete's index.
        assert_eq!(
            next(&mut watch).await,
            Some(ev("DELETED", "c", modified_index(&deleted), "v2"))
        );
        tokio::time::timeout(BOUND, w.stop_and_wait())
            .await
            .expect("the watcher stops");
        assert_eq!(next(&mut watch).await, None);
    }

    #[tokio::test]
    async fn a_watch_from_an_index_long_polls_the_changes_after_it() {
        let Some(etcd) = EtcdServer::start_or_skip("etcd2 long poll from index")
        else {
            return;
        };
        let client = EtcdClient::new(etcd.client_url());
        let options = SetOptions::default();
        let first = modified_index(
            &client
                .set(&key("a"), &pod("a", "v1"), &options)
                .await
                .expect("set"),
        );
        let second = modified_index(
            &client
                .set(&key("a"), &pod("a", "v2"), &options)
                .await
                .expect("set"),
        );
        let cas = SetOptions {
            prev_index: Some(second),
            ..SetOptions::default()
        };
        let third = modified_index(
            &client
                .set(&key("a"), &pod("a", "v3"), &cas)
                .await
                .expect("cas"),
        );

        // From `first`: the changes after it, from etcd's history, then live ones.
        let (w, mut watch) = list_watch(&client, first);
        assert_eq!(
            next(&mut watch).await,
            Some(ev("MODIFIED", "a", second, "v2"))
        );
        assert_eq!(
            next(&mut watch).await,
            Some(ev("MODIFIED", "a", third, "v3"))
        );
        let b = modified_index(
            &client
                .create(&key("b"), &pod("b", "v1"))
                .await
                .expect("create"),
        );
        assert_eq!(next(&mut watch).await, Some(ev("ADDED", "b", b, "v1")));
        w.stop();

        // A watch of one key (not a list) sees only that key.
        let single = new_etcd_watcher(
            client.clone(),
            key("b"),
            0,
            EtcdWatcherConfig::default(),
        );
        let mut single_watch = Arc::clone(&single).into_watch();
        assert_eq!(
            next(&mut single_watch).await,
            Some(ev("ADDED", "b", b, "v1"))
        );
        client
            .set(&key("a"), &pod("a", "v4"), &options)
            .await
            .expect("set");
        let b2 = modified_index(
            &client
                .set(&key("b"), &pod("b", "v2"), &options)
                .await
                .expect("set"),
        );
        assert_eq!(
            next(&mut single_watch).await,
            Some(ev("MODIFIED", "b", b2, "v2"))
        );
        single_watch.stop();
        tokio::time::timeout(BOUND, single.stop_and_wait())
            .await
            .expect("the watcher stops");
        tokio::time::timeout(BOUND, w.stop_and_wait())
            .await
            .expect("the watcher stops");
    }

    #[tokio::test]
    async fn an_index_older_than_etcds_history_is_410_expired() {
        let Some(etcd) = EtcdServer::start_or_skip("etcd2 410") else {
            return;
        };
        let client = EtcdClient::new(etcd.client_url());
        // etcd v2 keeps the last 1000 events; write more, 16 writers at a time.
        let mut writers = tokio::task::JoinSet::new();
        for writer in 0..16 {
            let client = client.clone();
            writers.spawn(async move {
                let options = SetOptions::default();
                for i in 0..70 {
                    client
                        .set(
                            &key(&format!("w{writer}")),
                            &pod("w", &i.to_string()),
                            &options,
                        )
                        .await
                        .expect("set");
                }
            });
        }
        tokio::time::timeout(Duration::from_secs(120), async {
            while let Some(done) = writers.join_next().await {
                done.expect("a writer must not panic");
            }
        })
        .await
        .expect("1120 writes in time");

        let (w, mut watch) = list_watch(&client, 1);
        let (kind, reason, code, message) =
            next(&mut watch).await.expect("an error event");
        assert_eq!(
            (kind.as_str(), reason.as_str(), code.as_str()),
            ("ERROR", "Expired", "410")
        );
        assert_eq!(
            message,
            "The resourceVersion for the provided watch is too old."
        );
        assert_eq!(
            next(&mut watch).await,
            None,
            "the channel closes after the error"
        );
        tokio::time::timeout(BOUND, w.stop_and_wait())
            .await
            .expect("the watcher's tasks end");
        assert!(w.is_finished());
    }

    #[tokio::test]
    async fn stop_before_the_watch_starts_ends_at_once() {
        let Some(etcd) = EtcdServer::start_or_skip("etcd2 stop before start") else {
            return;
        };
        let client = EtcdClient::new(etcd.client_url());
        client
            .create(&key("a"), &pod("a", "v1"))
            .await
            .expect("create");
        let (w, mut watch) = list_watch(&client, 0);
        w.stop(); // before either task has run
        assert_eq!(next(&mut watch).await, None);
        tokio::time::timeout(BOUND, w.stop_and_wait())
            .await
            .expect("the watcher's tasks end");
        assert!(w.is_finished());
    }

    #[tokio::test]
    async fn stop_during_a_long_poll_cancels_it() {
        let Some(etcd) = EtcdServer::start_or_skip("etcd2 stop during poll") else {
            return;
        };
        let client = EtcdClient::new(etcd.client_url());
        let (w, mut watch) = list_watch(&client, 0);
        let a = modified_index(
            &client
                .create(&key("a"), &pod("a", "v1"))
                .await
                .expect("create"),
        );
        assert_eq!(next(&mut watch).await, Some(ev("ADDED", "a", a, "v1")));
        // etcd_watch is now waiting for index a+1, which no one writes.
        let stopper = watch.stopper();
        stopper.stop();
        assert_eq!(next(&mut watch).await, None);
        tokio::time::timeout(Duration::from_secs(5), w.stop_and_wait())
            .await
            .expect("stop must cancel the long poll promptly");
        assert!(w.is_finished());
    }

    #[tokio::test]
    async fn etcd_killed_under_a_watch_is_an_error_event_not_a_hang() {
        let Some(mut etcd) = EtcdServer::start_or_skip("etcd2 killed") else {
            return;
        };
        let client = EtcdClient::new(etcd.client_url());
        let (w, mut watch) = list_watch(&client, 0);
        let a = modified_index(
            &client
                .create(&key("a"), &pod("a", "v1"))
                .await
                .expect("create"),
        );
        assert_eq!(next(&mut watch).await, Some(ev("ADDED", "a", a, "v1")));
        etcd.kill();
        let (kind, reason, code, _) =
            next(&mut watch).await.expect("an error event");
        assert_eq!(
            (kind.as_str(), reason.as_str(), code.as_str()),
            ("ERROR", "InternalError", "500")
        );
        assert_eq!(next(&mut watch).await, None);
        tokio::time::timeout(BOUND, w.stop_and_wait())
            .await
            .expect("the watcher's tasks end");
    }
}
