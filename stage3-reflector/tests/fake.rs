//! The fake API server behaves like one: versions, paging, continue tokens, history
//! replay, compaction, streaming lists, scripted replies, and a record of every
//! call.

mod common;

use std::sync::Arc;

use common::*;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use pretty_assertions::assert_eq;
use stage3_reflector::{
    Call, Error, FakeListerWatcher, ListOptions, ListReply, ListerWatcher,
    ResourceVersionMatch, Watch, WatchEvent, WatchOptions, WatchReply,
    expired_status,
};

fn names(items: &[Arc<Pod>]) -> Vec<String> {
    items
        .iter()
        .filter_map(|pod| pod.metadata.name.clone())
        .collect()
}

/// The items a watch has ready now, without waiting for more.
fn drain(watch: &mut Watch<Pod>) -> Vec<String> {
    let mut seen = Vec::new();
    while let Some(Some(item)) = watch.next().now_or_never() {
        seen.push(match item {
            Ok(WatchEvent::Added(pod)) => {
                format!("ADDED {}", pod.metadata.name.clone().unwrap_or_default())
            }
            Ok(WatchEvent::Modified(pod)) => {
                format!("MODIFIED {}", pod.metadata.name.clone().unwrap_or_default())
            }
            Ok(WatchEvent::Deleted(pod)) => {
                format!("DELETED {}", pod.metadata.name.clone().unwrap_or_default())
            }
            Ok(WatchEvent::Bookmark(bookmark)) => format!(
                "BOOKMARK {}{}",
                bookmark.resource_version,
                if bookmark.is_initial_events_end() {
                    " (initial events end)"
                } else {
                    ""
                }
            ),
            Ok(WatchEvent::Error(status)) => {
                format!("ERROR {}", status.code.unwrap_or_default())
            }
            Err(error) => format!("error {}", kind(&error)),
        });
    }
    seen
}

#[tokio::test(start_paused = true)]
async fn changes_get_consecutive_resource_versions() {
    let fake = fake_with(&["a", "b"]);
    let modified = fake.modify(pod("a")).expect("named");
    assert_eq!(modified.metadata.resource_version.as_deref(), Some("3"));
    assert_eq!(fake.resource_version(), "3");
    let deleted = fake.delete(pod("b")).expect("named");
    assert_eq!(deleted.metadata.resource_version.as_deref(), Some("4"));
    assert_eq!(names(&fake.objects()), ["a"]);
    assert!(
        fake.add(Pod::default()).is_err(),
        "a pod without a name has no key"
    );
}

#[tokio::test(start_paused = true)]
async fn lists_are_paged_with_continue_tokens_that_can_expire() {
    let fake = fake_with(&["a", "b", "c"]);
    let first = fake
        .list(ListOptions {
            limit: 2,
            ..ListOptions::default()
        })
        .await
        .expect("served");
    assert_eq!(names(&first.items), ["a", "b"]);
    assert_eq!(first.resource_version, "3");
    assert!(!first.continue_token.is_empty());

    fake.add(pod("d")).expect("named");
    let second = fake
        .list(ListOptions {
            limit: 2,
            continue_token: first.continue_token.clone(),
            ..ListOptions::default()
        })
        .await
        .expect("served");
    assert_eq!(names(&second.items), ["c", "d"]);
    assert_eq!(
        second.resource_version, "3",
        "later pages keep the first page's version"
    );
    assert_eq!(second.continue_token, "");

    fake.expire_continue_tokens();
    let error = fake
        .list(ListOptions {
            limit: 2,
            continue_token: first.continue_token,
            ..ListOptions::default()
        })
        .await
        .expect_err("the token expired");
    assert!(error.is_expired());
    assert_eq!(error.code(), Some(410));
}

#[tokio::test(start_paused = true)]
async fn a_version_the_fake_has_not_reached_is_too_large() {
    let fake = fake_with(&["a"]);
    let error = fake
        .list(ListOptions {
            resource_version: "9".to_string(),
            ..ListOptions::default()
        })
        .await
        .expect_err("9 is in the future");
    assert!(error.is_too_large_resource_version());
    let error = fake
        .list(ListOptions {
            resource_version: "nine".to_string(),
            ..ListOptions::default()
        })
        .await
        .expect_err("not a version");
    assert_eq!(error.code(), Some(400));
}

