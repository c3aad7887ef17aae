//! The factory over stage 3's fakes: one informer per type, start, sync, listers,
//! shutdown.

mod common;

use std::time::Duration;

use common::{PATIENCE, pod, pod_with_label};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use pretty_assertions::assert_eq;
use stage3_reflector::FakeListerWatcher;
use stage4_shared_informer::{
    FakeSource, ResourceEventHandlerFuncs, SharedInformerFactory,
    parse_label_selector,
};
use tokio_util::sync::CancellationToken;

fn config_map(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.metadata.namespace = Some("default".into());
    cm
}

#[tokio::test(start_paused = true)]
async fn one_informer_per_type_synced_and_listed() {
    let pods = FakeListerWatcher::<Pod>::new();
    pods.add(pod_with_label("web-0", "app", "web")).unwrap();
    pods.add(pod_with_label("db-0", "app", "db")).unwrap();
    let config_maps = FakeListerWatcher::<ConfigMap>::new();
    config_maps.add(config_map("settings")).unwrap();
    let source = FakeSource::new();
    source.insert(pods.clone());
    source.insert(config_maps.clone());
    let factory = SharedInformerFactory::builder(source, Duration::ZERO)
        .custom_resync::<ConfigMap>(Duration::from_secs(30))
        .tweak_list_options(|options| options.label_selector = "tier!=test".into())
        .build();

    // Asking twice gives the same informer.
    let pod_informer = factory.pods();
    pod_informer
        .informer()
        .add_event_handler(ResourceEventHandlerFuncs::new())
        .unwrap();
    assert_eq!(factory.pods().informer().handler_count(), 1);
    let cm_informer = factory.config_maps();

    factory.start();
    factory.start(); // starts nothing twice
    let stop = CancellationToken::new();
    let synced = tokio::time::timeout(PATIENCE, factory.wait_for_cache_sync(&stop))
        .await
        .expect("caches sync");
    assert_eq!(synced.len(), 2);
    assert!(synced.values().all(|s| *s), "{synced:?}");

    let web = parse_label_selector("app=web").unwrap();
    let listed = pod_informer.lister().namespaced("default").list(&web);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].metadata.name.as_deref(), Some("web-0"));
    assert!(
        pod_informer
            .lister()
            .namespaced("default")
            .get("db-0")
            .is_ok()
    );
    let missing = pod_informer
        .lister()
        .namespaced("default")
        .get("nope")
        .unwrap_err();
    assert_eq!(missing.to_string(), r#"pods "nope" not found"#);
    assert_eq!(
        cm_informer
            .lister()
            .namespaced("default")
            .list(&parse_label_selector("").unwrap())
            .len(),
        1
    );

    // The tweak reached every list call.
    assert!(
        pods.list_calls()
            .iter()
            .all(|o| o.label_selector == "tier!=test")
    );
    // A pod added later reaches the cache.
    pods.add(pod("web-1")).unwrap();
    tokio::time::timeout(PATIENCE, async {
        while pod_informer
            .lister()
            .namespaced("default")
            .get("web-1")
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the new pod is cached");

    tokio::time::timeout(PATIENCE, factory.shutdown())
        .await
        .expect("shutdown waits for every informer");
    assert!(pod_informer.informer().is_stopped());
    assert!(cm_informer.informer().is_stopped());
}
