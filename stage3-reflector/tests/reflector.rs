//! Reflector scenarios, ported from client-go's `tools/cache/reflector_test.go` and
//! written against the scriptable fake. Every test runs on paused tokio time, so
//! backoffs and timeouts pass instantly and deterministically, and every wait is
//! bounded.
//!
//! Each scenario runs a whole reflector, so it needs every exercise region on its
//! path; the modules are named after the behaviour they show. The tests that prove
//! one exercise region each (`ex3_*`) are unit tests next to the region, in
//! `src/reflector.rs` and `src/pager.rs`. The module [`client_go`] holds the ports
//! named after their Go tests.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use stage3_reflector::{
    Call, Error, FakeListerWatcher, ListOptions, Reflector, ReflectorOptions,
    WatchEvent, connection_refused, expired_status, internal_error_status,
    too_many_requests_status,
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

type TestReflector = Reflector<Pod, FakeListerWatcher<Pod>, RecordingStore>;

fn reflector(
    fake: &FakeListerWatcher<Pod>,
    options: ReflectorOptions,
) -> (TestReflector, Arc<RecordingStore>) {
    let store = Arc::new(RecordingStore::default());
    (
        Reflector::new(fake.clone(), Arc::clone(&store), options),
        store,
    )
}

fn list_from(resource_version: &str, limit: u32) -> Call {
    Call::List(ListOptions {
        resource_version: resource_version.to_string(),
        limit,
        ..ListOptions::default()
    })
}

fn forbidden_status() -> Status {
    Status {
        code: Some(403),
        reason: Some("Forbidden".to_string()),
        message: Some("pods is forbidden".to_string()),
        status: Some("Failure".to_string()),
        ..Status::default()
    }
}

fn list_versions(fake: &FakeListerWatcher<Pod>) -> Vec<String> {
    fake.list_calls()
        .into_iter()
        .map(|options| options.resource_version)
        .collect()
}

fn watch_versions(fake: &FakeListerWatcher<Pod>) -> Vec<String> {
    fake.watch_calls()
        .into_iter()
        .map(|options| options.resource_version)
        .collect()
}

fn api_error(status: Status) -> Error {
    Error::from_status(status)
}

mod list_and_watch {
    use stage3_reflector::Phase;

    use pretty_assertions::assert_eq;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn first_list_then_watch_from_the_lists_version() {
        let fake = fake_with(&["a", "b"]);
        let reported = Reported::default();
        let (reflector, store) = reflector(&fake, reported.options());
        assert_eq!(reflector.phase(), Phase::Idle);
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            eventually("the reflector to watch", || {
                reflector.phase() == Phase::Watching
            })
            .await;
        })
        .await;
        assert_eq!(
            calls_without_timeouts(&fake),
            vec![list_from("0", 500), Call::Watch(plain_watch("2"))]
        );
        assert_eq!(store.ops(), vec![Op::Replace(2, "2".to_string())]);
        assert_eq!(reflector.last_sync_resource_version(), "2");
        assert_eq!(reflector.phase(), Phase::Stopped);
        assert_eq!(reported.kinds(), Vec::<String>::new());
    }

    #[tokio::test(start_paused = true)]
    async fn watch_events_reach_the_store() {
        let fake = fake_with(&["a", "b"]);
        let (reflector, store) = reflector(&fake, ReflectorOptions::default());
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            fake.add(pod("c")).expect("named");
            fake.modify(pod("a")).expect("named");
            fake.delete(pod("b")).expect("named");
            eventually("the three changes", || {
                reflector.last_sync_resource_version() == "5"
            })
            .await;
        })
        .await;
        assert_eq!(
            store.ops(),
            vec![
                Op::Replace(2, "2".to_string()),
                Op::Add("c".to_string()),
                Op::Update("a".to_string()),
                Op::Delete("b".to_string()),
            ]
        );
        assert_eq!(
            store.contents(),
            vec![
                ("a".to_string(), "4".to_string()),
                ("c".to_string(), "3".to_string())
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn list_and_watch_returns_list_errors_and_watch_open_errors() {
        let fake = fake_with(&["a"]);
        let (reflector, store) = reflector(&fake, ReflectorOptions::default());
        let shutdown = CancellationToken::new();

        fake.fail_next_list(api_error(internal_error_status(
            "etcdserver: no leader",
        )));
        let error = within("a failed list", reflector.list_and_watch(&shutdown))
            .await
            .expect_err("the list fails");
        assert_eq!(kind(&error), "Api(500)");
        assert_eq!(store.ops(), vec![]);

        fake.fail_next_watch(api_error(forbidden_status()));
        let error = within("a failed watch", reflector.list_and_watch(&shutdown))
            .await
            .expect_err("the watch fails");
        assert_eq!(kind(&error), "Api(403)");
        assert_eq!(store.ops(), vec![Op::Replace(1, "1".to_string())]);
        assert_eq!(list_versions(&fake), ["0", "0"]);
    }

    #[tokio::test(start_paused = true)]
    async fn run_reports_failed_rounds_and_backs_off_between_them() {
        let fake = fake_with(&["a"]);
        fake.fail_next_list(api_error(internal_error_status(
            "etcdserver: no leader",
        )));
        fake.fail_next_list(api_error(internal_error_status(
            "etcdserver: no leader",
        )));
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, reported.options());
        let start = Instant::now();
        let elapsed = drive(&reflector, async {
            within(
                "a watch after two failed lists",
                fake.wait_for_watch_calls(1),
            )
            .await;
            start.elapsed()
        })
        .await;
        assert_eq!(reported.kinds(), ["Api(500)", "Api(500)"]);
        assert_eq!(list_versions(&fake), ["0", "0", "0"]);
        // 800 ms and 1.6 s, each with up to 100 % jitter.
        let (low, high) = (Duration::from_millis(2400), Duration::from_millis(4800));
        assert!((low..high).contains(&elapsed), "{elapsed:?}");
    }
}

mod relist {
    use stage3_reflector::{
        ListPage, ListReply, WatchReply, too_large_resource_version_status,
    };

    use pretty_assertions::assert_eq;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn relists_from_zero_first_then_from_the_last_version_seen() {
        let fake = fake_with(&["a", "b", "c", "d"]);
        let reported = Reported::default();
        let (reflector, store) = reflector(&fake, reported.options());
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            fake.add(pod("e")).expect("named");
            fake.add(pod("f")).expect("named");
            eventually("the watch to reach 6", || {
                reflector.last_sync_resource_version() == "6"
            })
            .await;
            fake.emit_error(expired_status("too old resource version: 6 (7)"));
            within("the relist and its watch", fake.wait_for_watch_calls(2)).await;
        })
        .await;
        assert_eq!(list_versions(&fake), ["0", "6"]);
        assert_eq!(watch_versions(&fake), ["4", "6"]);
        assert_eq!(reported.kinds(), ["Expired"]);
        assert_eq!(store.replaces(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn relists_from_empty_at_once_when_the_last_version_has_expired() {
        let fake = fake_with(&["a", "b", "c", "d"]);
        let reported = Reported::default();
        let (reflector, store) = reflector(&fake, reported.options());
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            fake.fail_next_list(api_error(expired_status(
                "The resourceVersion for the provided list is too old.",
            )));
            fake.emit_error(expired_status("too old resource version: 4 (5)"));
            within("the relist and its watch", fake.wait_for_watch_calls(2)).await;
        })
        .await;
        assert_eq!(list_versions(&fake), ["0", "4", ""]);
        assert_eq!(reported.kinds(), ["Expired", "Expired"]);
        assert_eq!(
            store.ops(),
            vec![
                Op::Replace(4, "4".to_string()),
                Op::Replace(4, "4".to_string())
            ]
        );
        assert_eq!(reflector.last_sync_resource_version(), "4");
    }

    #[tokio::test(start_paused = true)]
    async fn relists_from_empty_after_too_large_resource_version_in_each_server_dialect()
     {
        let fake = FakeListerWatcher::<Pod>::new();
        let too_large_by_cause = too_large_resource_version_status(20, 10);
        let mut too_large_by_cause_message =
            too_large_resource_version_status(30, 10);
        if let Some(cause) = too_large_by_cause_message
            .details
            .as_mut()
            .and_then(|details| details.causes.as_mut())
            .and_then(|causes| causes.first_mut())
        {
            cause.reason = None;
            cause.message = Some("Too large resource version".to_string());
        }
        let mut too_large_by_message = too_large_resource_version_status(40, 10);
        too_large_by_message.details = None;

        fake.push_list_reply(ListReply::Page(ListPage::new(vec![], "20")));
        fake.fail_next_list(api_error(too_large_by_cause));
        fake.push_list_reply(ListReply::Page(ListPage::new(vec![], "30")));
        fake.fail_next_list(api_error(too_large_by_cause_message));
        fake.push_list_reply(ListReply::Page(ListPage::new(vec![], "40")));
        fake.fail_next_list(api_error(too_large_by_message));
        fake.push_list_reply(ListReply::Page(ListPage::new(vec![], "50")));
        for _ in 0..4 {
            fake.push_watch_reply(WatchReply::Items(vec![Ok(WatchEvent::Error(
                Box::new(expired_status("too old resource version")),
            ))]));
        }
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, reported.options());
        drive(&reflector, async {
            within("seven lists", fake.wait_for_list_calls(7)).await;
            eventually("the last relist to be recorded", || {
                reflector.last_sync_resource_version() == "50"
            })
            .await;
        })
        .await;
        assert_eq!(
            list_versions(&fake)[..7],
            ["0", "20", "", "30", "", "40", ""]
        );
        let too_large = reported
            .kinds()
            .iter()
            .filter(|kind| *kind == "TooLargeResourceVersion")
            .count();
        assert_eq!(too_large, 3);
    }

    #[tokio::test(start_paused = true)]
    async fn the_version_stays_unavailable_until_a_list_succeeds() {
        let fake = fake_with(&["a", "b", "c", "d"]);
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, reported.options());
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            fake.fail_next_list(api_error(expired_status("too old")));
            fake.fail_next_list(api_error(internal_error_status(
                "etcdserver: no leader",
            )));
            fake.emit_error(expired_status("too old resource version: 4 (5)"));
            within("the second watch", fake.wait_for_watch_calls(2)).await;
        })
        .await;
        // The failed list from "" leaves the version unavailable, so the next round
        // lists from "" again.
        assert_eq!(list_versions(&fake), ["0", "4", "", ""]);
        assert_eq!(reported.kinds(), ["Expired", "Expired", "Api(500)"]);
        assert_eq!(reflector.last_sync_resource_version(), "4");
    }
}

