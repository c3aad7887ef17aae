//! Reflector scenarios, ported from client-go's `tools/cache/reflector_test.go` and
//! written against the scriptable fake. Every test runs on paused tokio time, so
//! backoffs and timeouts pass instantly and deterministically, and every wait is
//! bounded.
//!
//! Modules named `ex3_*` prove one exercise region each (see the book, chapter 3).

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

mod ex3_relist_rv {
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

mod ex3_pager {
    use stage3_reflector::{
        ListPage, ListPager, ListReply, Paging, ResourceVersionMatch,
    };

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

    #[tokio::test(start_paused = true)]
    async fn the_pager_joins_pages_under_the_first_pages_version() {
        let fake = FakeListerWatcher::<Pod>::new();
        fake.push_list_reply(ListReply::Page(
            ListPage::new(vec![Arc::new(pod("a"))], "10").with_continue("c1"),
        ));
        fake.push_list_reply(ListReply::Page(
            ListPage::new(vec![Arc::new(pod("b"))], "11").with_continue("c2"),
        ));
        fake.push_list_reply(ListReply::Page(ListPage::new(
            vec![Arc::new(pod("c"))],
            "12",
        )));
        let options = ListOptions {
            resource_version: "7".to_string(),
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            ..ListOptions::default()
        };
        let (list, paging) = within(
            "the pager",
            ListPager::new().with_page_size(1).list(&fake, options),
        )
        .await
        .expect("scripted pages");
        assert_eq!(paging, Paging::Paginated);
        assert_eq!(list.resource_version, "10");
        assert_eq!(list.continue_token, "");
        let names: Vec<_> = list
            .items
            .iter()
            .filter_map(|pod| pod.metadata.name.clone())
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
        let calls = fake.list_calls();
        assert_eq!(
            calls[0].resource_version_match,
            Some(ResourceVersionMatch::NotOlderThan)
        );
        assert_eq!(calls[1].continue_token, "c1");
        assert_eq!(calls[1].resource_version_match, None);
        assert_eq!(calls[2].continue_token, "c2");
    }

    #[tokio::test(start_paused = true)]
    async fn the_pager_restores_the_requested_version_for_its_full_list() {
        let fake = fake_with_count(3);
        fake.push_list_reply(ListReply::ServeThenExpireContinueTokens);
        let options = ListOptions {
            resource_version: "2".to_string(),
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            ..ListOptions::default()
        };
        let (list, paging) = within(
            "the pager",
            ListPager::new().with_page_size(2).list(&fake, options),
        )
        .await
        .expect("the full list succeeds");
        assert_eq!(paging, Paging::Paginated);
        assert_eq!(list.items.len(), 3);
        let full = fake.list_calls().pop().expect("three calls");
        assert_eq!(full.resource_version, "2");
        assert_eq!(
            full.resource_version_match,
            Some(ResourceVersionMatch::NotOlderThan)
        );
        assert_eq!((full.limit, full.continue_token.as_str()), (0, ""));
    }

    #[tokio::test(start_paused = true)]
    async fn the_pager_returns_an_expired_first_page_and_other_errors() {
        let fake = fake_with_count(3);
        fake.fail_next_list(api_error(expired_status("too old")));
        let error = within(
            "the pager",
            ListPager::new().list(&fake, ListOptions::default()),
        )
        .await
        .expect_err("an expired first page is the caller's problem");
        assert!(error.is_expired());
        assert_eq!(fake.list_calls().len(), 1);

        let pager = ListPager {
            page_size: 1,
            full_list_if_expired: false,
        };
        fake.push_list_reply(ListReply::ServeThenExpireContinueTokens);
        let error = within("the pager", pager.list(&fake, ListOptions::default()))
            .await
            .expect_err("no fallback when it is turned off");
        assert!(error.is_expired());
        assert_eq!(fake.list_calls().len(), 3);
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

mod ex3_watch_handler {
    use stage3_reflector::ResourceVersionUpdater;

    use pretty_assertions::assert_eq;

    use super::*;

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

mod ex3_after_watch {
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

mod ex3_streaming_list {
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

    #[tokio::test(start_paused = true)]
    async fn five_connection_refused_errors_back_off_exponentially() {
        let elapsed = elapsed_after_connection_refused(5).await;
        // 0.8 + 1.6 + 3.2 + 6.4 + 12.8 = 24.8 s, each with up to 100 % jitter.
        let (low, high) =
            (Duration::from_millis(24_800), Duration::from_millis(49_600));
        assert!((low..high).contains(&elapsed), "{elapsed:?}");
    }

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
        // Without the reset this would be the fourth step, 6.4 s or more.
        assert!(
            (Duration::from_millis(800)..Duration::from_millis(1600))
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
