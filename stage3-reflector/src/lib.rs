//! # Stage 3: the Reflector
//!
//! The loop that keeps a local store in step with the API server: list everything,
//! then watch for changes, and write both into a stage 1 store or a stage 2
//! DeltaFIFO. When a watch breaks it watches again from where it was; when that is
//! impossible it lists again.
//!
//! This crate mirrors client-go's `tools/cache/reflector.go`, `listwatch.go`,
//! `retry_with_deadline.go` and `tools/pager`, and apimachinery's `wait` backoff,
//! following the Reflector part of source document 003. The vocabulary both sides
//! of the watch share (the watch events and stream, the list and watch options,
//! the questions asked of a `Status`) is apimachinery's, in the workspace's
//! `apimachinery` crate, and re-exported here:
//!
//! | client-go / apimachinery (Go) | here (Rust) |
//! |---|---|
//! | `watch.Event`, `watch.EventType`, `watch.Interface` | [`WatchEvent`], [`EventType`], [`Watch`] (apimachinery's, with this crate's [`Error`]) |
//! | `metav1.InitialEventsAnnotationKey` | [`INITIAL_EVENTS_ANNOTATION_KEY`] |
//! | `ListerWatcher`, `metav1.ListOptions` | [`ListerWatcher`], [`ListOptions`] and [`WatchOptions`] (apimachinery's) |
//! | `apierrors.IsResourceExpired`, `IsTooManyRequests`, `metav1.StatusReason*` | [`apimachinery::api::errors`], [`reason`] |
//! | `NewFilteredListWatchFromClient` | [`KubeListerWatcher`] |
//! | `ListWatch` + `watch.NewFake()` in tests | [`FakeListerWatcher`] |
//! | `pager.ListPager` | [`ListPager`] |
//! | `Reflector`, `ReflectorOptions`, `NewReflectorWithOptions` | [`Reflector`], [`ReflectorOptions`], [`Reflector::new`] |
//! | `Run`, `ListAndWatch`, `LastSyncResourceVersion` | [`Reflector::run`], [`Reflector::list_and_watch`], [`Reflector::last_sync_resource_version`] |
//! | `WatchErrorHandler`, `DefaultWatchErrorHandler` | [`WatchErrorHandler`], [`default_watch_error_handler`] |
//! | `wait.NewExponentialBackoffManager` | [`ExponentialBackoff`] |
//! | `NewRetryWithDeadline` | [`RetryWithDeadline`] |
//! | `isExpiredError`, `isTooLargeResourceVersionError`, `VeryShortWatchError` | [`Error::Expired`], [`Error::TooLargeResourceVersion`], [`Error::VeryShortWatch`] |
//!
//! ## Data flow
//!
//! ```text
//!  ListerWatcher              Reflector                    Store (Cache / DeltaFifo)
//!  list(rv "0", limit 500) ─► pages ─► ListPager joins  ─► replace(items, rv)
//!  watch(rv, bookmarks)    ─► Watch ─► handle_any_watch ─► add / update / delete
//!                                      │  every event sets last_sync_resource_version
//!                                      └─ after the watch: rewatch, back off, or relist
//!  resync task (every resync_period) ────────────────────► resync()
//! ```
//!
//! ## Where this differs from client-go
//! - Objects are `Arc<T>` end to end: a list page, the store and the watch events
//!   share them.
//! - Watch events are typed; an object of the wrong type reaches the reflector as
//!   [`Error::UnexpectedType`] (from the decoder) and is skipped, as client-go skips
//!   it.
//! - The watch error handler hears about every error the reflector sees, including
//!   the ones it recovers from by itself (client-go calls it only when
//!   `ListAndWatch` returns an error).
//! - Connection refused also counts as retriable when a watch *ends* with it, not
//!   only when opening one.
//! - A resync failure is still returned through the watch, but the resync task is a
//!   tokio task owned (and awaited) by the watch loop.

mod backoff;
mod error;
mod fake;
mod kube_listwatch;
mod listwatch;
mod pager;
mod reflector;
mod retry_with_deadline;
mod watch;

pub use apimachinery::api::errors::reason;
pub use apimachinery::apis::meta::v1::{
    ListOptions, ResourceVersionMatch, WatchOptions,
};
pub use backoff::{BackoffSettings, ExponentialBackoff, jitter};
pub use error::{BoxError, Error};
pub use fake::{
    Call, FakeListerWatcher, ListReply, WatchReply, connection_refused,
    expired_status, gone_status, internal_error_status,
    too_large_resource_version_status, too_many_requests_status,
};
pub use kube_listwatch::{KubeListerWatcher, is_probable_eof};
pub use listwatch::{ListPage, ListerWatcher};
pub use pager::{DEFAULT_PAGE_SIZE, ListPager, Paging};
pub use reflector::{
    DEFAULT_MIN_WATCH_TIMEOUT, ListMode, Phase, Reflector, ReflectorOptions,
    ResourceVersionUpdater, ShouldResync, VERY_SHORT_WATCH, WatchErrorHandler,
    default_watch_error_handler,
};
pub use retry_with_deadline::RetryWithDeadline;
pub use watch::{
    Bookmark, EventType, INITIAL_EVENTS_ANNOTATION_KEY, Watch, WatchEvent,
    WatchItem, WatchStopper,
};