mod paging {
    use stage3_reflector::ListReply;

    use pretty_assertions::assert_eq;

    use super::*;

    fn first_pages(fake: &FakeListerWatcher<Pod>) -> Vec<(String, u32)> {
        fake.list_calls()
            .into_iter()
            .filter(|options| options.continue_token.is_empty())
            .map(|options| (options.resource_version, options.limit))
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_list_is_paged_by_500_and_joined() {
        let fake = fake_with_count(1200);
        let (reflector, store) = reflector(&fake, ReflectorOptions::default());
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
        })
        .await;
        let lists = fake.list_calls();
        assert_eq!(lists.len(), 3);
        assert_eq!(
            (lists[0].resource_version.as_str(), lists[0].limit),
            ("0", 500)
        );
        for page in &lists[1..] {
            assert_eq!(
                page.resource_version, "",
                "a continue request carries no version"
            );
            assert_eq!(page.limit, 500);
            assert!(!page.continue_token.is_empty());
        }
        assert_eq!(store.ops(), vec![Op::Replace(1200, "1200".to_string())]);
    }

    #[tokio::test(start_paused = true)]
    async fn an_explicit_page_size_is_used_for_every_list() {
        let fake = fake_with_count(10);
        let (reflector, store) =
            reflector(&fake, ReflectorOptions::default().page_size(4));
        relist_once_after_410(&reflector, &fake).await;
        assert!(fake.list_calls().iter().all(|options| options.limit == 4));
        assert_eq!(fake.list_calls().len(), 6, "two lists of three pages");
        assert_eq!(
            first_pages(&fake),
            [("0".to_string(), 4), ("10".to_string(), 4)]
        );
        assert_eq!(store.contents().len(), 10);
    }

    #[tokio::test(start_paused = true)]
    async fn a_relist_from_a_version_is_not_paged_so_the_watch_cache_can_serve_it() {
        let fake = fake_with_count(10);
        let (reflector, _store) = reflector(&fake, ReflectorOptions::default());
        relist_once_after_410(&reflector, &fake).await;
        assert_eq!(
            first_pages(&fake),
            [("0".to_string(), 500), ("10".to_string(), 0)]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_paged_first_list_keeps_later_lists_paged() {
        let fake = fake_with_count(600);
        let (reflector, _store) = reflector(&fake, ReflectorOptions::default());
        relist_once_after_410(&reflector, &fake).await;
        assert_eq!(
            first_pages(&fake),
            [("0".to_string(), 500), ("600".to_string(), 500)]
        );
        assert_eq!(fake.list_calls().len(), 4, "two lists of two pages");
    }

    #[tokio::test(start_paused = true)]
    async fn an_expired_continue_token_falls_back_to_one_full_list() {
        let fake = fake_with_count(8);
        fake.push_list_reply(ListReply::ServeThenExpireContinueTokens);
        let reported = Reported::default();
        let (reflector, store) = reflector(&fake, reported.options().page_size(4));
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
        })
        .await;
        let lists = fake.list_calls();
        assert_eq!(lists.len(), 3);
        assert_eq!(
            (lists[0].resource_version.as_str(), lists[0].limit),
            ("0", 4)
        );
        assert!(!lists[1].continue_token.is_empty());
        assert_eq!(
            lists[2],
            ListOptions {
                resource_version: "0".to_string(),
                ..ListOptions::default()
            }
        );
        assert_eq!(store.ops(), vec![Op::Replace(8, "8".to_string())]);
        assert_eq!(reported.kinds(), Vec::<String>::new());
    }
}

/// Runs `reflector` until its first watch, ends that watch with 410 Expired, and
/// stops once the relist has been followed by a second watch.
async fn relist_once_after_410<L, S>(
    reflector: &Reflector<Pod, L, S>,
    fake: &FakeListerWatcher<Pod>,
) where
    L: stage3_reflector::ListerWatcher<Pod>,
    S: stage1_store::Store<Pod> + 'static,
{
    drive(reflector, async {
        within("the first watch", fake.wait_for_watch_calls(1)).await;
        fake.emit_error(expired_status("too old resource version"));
        within("the second watch", fake.wait_for_watch_calls(2)).await;
    })
    .await;
}

mod watch_events {
    use stage3_reflector::ResourceVersionUpdater;

    use pretty_assertions::assert_eq;

    use super::*;

    /// The events of client-go's `TestReflectorWatchHandler` through a running
    /// reflector (its port, on `handle_any_watch` itself, is in `src/reflector.rs`).
    #[tokio::test(start_paused = true)]
    async fn events_are_applied_and_the_version_is_the_last_events_not_the_highest()
    {
        let fake = fake_with(&["foo", "bar"]);
        let (reflector, store) = reflector(&fake, ReflectorOptions::default());
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            fake.emit(Ok(WatchEvent::Deleted(Arc::new(pod_at("foo", "3")))));
            fake.emit(Ok(WatchEvent::Modified(Arc::new(pod_at("bar", "55")))));
            fake.emit(Ok(WatchEvent::Added(Arc::new(pod_at("baz", "32")))));
            eventually("three events applied", || store.ops().len() == 4).await;
        })
        .await;
        assert_eq!(
            store.ops()[1..],
            [
                Op::Delete("foo".to_string()),
                Op::Update("bar".to_string()),
                Op::Add("baz".to_string())
            ]
        );
        assert_eq!(
            store.contents(),
            vec![
                ("bar".to_string(), "55".to_string()),
                ("baz".to_string(), "32".to_string())
            ]
        );
        assert_eq!(reflector.last_sync_resource_version(), "32");
    }

    #[tokio::test(start_paused = true)]
    async fn an_object_of_another_type_is_skipped_and_the_watch_goes_on() {
        let fake = fake_with(&["a"]);
        let reported = Reported::default();
        let (reflector, store) = reflector(&fake, reported.options());
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            fake.emit_unexpected_type("v1/Service");
            fake.add(pod("b")).expect("named");
            eventually("the pod after the service", || store.ops().len() == 2).await;
        })
        .await;
        assert_eq!(
            store.ops(),
            vec![Op::Replace(1, "1".to_string()), Op::Add("b".to_string())]
        );
        assert_eq!(reported.kinds(), ["UnexpectedType"]);
        assert_eq!(fake.watch_calls().len(), 1, "the watch was not ended");
        assert_eq!(reflector.last_sync_resource_version(), "2");
    }

    #[tokio::test(start_paused = true)]
    async fn a_bookmark_moves_only_the_version() {
        let fake = fake_with(&["a"]);
        let (reflector, store) = reflector(&fake, ReflectorOptions::default());
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            fake.emit_bookmark("100");
            eventually("the bookmark", || {
                reflector.last_sync_resource_version() == "100"
            })
            .await;
        })
        .await;
        assert_eq!(store.ops(), vec![Op::Replace(1, "1".to_string())]);
        assert_eq!(fake.watch_calls().len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn an_error_event_ends_the_watch_with_that_error() {
        let fake = fake_with(&["a"]);
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, reported.options());
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            fake.emit_error(forbidden_status());
            within("the relist", fake.wait_for_list_calls(2)).await;
        })
        .await;
        assert_eq!(reported.kinds(), ["Api(403)"]);
        assert_eq!(list_versions(&fake), ["0", "1"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_store_error_is_logged_and_the_event_still_counts() {
        let fake = fake_with(&["a"]);
        let reported = Reported::default();
        let (reflector, store) = reflector(&fake, reported.options());
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            let mut nameless = Pod::default();
            nameless.metadata.resource_version = Some("9".to_string());
            fake.emit(Ok(WatchEvent::Added(Arc::new(nameless))));
            eventually("the version of the nameless pod", || {
                reflector.last_sync_resource_version() == "9"
            })
            .await;
        })
        .await;
        assert_eq!(store.contents().len(), 1);
        assert_eq!(reported.kinds(), Vec::<String>::new());
        assert_eq!(fake.watch_calls().len(), 1);
    }

    #[derive(Default)]
    struct Versions(parking_lot::Mutex<Vec<String>>);

    impl ResourceVersionUpdater for Versions {
        fn update_resource_version(&self, resource_version: &str) {
            self.0.lock().push(resource_version.to_string());
        }
    }

    /// Mirrors client-go's `TestReflectorResourceVersionUpdate`.
    #[tokio::test(start_paused = true)]
    async fn every_version_the_watch_reaches_is_told_to_the_updater() {
        let fake = fake_with(&[]);
        let versions = Arc::new(Versions::default());
        let options =
            ReflectorOptions::default().resource_version_updater(versions.clone());
        let (reflector, _store) = reflector(&fake, options);
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            fake.emit(Ok(WatchEvent::Added(Arc::new(pod_at("a", "10")))));
            fake.emit(Ok(WatchEvent::Modified(Arc::new(pod_at("a", "20")))));
            fake.emit_bookmark("30");
            fake.emit(Ok(WatchEvent::Deleted(Arc::new(pod_at("a", "40")))));
            eventually("four versions", || versions.0.lock().len() == 4).await;
        })
        .await;
        assert_eq!(*versions.0.lock(), ["10", "20", "30", "40"]);
    }
}