#[tokio::test(start_paused = true)]
async fn watches_replay_history_after_their_version_then_follow_changes() {
    let fake = fake_with(&["a", "b"]);
    fake.modify(pod("a")).expect("named");
    let mut watch = fake
        .watch(WatchOptions {
            resource_version: "1".to_string(),
            ..WatchOptions::default()
        })
        .await
        .expect("served");
    assert_eq!(drain(&mut watch), ["ADDED b", "MODIFIED a"]);
    fake.delete(pod("b")).expect("named");
    fake.emit_bookmark("4");
    fake.emit_error(expired_status("gone"));
    fake.emit_unexpected_type("v1/Service");
    assert_eq!(
        drain(&mut watch),
        [
            "DELETED b",
            "BOOKMARK 4",
            "ERROR 410",
            "error UnexpectedType"
        ]
    );
    assert_eq!(fake.open_watches(), 1);
    fake.close_watches();
    assert!(watch.next().await.is_none());
    assert_eq!(fake.open_watches(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_stopped_watch_is_no_longer_open() {
    let fake = fake_with(&["a"]);
    let mut watch = fake.watch(WatchOptions::default()).await.expect("served");
    assert_eq!(fake.open_watches(), 1);
    watch.stop();
    assert_eq!(fake.open_watches(), 0);
}

#[tokio::test(start_paused = true)]
async fn compaction_expires_older_watches() {
    let fake = fake_with(&["a", "b"]);
    fake.compact();
    let error = fake
        .watch(WatchOptions {
            resource_version: "1".to_string(),
            ..WatchOptions::default()
        })
        .await
        .expect_err("compacted");
    assert!(error.is_expired());
    assert!(
        fake.watch(WatchOptions {
            resource_version: "2".to_string(),
            ..WatchOptions::default()
        })
        .await
        .is_ok()
    );
}

#[tokio::test(start_paused = true)]
async fn a_streaming_list_starts_with_the_state_and_the_end_bookmark() {
    let fake = fake_with(&["a", "b"]);
    let mut watch = fake
        .watch(WatchOptions {
            send_initial_events: true,
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            allow_watch_bookmarks: true,
            ..WatchOptions::default()
        })
        .await
        .expect("served");
    assert_eq!(
        drain(&mut watch),
        ["ADDED a", "ADDED b", "BOOKMARK 2 (initial events end)"]
    );
}

#[tokio::test(start_paused = true)]
async fn scripted_replies_come_first_and_every_call_is_recorded() {
    let fake = fake_with(&["a"]);
    fake.fail_next_list(Error::from_status(expired_status("scripted")));
    fake.push_list_reply(ListReply::Serve);
    fake.push_watch_reply(WatchReply::Items(vec![]));
    fake.fail_next_watch(stage3_reflector::connection_refused());

    assert!(fake.list(ListOptions::default()).await.is_err());
    assert!(fake.list(ListOptions::default()).await.is_ok());
    let mut scripted = fake.watch(WatchOptions::default()).await.expect("scripted");
    assert!(scripted.next().await.is_none());
    let error = fake
        .watch(WatchOptions::default())
        .await
        .expect_err("scripted");
    assert!(error.is_connection_refused());
    assert!(
        fake.watch(WatchOptions::default()).await.is_ok(),
        "then live"
    );
    assert_eq!(
        fake.calls(),
        vec![
            Call::List(ListOptions::default()),
            Call::List(ListOptions::default()),
            Call::Watch(WatchOptions::default()),
            Call::Watch(WatchOptions::default()),
            Call::Watch(WatchOptions::default()),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn waiting_for_calls_is_bounded_by_the_caller() {
    let fake = FakeListerWatcher::<Pod>::new();
    let waited = tokio::time::timeout(
        std::time::Duration::from_secs(1),
        fake.wait_for_calls(1),
    )
    .await;
    assert!(waited.is_err(), "nobody called, so the wait times out");
    let _ = fake.list(ListOptions::default()).await;
    within("one call", fake.wait_for_calls(1)).await;
}