mod after_a_watch {
    use stage3_reflector::WatchReply;

    use pretty_assertions::assert_eq;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_normal_close_rewatches_from_the_last_version_without_relisting() {
        let fake = fake_with(&["a"]);
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, reported.options());
        let pause = drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            tokio::time::sleep(Duration::from_secs(2)).await;
            fake.add(pod("b")).expect("named");
            eventually("the new pod", || {
                reflector.last_sync_resource_version() == "2"
            })
            .await;
            let closed = Instant::now();
            fake.close_watches();
            within("the second watch", fake.wait_for_watch_calls(2)).await;
            closed.elapsed()
        })
        .await;
        assert_eq!(
            calls_without_timeouts(&fake),
            vec![
                list_from("0", 500),
                Call::Watch(plain_watch("1")),
                Call::Watch(plain_watch("2"))
            ]
        );
        assert_eq!(pause, Duration::ZERO, "no backoff after a normal close");
        assert_eq!(reported.kinds(), Vec::<String>::new());
    }

    #[tokio::test(start_paused = true)]
    async fn a_very_short_watch_relists_after_a_backoff() {
        let fake = fake_with(&["a"]);
        fake.push_watch_reply(WatchReply::Items(vec![]));
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, reported.options());
        let start = Instant::now();
        let elapsed = drive(&reflector, async {
            within("the second watch", fake.wait_for_watch_calls(2)).await;
            start.elapsed()
        })
        .await;
        assert_eq!(
            calls_without_timeouts(&fake),
            vec![
                list_from("0", 500),
                Call::Watch(plain_watch("1")),
                list_from("1", 0),
                Call::Watch(plain_watch("1"))
            ]
        );
        assert_eq!(reported.kinds(), ["VeryShortWatch"]);
        assert!(
            (Duration::from_millis(800)..Duration::from_millis(1600))
                .contains(&elapsed),
            "{elapsed:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_quick_close_after_an_event_is_not_a_very_short_watch() {
        let fake = fake_with(&["a", "b"]);
        fake.push_watch_reply(WatchReply::Items(vec![Ok(WatchEvent::Modified(
            Arc::new(pod_at("b", "2")),
        ))]));
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, reported.options());
        drive(&reflector, async {
            within("the second watch", fake.wait_for_watch_calls(2)).await;
        })
        .await;
        assert_eq!(list_versions(&fake), ["0"]);
        assert_eq!(watch_versions(&fake), ["2", "2"]);
        assert_eq!(reported.kinds(), Vec::<String>::new());
    }

    #[tokio::test(start_paused = true)]
    async fn a_watch_that_stays_quiet_for_a_second_is_not_very_short() {
        let fake = fake_with(&["a"]);
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, reported.options());
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            tokio::time::sleep(Duration::from_secs(1)).await;
            fake.close_watches();
            within("the second watch", fake.wait_for_watch_calls(2)).await;
        })
        .await;
        assert_eq!(list_versions(&fake), ["0"]);
        assert_eq!(reported.kinds(), Vec::<String>::new());
    }

    #[tokio::test(start_paused = true)]
    async fn a_410_relists_from_the_last_version_not_from_empty() {
        let fake = fake_with(&["a"]);
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, reported.options());
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            fake.emit_error(expired_status("too old resource version: 1 (2)"));
            within("the relist", fake.wait_for_list_calls(2)).await;
        })
        .await;
        assert_eq!(list_versions(&fake), ["0", "1"]);
        assert_eq!(reported.kinds(), ["Expired"]);
    }

    /// Mirrors client-go's `TestNoRelistOnTooManyRequests`.
    #[tokio::test(start_paused = true)]
    async fn too_many_requests_backs_off_and_rewatches_without_relisting() {
        let fake = fake_with(&["a"]);
        for _ in 0..4 {
            fake.fail_next_watch(api_error(too_many_requests_status()));
        }
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, reported.options());
        let start = Instant::now();
        let elapsed = drive(&reflector, async {
            within("the fifth watch", fake.wait_for_watch_calls(5)).await;
            start.elapsed()
        })
        .await;
        assert_eq!(list_versions(&fake), ["0"]);
        assert_eq!(watch_versions(&fake), ["1"; 5]);
        assert_eq!(reported.kinds(), ["Api(429)"; 4]);
        // 0.8 + 1.6 + 3.2 + 6.4 s, each with up to 100 % jitter.
        let (low, high) =
            (Duration::from_millis(12_000), Duration::from_millis(24_000));
        assert!((low..high).contains(&elapsed), "{elapsed:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_429_error_event_backs_off_and_rewatches_without_relisting() {
        let fake = fake_with(&["a"]);
        fake.push_watch_reply(WatchReply::Items(vec![Ok(WatchEvent::Error(
            Box::new(too_many_requests_status()),
        ))]));
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, reported.options());
        drive(&reflector, async {
            within("the second watch", fake.wait_for_watch_calls(2)).await;
        })
        .await;
        assert_eq!(list_versions(&fake), ["0"]);
        assert_eq!(reported.kinds(), ["Api(429)"]);
    }

    #[tokio::test(start_paused = true)]
    async fn connection_refused_backs_off_and_rewatches_without_relisting() {
        let fake = fake_with(&["a"]);
        fake.fail_next_watch(connection_refused());
        fake.fail_next_watch(connection_refused());
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, reported.options());
        drive(&reflector, async {
            within("the third watch", fake.wait_for_watch_calls(3)).await;
        })
        .await;
        assert_eq!(list_versions(&fake), ["0"]);
        assert_eq!(reported.kinds(), ["ConnectionRefused", "ConnectionRefused"]);
    }

    #[tokio::test(start_paused = true)]
    async fn internal_errors_rewatch_at_once_while_the_retry_window_lasts() {
        let fake = fake_with(&["a"]);
        let internal_error = || {
            WatchReply::Items(vec![Ok(WatchEvent::Error(Box::new(
                internal_error_status("etcdserver: no leader"),
            )))])
        };
        for _ in 0..3 {
            fake.push_watch_reply(internal_error());
        }
        let reported = Reported::default();
        let options = reported
            .options()
            .max_internal_error_retry_duration(Duration::from_secs(30));
        let (reflector, _store) = reflector(&fake, options);
        let start = Instant::now();
        drive(&reflector, async {
            within("the fourth watch", fake.wait_for_watch_calls(4)).await;
            assert_eq!(start.elapsed(), Duration::ZERO, "retried without backoff");
            // 40 s after the first error the window (30 s) has passed: relist.
            tokio::time::sleep(Duration::from_secs(40)).await;
            fake.emit_error(internal_error_status("etcdserver: no leader"));
            within("the relist", fake.wait_for_list_calls(2)).await;
        })
        .await;
        assert_eq!(list_versions(&fake), ["0", "1"]);
        assert_eq!(reported.kinds(), ["Api(500)"; 4]);
    }

    #[tokio::test(start_paused = true)]
    async fn internal_errors_relist_when_retries_are_off() {
        let fake = fake_with(&["a"]);
        fake.push_watch_reply(WatchReply::Items(vec![Ok(WatchEvent::Error(
            Box::new(internal_error_status("etcdserver: no leader")),
        ))]));
        let (reflector, _store) = reflector(&fake, ReflectorOptions::default());
        drive(&reflector, async {
            within("the relist", fake.wait_for_list_calls(2)).await;
        })
        .await;
        assert_eq!(list_versions(&fake), ["0", "1"]);
    }
}

mod streaming_list {
    use stage3_reflector::{
        ListMode, ResourceVersionMatch, WatchOptions, WatchReply,
    };

    use pretty_assertions::assert_eq;

    use super::*;

    fn streaming_from(resource_version: &str) -> Call {
        Call::Watch(WatchOptions {
            resource_version: resource_version.to_string(),
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            allow_watch_bookmarks: true,
            send_initial_events: true,
            ..WatchOptions::default()
        })
    }

    fn streaming(reported: &Reported) -> ReflectorOptions {
        reported.options().list_mode(ListMode::WatchList)
    }

    #[tokio::test(start_paused = true)]
    async fn completes_at_the_end_bookmark_and_keeps_watching_on_the_same_stream() {
        let fake = fake_with(&["foo"]);
        let reported = Reported::default();
        let (reflector, store) = reflector(&fake, streaming(&reported));
        drive(&reflector, async {
            within("the streaming list", fake.wait_for_watch_calls(1)).await;
            eventually("the initial events", || store.replaces() == 1).await;
            fake.add(pod("bar")).expect("named");
            eventually("the new pod", || store.ops().len() == 2).await;
        })
        .await;
        assert_eq!(calls_without_timeouts(&fake), vec![streaming_from("")]);
        assert_eq!(
            store.ops(),
            vec![Op::Replace(1, "1".to_string()), Op::Add("bar".to_string())]
        );
        assert_eq!(reflector.last_sync_resource_version(), "2");
        assert_eq!(reported.kinds(), Vec::<String>::new());
    }

    #[tokio::test(start_paused = true)]
    async fn falls_back_to_list_and_watch_when_the_stream_fails() {
        let fake = fake_with(&["foo"]);
        fake.fail_next_watch(api_error(internal_error_status(
            "watchlist not supported",
        )));
        let reported = Reported::default();
        let (reflector, store) = reflector(&fake, streaming(&reported));
        drive(&reflector, async {
            within("the plain watch", fake.wait_for_watch_calls(2)).await;
        })
        .await;
        assert_eq!(
            calls_without_timeouts(&fake),
            vec![
                streaming_from(""),
                list_from("0", 500),
                Call::Watch(plain_watch("1"))
            ]
        );
        assert_eq!(store.ops(), vec![Op::Replace(1, "1".to_string())]);
        assert_eq!(reported.kinds(), ["Api(500)"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_very_short_stream_falls_back_to_list_and_watch() {
        let fake = fake_with(&["foo"]);
        fake.push_watch_reply(WatchReply::Items(vec![]));
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, streaming(&reported));
        drive(&reflector, async {
            within("the plain watch", fake.wait_for_watch_calls(2)).await;
        })
        .await;
        assert_eq!(list_versions(&fake), ["0"]);
        assert_eq!(reported.kinds(), ["VeryShortWatch"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_closed_before_its_end_bookmark_starts_over_and_leaves_the_store_alone()
     {
        let fake = fake_with(&["foo"]);
        fake.push_watch_reply(WatchReply::Items(vec![Ok(WatchEvent::Added(
            Arc::new(pod_at("stale", "1")),
        ))]));
        let reported = Reported::default();
        let (reflector, store) = reflector(&fake, streaming(&reported));
        drive(&reflector, async {
            within("the second stream", fake.wait_for_watch_calls(2)).await;
            eventually("the initial events", || store.replaces() == 1).await;
        })
        .await;
        assert_eq!(
            calls_without_timeouts(&fake),
            vec![streaming_from(""), streaming_from("")]
        );
        assert_eq!(store.ops(), vec![Op::Replace(1, "1".to_string())]);
        assert_eq!(store.contents(), vec![("foo".to_string(), "1".to_string())]);
    }

    #[tokio::test(start_paused = true)]
    async fn an_expired_version_restarts_the_stream_from_empty() {
        let fake = fake_with(&["foo"]);
        let reported = Reported::default();
        let (reflector, store) = reflector(&fake, streaming(&reported));
        drive(&reflector, async {
            within("the streaming list", fake.wait_for_watch_calls(1)).await;
            eventually("the initial events", || store.replaces() == 1).await;
            fake.fail_next_watch(api_error(expired_status(
                "too old resource version: 1 (2)",
            )));
            fake.emit_error(expired_status("too old resource version: 1 (2)"));
            within("the third stream", fake.wait_for_watch_calls(3)).await;
            eventually("the second initial events", || store.replaces() == 2).await;
        })
        .await;
        assert_eq!(
            calls_without_timeouts(&fake),
            vec![streaming_from(""), streaming_from("1"), streaming_from("")]
        );
        assert_eq!(fake.list_calls(), vec![]);
        assert_eq!(reported.kinds(), ["Expired", "Expired"]);
    }

    #[tokio::test(start_paused = true)]
    async fn too_many_requests_backs_off_and_streams_again_without_listing() {
        let fake = fake_with(&["foo"]);
        fake.fail_next_watch(api_error(too_many_requests_status()));
        let reported = Reported::default();
        let (reflector, store) = reflector(&fake, streaming(&reported));
        let start = Instant::now();
        let elapsed = drive(&reflector, async {
            within("the second stream", fake.wait_for_watch_calls(2)).await;
            eventually("the initial events", || store.replaces() == 1).await;
            start.elapsed()
        })
        .await;
        assert_eq!(
            calls_without_timeouts(&fake),
            vec![streaming_from(""), streaming_from("")]
        );
        assert_eq!(reported.kinds(), ["Api(429)"]);
        assert!(elapsed >= Duration::from_millis(800), "{elapsed:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_during_the_stream_leaves_no_watch_behind() {
        let fake = fake_with(&["a"]);
        let options = ReflectorOptions::default().list_mode(ListMode::WatchList);
        let (reflector, _store) = reflector(&fake, options);
        drive(&reflector, async {
            within("the stream", fake.wait_for_watch_calls(1)).await;
        })
        .await;
        assert_eq!(fake.open_watches(), 0);
    }
}

mod backoff {
    use pretty_assertions::assert_eq;

    use super::*;

    async fn elapsed_after_connection_refused(failures: usize) -> Duration {
        let fake = fake_with(&["a"]);
        for _ in 0..failures {
            fake.fail_next_watch(connection_refused());
        }
        let (reflector, _store) = reflector(&fake, ReflectorOptions::default());
        let shutdown = CancellationToken::new();
        let start = Instant::now();
        let scenario = async {
            fake.wait_for_watch_calls(failures + 1).await;
            let elapsed = start.elapsed();
            shutdown.cancel();
            elapsed
        };
        let (result, elapsed) = within("the watch after the failures", async {
            tokio::join!(reflector.list_and_watch(&shutdown), scenario)
        })
        .await;
        result.expect("connection refused is retried, not returned");
        assert_eq!(list_versions(&fake), ["0"]);
        elapsed
    }

    /// Mirrors the first case of client-go's
    /// `TestReflectorListAndWatchInitConnBackoff`.
    #[tokio::test(start_paused = true)]
    async fn five_connection_refused_errors_back_off_exponentially() {
        let elapsed = elapsed_after_connection_refused(5).await;
        // 0.8 + 1.6 + 3.2 + 6.4 + 12.8 = 24.8 s, each with up to 100 % jitter.
        let (low, high) =
            (Duration::from_millis(24_800), Duration::from_millis(49_600));
        assert!((low..high).contains(&elapsed), "{elapsed:?}");
    }

    /// Mirrors the second case of client-go's
    /// `TestReflectorListAndWatchInitConnBackoff`.
    #[tokio::test(start_paused = true)]
    async fn forty_connection_refused_errors_flatten_at_the_cap() {
        let elapsed = elapsed_after_connection_refused(40).await;
        // 50.4 s to reach the cap, then 34 × 30 s; each with up to 100 % jitter.
        let (low, high) = (
            Duration::from_millis(1_070_400),
            Duration::from_millis(2_140_800),
        );
        assert!((low..high).contains(&elapsed), "{elapsed:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn the_backoff_starts_over_after_two_healthy_minutes() {
        let fake = fake_with(&["a"]);
        for _ in 0..3 {
            fake.fail_next_list(api_error(internal_error_status(
                "etcdserver: no leader",
            )));
        }
        let (reflector, _store) = reflector(&fake, ReflectorOptions::default());
        let pause = drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            tokio::time::sleep(Duration::from_secs(180)).await;
            let start = Instant::now();
            fake.emit_error(expired_status("too old resource version"));
            within("the relist", fake.wait_for_list_calls(5)).await;
            start.elapsed()
        })
        .await;
        // The first step is 0.8 s plus up to as much jitter; without the reset
        // this would be the fourth step, 6.4 s or more. The paused clock may add
        // a tick to a delay jittered close to 1.6 s, so the bound is the third
        // step's shortest delay, 3.2 s.
        assert!(
            (Duration::from_millis(800)..Duration::from_millis(3200))
                .contains(&pause),
            "{pause:?}"
        );
    }
}

mod resync {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use pretty_assertions::assert_eq;

    use super::*;

    fn recording_reflector(
        fake: &FakeListerWatcher<Pod>,
        store: RecordingStore,
        options: ReflectorOptions,
    ) -> (TestReflector, Arc<RecordingStore>) {
        let store = Arc::new(store);
        (
            Reflector::new(fake.clone(), Arc::clone(&store), options),
            store,
        )
    }

    /// Mirrors client-go's `TestReflectorResync`.
    #[tokio::test(start_paused = true)]
    async fn the_store_is_resynced_every_period_until_a_resync_fails() {
        let fake = fake_with(&["a"]);
        let reported = Reported::default();
        let options = reported.options().resync_period(Duration::from_secs(30));
        let (reflector, store) =
            recording_reflector(&fake, RecordingStore::failing_resync(2), options);
        let start = Instant::now();
        let (resyncs_at_relist, elapsed) = drive(&reflector, async {
            within("the relist", fake.wait_for_list_calls(2)).await;
            (store.resyncs(), start.elapsed())
        })
        .await;
        assert_eq!(resyncs_at_relist, 2);
        assert_eq!(reported.kinds(), ["Resync"]);
        // Two periods, then the backoff before the relist.
        assert!(
            (Duration::from_millis(60_800)..Duration::from_millis(61_600))
                .contains(&elapsed),
            "{elapsed:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn should_resync_is_asked_every_period_and_false_skips_the_resync() {
        let fake = fake_with(&["a"]);
        let asked = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&asked);
        let options = ReflectorOptions::default()
            .resync_period(Duration::from_secs(1))
            .should_resync(move || {
                counter.fetch_add(1, Ordering::SeqCst);
                false
            });
        let (reflector, store) =
            recording_reflector(&fake, RecordingStore::default(), options);
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            tokio::time::sleep(Duration::from_millis(3500)).await;
        })
        .await;
        assert_eq!(asked.load(Ordering::SeqCst), 3);
        assert_eq!(store.resyncs(), 0);
        assert_eq!(fake.watch_calls().len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_zero_period_never_resyncs() {
        let fake = fake_with(&["a"]);
        let (reflector, store) = recording_reflector(
            &fake,
            RecordingStore::default(),
            ReflectorOptions::default(),
        );
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            tokio::time::sleep(Duration::from_secs(600)).await;
        })
        .await;
        assert_eq!(store.resyncs(), 0);
    }
}

mod shutdown {
    use stage3_reflector::Phase;

    use pretty_assertions::assert_eq;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn run_returns_on_cancel_and_leaves_no_watch_or_task_behind() {
        let fake = fake_with(&["a"]);
        let options =
            ReflectorOptions::default().resync_period(Duration::from_secs(1));
        let (reflector, store) = reflector(&fake, options);
        drive(&reflector, async {
            within("the first watch", fake.wait_for_watch_calls(1)).await;
            tokio::time::sleep(Duration::from_millis(2500)).await;
            assert_eq!(fake.open_watches(), 1);
        })
        .await;
        assert_eq!(reflector.phase(), Phase::Stopped);
        assert_eq!(fake.open_watches(), 0, "the watch was stopped");
        // Only the test and the reflector hold the store: the resync task is gone.
        assert_eq!(Arc::strong_count(&store), 2);
        let resyncs = store.resyncs();
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(store.resyncs(), resyncs, "nothing resyncs after shutdown");
    }

    #[tokio::test(start_paused = true)]
    async fn cancelling_before_run_makes_no_calls() {
        let fake = fake_with(&["a"]);
        let (reflector, _store) = reflector(&fake, ReflectorOptions::default());
        let shutdown = CancellationToken::new();
        shutdown.cancel();
        within("run to return", reflector.run(shutdown)).await;
        assert_eq!(fake.calls(), vec![]);
        assert_eq!(reflector.phase(), Phase::Stopped);
    }

    #[tokio::test(start_paused = true)]
    async fn cancelling_during_a_backoff_returns_at_once() {
        let fake = fake_with(&["a"]);
        fake.fail_next_list(api_error(internal_error_status(
            "etcdserver: no leader",
        )));
        let (reflector, _store) = reflector(&fake, ReflectorOptions::default());
        let shutdown = CancellationToken::new();
        let scenario = async {
            eventually("the backoff", || reflector.phase() == Phase::BackingOff)
                .await;
            let cancelled = Instant::now();
            shutdown.cancel();
            cancelled
        };
        let ((), cancelled) = within("run to return", async {
            tokio::join!(reflector.run(shutdown.clone()), scenario)
        })
        .await;
        assert_eq!(cancelled.elapsed(), Duration::ZERO);
        assert_eq!(fake.calls().len(), 1);
    }
}

/// Ports of client-go's `tools/cache/reflector_test.go` that go through the public
/// API, each named after its Go test. The ports of the tests that call
/// `handleWatch`, `watch` or `resyncChan` directly are unit tests in
/// `src/reflector.rs`. Tests above that mirror a Go test under another name say
/// so in their doc line.
///
/// Not ported, one line each:
/// - `TestGetExpectedGVKFromObject`, `TestReflectorSetExpectedType`: the type is
///   the static `T`; there is no runtime expected type or GVK to set or check.
/// - `TestGetTypeDescriptionFromObject`: only its typed case applies (a unit test
///   in `src/reflector.rs`); the unstructured cases need a runtime type.
/// - `TestReflectorListExtract`: it checks that Go's GC frees the pods of a list
///   page; here objects are `Arc`s, freed when the last one is dropped.
/// - `Benchmark*`: benchmarks; `BenchmarkReflectorList` is
///   `benches/reflector_list.rs`.
mod client_go {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use k8s_openapi::api::core::v1::Pod;
    use stage1_store::meta_namespace_key_func;
    use stage2_deltafifo::{DeltaFifo, DeltaFifoOptions};
    use stage3_reflector::{
        ListMode, ListPage, ListReply, ListerWatcher, Phase, ResourceVersionMatch,
        Watch, WatchOptions, WatchReply, too_large_resource_version_status,
    };

    use pretty_assertions::assert_eq;

    use super::*;

    fn pods(names_and_versions: &[(&str, &str)]) -> Vec<Arc<Pod>> {
        names_and_versions
            .iter()
            .map(|(name, rv)| Arc::new(pod_at(name, rv)))
            .collect()
    }

    /// `pod-0` … `pod-{n-1}`, at versions 0 … n-1, as the Go tests make them.
    fn numbered_pods(n: usize) -> Vec<Arc<Pod>> {
        (0..n)
            .map(|i| Arc::new(pod_at(&format!("pod-{i}"), &i.to_string())))
            .collect()
    }

    fn page(items: Vec<Arc<Pod>>, resource_version: &str) -> ListReply<Pod> {
        ListReply::Page(ListPage::new(items, resource_version))
    }

    /// An error that is none of the kinds the reflector treats specially.
    fn plain_error(message: &str) -> Error {
        Error::Transport {
            source: Box::new(std::io::Error::other(message.to_string())),
        }
    }

    /// Runs `list_and_watch` next to `scenario`, then cancels it; returns what
    /// `list_and_watch` returned.
    async fn list_and_watch_during<L, S>(
        reflector: &Reflector<Pod, L, S>,
        scenario: impl std::future::Future<Output = ()>,
    ) -> Result<(), Error>
    where
        L: ListerWatcher<Pod>,
        S: stage1_store::Store<Pod> + 'static,
    {
        let shutdown = CancellationToken::new();
        let scenario = async {
            scenario.await;
            shutdown.cancel();
        };
        let (result, ()) = within("list_and_watch to return", async {
            tokio::join!(reflector.list_and_watch(&shutdown), scenario)
        })
        .await;
        result
    }

    /// Mirrors client-go's `TestCloseWatchChannelOnError`: an `ERROR` event ends
    /// the round, and the reflector stops the watch it was reading.
    #[tokio::test(start_paused = true)]
    async fn test_close_watch_channel_on_error() {
        let fake = fake_with(&["a"]);
        let (reflector, _store) = reflector(&fake, ReflectorOptions::default());
        let shutdown = CancellationToken::new();
        let scenario = async {
            within("the watch", fake.wait_for_watch_calls(1)).await;
            fake.emit_error(forbidden_status());
        };
        let (result, ()) = within("list_and_watch to return", async {
            tokio::join!(reflector.list_and_watch(&shutdown), scenario)
        })
        .await;
        result.expect("an ERROR event ends the round, so the caller relists");
        assert_eq!(fake.open_watches(), 0, "the watch was stopped");
        assert!(!shutdown.is_cancelled());
    }

    /// Mirrors client-go's `TestRunUntil`: stopping `run` right after an event
    /// stops the open watch, and `run` returns.
    #[tokio::test(start_paused = true)]
    async fn test_run_until() {
        let fake = fake_with(&["a"]);
        let (reflector, _store) = reflector(&fake, ReflectorOptions::default());
        let shutdown = CancellationToken::new();
        let scenario = async {
            within("the watch", fake.wait_for_watch_calls(1)).await;
            fake.add(pod("bar")).expect("named");
            shutdown.cancel();
        };
        within("run to return", async {
            tokio::join!(reflector.run(shutdown.clone()), scenario)
        })
        .await;
        assert_eq!(fake.open_watches(), 0, "the watch was stopped");
        assert_eq!(reflector.phase(), Phase::Stopped);
    }

    type FifoReflector = Reflector<Pod, FakeListerWatcher<Pod>, DeltaFifo<Pod>>;

    fn fifo_reflector(
        fake: &FakeListerWatcher<Pod>,
        options: ReflectorOptions,
        fifo_options: DeltaFifoOptions<Pod>,
    ) -> (FifoReflector, Arc<DeltaFifo<Pod>>) {
        let fifo = Arc::new(DeltaFifo::new(fifo_options));
        (
            Reflector::new(fake.clone(), Arc::clone(&fifo), options),
            fifo,
        )
    }

    fn fifo_options() -> DeltaFifoOptions<Pod> {
        DeltaFifoOptions::new(Arc::new(meta_namespace_key_func::<Pod>))
    }

    /// Pops `count` keys, each as its newest object's `(name, resource version)`.
    async fn pop_newest(
        fifo: &DeltaFifo<Pod>,
        count: usize,
    ) -> Vec<(String, String)> {
        let mut popped = Vec::new();
        for _ in 0..count {
            let newest = within(
                "a key in the queue",
                fifo.pop(|deltas, _| {
                    Ok::<_, ()>(deltas.newest().and_then(|d| d.object()).cloned())
                }),
            )
            .await
            .expect("the queue is open")
            .expect("a delta with an object");
            popped.push((
                newest.metadata.name.clone().unwrap_or_default(),
                newest.metadata.resource_version.clone().unwrap_or_default(),
            ));
        }
        popped
    }

    fn expected_store() -> Vec<(String, String)> {
        [
            ("foo", "2"),
            ("bar", "3"),
            ("baz", "4"),
            ("qux", "5"),
            ("zoo", "6"),
        ]
        .iter()
        .map(|(name, rv)| (name.to_string(), rv.to_string()))
        .collect()
    }

    /// The changes of both `TestReflectorListAndWatch` cases, after `foo` at 1.
    fn change_foo_then_add_four(fake: &FakeListerWatcher<Pod>) {
        fake.modify(pod("foo")).expect("named");
        for name in ["bar", "baz", "qux", "zoo"] {
            fake.add(pod(name)).expect("named");
        }
    }

    /// Mirrors the "UseWatchList disabled" case of client-go's
    /// `TestReflectorListAndWatch`: a list from `"0"` in pages of 500, one
    /// watch from the list's version, and every event in the queue.
    #[tokio::test(start_paused = true)]
    async fn test_reflector_list_and_watch_use_watch_list_disabled() {
        let fake = fake_with(&["foo"]);
        let (reflector, fifo) =
            fifo_reflector(&fake, ReflectorOptions::default(), fifo_options());
        let popped = list_and_watch_during(&reflector, async {
            within("the watch", fake.wait_for_watch_calls(1)).await;
            change_foo_then_add_four(&fake);
            eventually("the five changes", || {
                reflector.last_sync_resource_version() == "6"
            })
            .await;
            // The five keys, `foo` deduplicated to its newest object.
            let popped = pop_newest(&fifo, 5).await;
            assert_eq!(popped, expected_store());
        })
        .await;
        popped.expect("no error on shutdown");
        assert_eq!(
            calls_without_timeouts(&fake),
            vec![list_from("0", 500), Call::Watch(plain_watch("1"))]
        );
    }

    /// Mirrors the "UseWatchList enabled" case of client-go's
    /// `TestReflectorListAndWatch`: one watch that streams the initial list and
    /// goes on with the changes; no list.
    #[tokio::test(start_paused = true)]
    async fn test_reflector_list_and_watch_use_watch_list_enabled() {
        let fake = fake_with(&["foo"]);
        let options = ReflectorOptions::default().list_mode(ListMode::WatchList);
        let (reflector, fifo) = fifo_reflector(&fake, options, fifo_options());
        let result = list_and_watch_during(&reflector, async {
            within("the streaming list", fake.wait_for_watch_calls(1)).await;
            change_foo_then_add_four(&fake);
            eventually("the five changes", || {
                reflector.last_sync_resource_version() == "6"
            })
            .await;
            let popped = pop_newest(&fifo, 5).await;
            assert_eq!(popped, expected_store());
        })
        .await;
        result.expect("no error on shutdown");
        assert_eq!(
            calls_without_timeouts(&fake),
            vec![Call::Watch(WatchOptions {
                resource_version: String::new(),
                resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
                allow_watch_bookmarks: true,
                send_initial_events: true,
                ..WatchOptions::default()
            })]
        );
    }

    /// One round of `TestReflectorListAndWatchWithErrors`: what the list
    /// returns, the events of the watch, and what the watch call returns
    /// instead.
    struct Round {
        list: Result<(Vec<Arc<Pod>>, &'static str), &'static str>,
        events: Vec<WatchEvent<Pod>>,
        watch_error: Option<&'static str>,
    }

    /// Mirrors client-go's `TestReflectorListAndWatchWithErrors`: six rounds of
    /// `list_and_watch`, each with a new reflector over one shared store; before
    /// each list, the store holds what the previous rounds left, and a failed
    /// list or watch is returned to the caller.
    #[tokio::test(start_paused = true)]
    async fn test_reflector_list_and_watch_with_errors() {
        let added = |name, rv| WatchEvent::Added(Arc::new(pod_at(name, rv)));
        let rounds = vec![
            Round {
                list: Ok((vec![], "1")),
                events: vec![added("foo", "2"), added("bar", "3")],
                watch_error: None,
            },
            Round {
                list: Ok((pods(&[("foo", "2"), ("bar", "3")]), "3")),
                events: vec![
                    WatchEvent::Deleted(Arc::new(pod_at("foo", "4"))),
                    added("qux", "5"),
                ],
                watch_error: None,
            },
            Round {
                list: Err("a list error"),
                events: vec![],
                watch_error: None,
            },
            Round {
                list: Ok((pods(&[("bar", "3"), ("qux", "5")]), "5")),
                events: vec![],
                watch_error: Some("a watch error"),
            },
            Round {
                list: Ok((pods(&[("bar", "3"), ("qux", "5")]), "5")),
                events: vec![added("baz", "6")],
                watch_error: None,
            },
            Round {
                list: Ok((pods(&[("bar", "3"), ("qux", "5"), ("baz", "6")]), "6")),
                events: vec![],
                watch_error: None,
            },
        ];
        let store = Arc::new(RecordingStore::default());
        for (line, round) in rounds.into_iter().enumerate() {
            let fake = FakeListerWatcher::<Pod>::new();
            let mut last_version = String::new();
            let failure = round.list.as_ref().err().copied().or(round.watch_error);
            match round.list {
                Ok((items, rv)) => {
                    let mut expected: Vec<_> = items
                        .iter()
                        .map(|p| {
                            (
                                p.metadata.name.clone().unwrap_or_default(),
                                p.metadata
                                    .resource_version
                                    .clone()
                                    .unwrap_or_default(),
                            )
                        })
                        .collect();
                    expected.sort();
                    assert_eq!(store.contents(), expected, "round {line}");
                    last_version = rv.to_string();
                    fake.push_list_reply(page(items, rv));
                }
                Err(message) => fake.fail_next_list(plain_error(message)),
            }
            if let Some(last) = round.events.last().and_then(|e| e.object()) {
                last_version =
                    last.metadata.resource_version.clone().unwrap_or_default();
            }
            match round.watch_error {
                Some(message) => fake.fail_next_watch(plain_error(message)),
                None => {
                    let items = round.events.into_iter().map(Ok).collect();
                    fake.push_watch_reply(WatchReply::ItemsThenIdle(items));
                    fake.fail_next_watch(plain_error("second watch"));
                }
            }
            let reflector = Reflector::new(
                fake.clone(),
                Arc::clone(&store),
                ReflectorOptions::default(),
            );
            let result = list_and_watch_during(&reflector, async {
                if failure.is_none() {
                    eventually("the round's events", || {
                        reflector.last_sync_resource_version() == last_version
                    })
                    .await;
                }
            })
            .await;
            match failure {
                Some(message) => {
                    let error = result.expect_err("the error reaches the caller");
                    assert!(
                        error.to_string().contains(message),
                        "round {line}: {error}"
                    );
                }
                None => result.expect("no error on shutdown"),
            }
        }
        assert_eq!(
            store.contents(),
            vec![
                ("bar".to_string(), "3".to_string()),
                ("baz".to_string(), "6".to_string()),
                ("qux".to_string(), "5".to_string()),
            ]
        );
    }

    /// Mirrors client-go's `TestBackoffOnTooManyRequests`: a 429 when opening the
    /// watch and a 429 `ERROR` event each back off once and watch again; a
    /// watch that then ends at once (very short) ends the round.
    #[tokio::test(start_paused = true)]
    async fn test_backoff_on_too_many_requests() {
        let fake = fake_with(&["a"]);
        fake.fail_next_watch(api_error(too_many_requests_status()));
        fake.push_watch_reply(WatchReply::Items(vec![Ok(WatchEvent::Error(
            Box::new(too_many_requests_status()),
        ))]));
        fake.push_watch_reply(WatchReply::Items(vec![]));
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, reported.options());
        let start = Instant::now();
        within(
            "list_and_watch to return",
            reflector.list_and_watch(&CancellationToken::new()),
        )
        .await
        .expect("the round ends without an error");
        assert_eq!(reported.kinds(), ["Api(429)", "Api(429)", "VeryShortWatch"]);
        assert_eq!(list_versions(&fake), ["0"]);
        assert_eq!(watch_versions(&fake), ["1", "1", "1"]);
        // Two backoffs: 0.8 s and 1.6 s, each with up to 100 % jitter.
        let elapsed = start.elapsed();
        let (low, high) = (Duration::from_millis(2400), Duration::from_millis(4800));
        assert!((low..high).contains(&elapsed), "{elapsed:?}");
    }

    /// The fake, with every watch call taking one second, and a minute more on
    /// call number `rewind_at`: client-go's `TestRetryInternalError` steps its
    /// fake clock the same way.
    struct SlowWatches {
        fake: FakeListerWatcher<Pod>,
        calls: AtomicUsize,
        rewind_at: usize,
    }

    impl ListerWatcher<Pod> for SlowWatches {
        async fn list(&self, options: ListOptions) -> Result<ListPage<Pod>, Error> {
            self.fake.list(options).await
        }

        async fn watch(&self, options: WatchOptions) -> Result<Watch<Pod>, Error> {
            let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
            if call == self.rewind_at {
                tokio::time::sleep(Duration::from_secs(60)).await;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
            self.fake.watch(options).await
        }
    }

    /// Mirrors client-go's `TestRetryInternalError`: every watch ends with an
    /// internal error one second after it opened. With retries off the round
    /// ends at once; with 30 s of retries it watches again 31 times; a minute's
    /// gap at the tenth watch starts a new window, so 40 times.
    #[tokio::test(start_paused = true)]
    async fn test_retry_internal_error() {
        // (max retry duration, the watch call that is a minute late, retries)
        let cases = [
            (Duration::ZERO, 0, 0),
            (Duration::from_secs(30), 0, 31),
            (Duration::from_secs(30), 10, 40),
        ];
        for (max_internal_error_retry_duration, rewind_at, want_retries) in cases {
            let fake = fake_with(&["a"]);
            for _ in 0..50 {
                fake.push_watch_reply(WatchReply::Items(vec![Ok(
                    WatchEvent::Error(Box::new(internal_error_status(
                        "etcdserver: no leader",
                    ))),
                )]));
            }
            let slow = SlowWatches {
                fake: fake.clone(),
                calls: AtomicUsize::new(0),
                rewind_at,
            };
            let options = ReflectorOptions::default()
                .max_internal_error_retry_duration(
                    max_internal_error_retry_duration,
                );
            let reflector =
                Reflector::new(slow, Arc::new(RecordingStore::default()), options);
            within(
                "list_and_watch to return",
                reflector.list_and_watch(&CancellationToken::new()),
            )
            .await
            .expect("the round ends in a relist, not an error");
            assert_eq!(
                fake.watch_calls().len() - 1,
                want_retries,
                "window {max_internal_error_retry_duration:?}, rewind at {rewind_at}"
            );
        }
    }

    /// Mirrors client-go's `TestReflectorWatchListPageSize`: with a page size of
    /// 4, a list from a version is paged too. (Go sets the version to 10
    /// directly; here a first list brings the reflector there.)
    #[tokio::test(start_paused = true)]
    async fn test_reflector_watch_list_page_size() {
        let fake = FakeListerWatcher::<Pod>::new();
        let all = numbered_pods(10);
        fake.push_list_reply(page(vec![], "10"));
        fake.push_list_reply(ListReply::Page(
            ListPage::new(all[0..4].to_vec(), "10").with_continue("C1"),
        ));
        fake.push_list_reply(ListReply::Page(
            ListPage::new(all[4..8].to_vec(), "10").with_continue("C2"),
        ));
        fake.push_list_reply(page(all[8..10].to_vec(), "10"));
        let (reflector, store) =
            reflector(&fake, ReflectorOptions::default().page_size(4));
        let shutdown = CancellationToken::new();
        within("the first list", reflector.list(&shutdown))
            .await
            .expect("listed");
        within("the list from 10", reflector.list(&shutdown))
            .await
            .expect("listed");
        assert_eq!(store.contents().len(), 10);
        let calls = fake.list_calls();
        assert!(calls.iter().all(|call| call.limit == 4), "{calls:?}");
        let continues: Vec<_> = calls
            .iter()
            .map(|call| call.continue_token.as_str())
            .collect();
        assert_eq!(continues, ["", "", "C1", "C2"]);
        assert_eq!(calls[1].resource_version, "10");
    }

    /// Mirrors client-go's `TestReflectorNotPaginatingNotConsistentReads`: a list
    /// from a version is not paged, so the watch cache can serve it.
    #[tokio::test(start_paused = true)]
    async fn test_reflector_not_paginating_not_consistent_reads() {
        let fake = FakeListerWatcher::<Pod>::new();
        fake.push_list_reply(page(vec![], "10"));
        fake.push_list_reply(page(numbered_pods(10), "10"));
        let (reflector, store) = reflector(&fake, ReflectorOptions::default());
        let shutdown = CancellationToken::new();
        within("the first list", reflector.list(&shutdown))
            .await
            .expect("listed");
        within("the list from 10", reflector.list(&shutdown))
            .await
            .expect("listed");
        assert_eq!(store.contents().len(), 10);
        assert_eq!(
            fake.list_calls()[1],
            ListOptions {
                resource_version: "10".to_string(),
                ..ListOptions::default()
            }
        );
    }

    /// Mirrors client-go's
    /// `TestReflectorPaginatingNonConsistentReadsIfWatchCacheDisabled`: when the
    /// list from `"0"` came back in pages (the server has no watch cache), later
    /// lists from a version keep the default page size.
    #[tokio::test(start_paused = true)]
    async fn test_reflector_paginating_non_consistent_reads_if_watch_cache_disabled()
    {
        let fake = FakeListerWatcher::<Pod>::new();
        let all = numbered_pods(10);
        for _ in 0..2 {
            fake.push_list_reply(ListReply::Page(
                ListPage::new(all[0..4].to_vec(), "10").with_continue("C1"),
            ));
            fake.push_list_reply(ListReply::Page(
                ListPage::new(all[4..8].to_vec(), "10").with_continue("C2"),
            ));
            fake.push_list_reply(page(all[8..10].to_vec(), "10"));
        }
        let (reflector, store) = reflector(&fake, ReflectorOptions::default());
        let shutdown = CancellationToken::new();
        for _ in 0..2 {
            within("a list", reflector.list(&shutdown))
                .await
                .expect("listed");
            assert_eq!(store.contents().len(), 10);
        }
        let calls = fake.list_calls();
        assert!(calls.iter().all(|call| call.limit == 500), "{calls:?}");
        assert_eq!(list_versions(&fake), ["0", "", "", "10", "", ""]);
    }

    /// Mirrors client-go's `TestReflectorResyncWithResourceVersion`: the first
    /// list asks for `"0"`, a relist for the last version seen, so the reflector
    /// never goes back in time.
    #[tokio::test(start_paused = true)]
    async fn test_reflector_resync_with_resource_version() {
        let fake = FakeListerWatcher::<Pod>::new();
        let all = numbered_pods(8);
        fake.push_list_reply(page(all[0..4].to_vec(), "10"));
        fake.push_list_reply(page(all.clone(), "11"));
        let (reflector, store) = reflector(&fake, ReflectorOptions::default());
        let shutdown = CancellationToken::new();
        within("the first list", reflector.list(&shutdown))
            .await
            .expect("listed");
        assert_eq!(store.contents().len(), 4);
        within("the relist", reflector.list(&shutdown))
            .await
            .expect("listed");
        assert_eq!(store.contents().len(), 8);
        assert_eq!(list_versions(&fake), ["0", "10"]);
    }

    /// Mirrors client-go's `TestReflectorExpiredExactResourceVersion`: when the
    /// server has compacted the version a relist asks for (410), the reflector
    /// lists again at once from `""`.
    #[tokio::test(start_paused = true)]
    async fn test_reflector_expired_exact_resource_version() {
        let fake = FakeListerWatcher::<Pod>::new();
        let all = numbered_pods(8);
        fake.push_list_reply(page(all[0..4].to_vec(), "10"));
        fake.fail_next_list(api_error(expired_status(
            "The resourceVersion for the provided watch is too old.",
        )));
        fake.push_list_reply(page(all.clone(), "11"));
        let (reflector, store) = reflector(&fake, ReflectorOptions::default());
        let shutdown = CancellationToken::new();
        within("the first list", reflector.list(&shutdown))
            .await
            .expect("listed");
        assert_eq!(store.contents().len(), 4);
        within("the relist", reflector.list(&shutdown))
            .await
            .expect("listed");
        assert_eq!(store.contents().len(), 8);
        assert_eq!(list_versions(&fake), ["0", "10", ""]);
        assert_eq!(reflector.last_sync_resource_version(), "11");
    }

    /// Mirrors client-go's `TestReflectorFullListIfExpired`: when the second page
    /// of a relist has expired, the reflector lists everything in one request
    /// at the version it asked for.
    #[tokio::test(start_paused = true)]
    async fn test_reflector_full_list_if_expired() {
        let fake = FakeListerWatcher::<Pod>::new();
        let all = numbered_pods(8);
        fake.push_list_reply(page(all[0..4].to_vec(), "10"));
        fake.push_list_reply(ListReply::Page(
            ListPage::new(all[0..4].to_vec(), "11").with_continue("C1"),
        ));
        fake.fail_next_list(api_error(expired_status(
            "The resourceVersion for the provided watch is too old.",
        )));
        fake.push_list_reply(page(all.clone(), "11"));
        let (reflector, store) =
            reflector(&fake, ReflectorOptions::default().page_size(4));
        let shutdown = CancellationToken::new();
        within("the first list", reflector.list(&shutdown))
            .await
            .expect("listed");
        assert_eq!(store.contents().len(), 4);
        within("the relist", reflector.list(&shutdown))
            .await
            .expect("listed");
        assert_eq!(store.contents().len(), 8);
        assert_eq!(list_versions(&fake), ["0", "10", "", "10"]);
        let calls = fake.list_calls();
        let shapes: Vec<_> = calls
            .iter()
            .map(|call| (call.continue_token.as_str(), call.limit))
            .collect();
        assert_eq!(shapes, [("", 4), ("", 4), ("C1", 4), ("", 0)]);
    }

    /// Mirrors client-go's `TestReflectorFullListIfTooLarge`: a relist from a
    /// version the server has not reached (in each of the three forms servers
    /// have sent) is repeated at once from `""`.
    #[tokio::test(start_paused = true)]
    async fn test_reflector_full_list_if_too_large() {
        let fake = FakeListerWatcher::<Pod>::new();
        // Since 1.18.6: the ResourceVersionTooLarge cause.
        let by_cause = too_large_resource_version_status(20, 10);
        // 1.17.0 to 1.18.5: a cause with only the message.
        let mut by_cause_message = too_large_resource_version_status(30, 10);
        if let Some(cause) = by_cause_message
            .details
            .as_mut()
            .and_then(|details| details.causes.as_mut())
            .and_then(|causes| causes.first_mut())
        {
            cause.reason = None;
            cause.message = Some("Too large resource version".to_string());
        }
        // Before 1.17.0: the message alone.
        let mut by_message = too_large_resource_version_status(40, 10);
        by_message.details = None;
        fake.push_list_reply(page(vec![], "20"));
        for (too_large, next) in [
            (by_cause, "30"),
            (by_cause_message, "40"),
            (by_message, "50"),
        ] {
            fake.fail_next_list(api_error(too_large));
            fake.push_list_reply(page(vec![], next));
        }
        let reported = Reported::default();
        let (reflector, _store) = reflector(&fake, reported.options());
        let shutdown = CancellationToken::new();
        for _ in 0..4 {
            within("a list", reflector.list(&shutdown))
                .await
                .expect("listed");
        }
        assert_eq!(list_versions(&fake), ["0", "20", "", "30", "", "40", ""]);
        assert_eq!(reported.kinds(), ["TooLargeResourceVersion"; 3]);
        assert_eq!(reflector.last_sync_resource_version(), "50");
    }

    /// Mirrors client-go's `TestWatchTimeout`: watches ask for a random timeout of
    /// one to two minimum watch timeouts, and a minimum under 5 minutes is not
    /// honoured.
    #[tokio::test(start_paused = true)]
    async fn test_watch_timeout() {
        let cases = [
            (Duration::ZERO, 300),
            (Duration::from_secs(1), 300),
            (Duration::from_secs(30 * 60), 1800),
        ];
        for (min_watch_timeout, min_expected) in cases {
            let fake = fake_with(&["a"]);
            let options =
                ReflectorOptions::default().min_watch_timeout(min_watch_timeout);
            let (reflector, _store) = reflector(&fake, options);
            list_and_watch_during(&reflector, async {
                within("the watch", fake.wait_for_watch_calls(1)).await;
            })
            .await
            .expect("no error on shutdown");
            let timeout = fake.watch_calls()[0]
                .timeout_seconds
                .expect("watches set a timeout");
            assert!(
                (min_expected..=2 * min_expected).contains(&timeout),
                "{min_watch_timeout:?}: {timeout} s"
            );
        }
    }

    /// A 500 `StoreReadError`, as the server sends it after an unsafe delete of a
    /// corrupt object.
    fn store_read_error_status() -> Status {
        Status {
            code: Some(500),
            reason: Some("StoreReadError".to_string()),
            message: Some(
                "failed to prepare current and previous objects: \
                 corrupt object has been deleted"
                    .to_string(),
            ),
            status: Some("Failure".to_string()),
            ..Status::default()
        }
    }

    /// Mirrors client-go's `TestReflectorReplacesStoreOnUnsafeDelete`: after the
    /// `ERROR` event that follows an unsafe delete, the reflector relists, and
    /// the replace drops the corrupt object while the others stay.
    #[tokio::test(start_paused = true)]
    async fn test_reflector_replaces_store_on_unsafe_delete() {
        let fake = FakeListerWatcher::<Pod>::new();
        let existing = pods(&[("foo-1", "1"), ("foo-2", "2"), ("foo-3", "3")]);
        fake.push_list_reply(page(existing.clone(), "3"));
        fake.push_list_reply(page(existing, "5"));
        fake.push_watch_reply(WatchReply::Items(vec![
            Ok(WatchEvent::Added(Arc::new(pod_at("foo", "4")))),
            Ok(WatchEvent::Error(Box::new(store_read_error_status()))),
        ]));
        fake.push_watch_reply(WatchReply::ItemsThenIdle(vec![]));
        let (reflector, store) = reflector(&fake, ReflectorOptions::default());
        drive(&reflector, async {
            eventually("the relist at 5", || {
                reflector.last_sync_resource_version() == "5"
            })
            .await;
        })
        .await;
        assert_eq!(
            store.ops(),
            vec![
                Op::Replace(3, "3".to_string()),
                Op::Add("foo".to_string()),
                Op::Replace(3, "5".to_string()),
            ]
        );
        let names: Vec<_> =
            store.contents().into_iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["foo-1", "foo-2", "foo-3"]);
        assert_eq!(list_versions(&fake), ["0", "4"]);
    }

    /// Mirrors client-go's `TestReflectorRespectStoreTransformer`: what a
    /// streaming list puts into a queue with a transformer is transformed, and
    /// so is what the watch brings later.
    ///
    /// client-go gives the streaming list's temporary store the queue's
    /// transformer, so objects are transformed as they arrive; here the
    /// temporary store keeps them as they are and the queue transforms them in
    /// `replace`.
    #[tokio::test(start_paused = true)]
    async fn test_reflector_respect_store_transformer() {
        let fake = fake_with(&["foo-1", "foo-2"]);
        let transformed = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&transformed);
        let fifo_options =
            fifo_options().transformer(Arc::new(move |pod: Arc<Pod>| {
                counter.fetch_add(1, Ordering::SeqCst);
                let mut pod = (*pod).clone();
                pod.spec.get_or_insert_with(Default::default).hostname =
                    Some("transformed".to_string());
                Ok(Arc::new(pod))
            }));
        let options = ReflectorOptions::default().list_mode(ListMode::WatchList);
        let (reflector, fifo) = fifo_reflector(&fake, options, fifo_options);
        let hostnames = list_and_watch_during(&reflector, async {
            within("the streaming list", fake.wait_for_watch_calls(1)).await;
            eventually("the initial list in the queue", || fifo.len() == 2).await;
            fake.add(pod("foo-3")).expect("named");
            eventually("the version of foo-3", || {
                reflector.last_sync_resource_version() == "3"
            })
            .await;
            let mut hostnames = Vec::new();
            for _ in 0..3 {
                let hostname = within(
                    "a key in the queue",
                    fifo.pop(|deltas, _| {
                        Ok::<_, ()>(
                            deltas
                                .newest()
                                .and_then(|d| d.object())
                                .and_then(|p| p.spec.as_ref())
                                .and_then(|spec| spec.hostname.clone()),
                        )
                    }),
                )
                .await
                .expect("a key");
                hostnames.push(hostname);
            }
            assert_eq!(hostnames, vec![Some("transformed".to_string()); 3]);
        });
        hostnames.await.expect("no error on shutdown");
        assert_eq!(transformed.load(Ordering::SeqCst), 3);
        assert_eq!(fake.list_calls(), vec![]);
    }
}
