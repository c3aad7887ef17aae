//! The Reflector: list, then watch, and mirror what the server says into a store.
//!
//! Mirrors client-go's [`tools/cache/reflector.go`]. [`Reflector::run`] loops
//! [`Reflector::list_and_watch`] with exponential backoff until shut down. Each
//! round:
//!
//! 1. **list** (`list`): a paged list at [`relist resource
//!    version`](#resource-versions), then `store.replace(items, rv)` (client-go's
//!    `syncWith`), then remember `rv`; or, in [`ListMode::WatchList`], a streaming
//!    list (`watchList`) that collects the initial events into a temporary store
//!    until the bookmark annotated `k8s.io/initial-events-end`;
//! 2. **watch** (`watch` and `handleWatch`): open a watch from the last version,
//!    apply each event to the store, move the last version with every event, and
//!    decide after each watch whether to watch again, back off, or go back to step
//!    1;
//! 3. **resync** (`startResync`): meanwhile a separate task calls `store.resync()`
//!    every resync period, when `should_resync` agrees.
//!
//! # Resource versions
//! The list asks for `"0"` before the first sync (any version; the API server's
//! watch cache may answer), then for the last synced version ("not older than what I
//! have seen"). After a 410 or "too large resource version" the last version is
//! marked unavailable and the reflector relists at once from `""` (the newest
//! version, read from etcd).
//!
//! # Recovery
//! - A watch that ends normally is reopened from the last version, without a list.
//! - A watch that ends within a second without events ("very short watch"), with
//!   410, or with any other error makes the reflector back off and relist.
//! - Connection refused and 429 back off and reopen the watch without a list.
//! - Internal errors (500) reopen the watch at once for up to
//!   [`ReflectorOptions::max_internal_error_retry_duration`] (off by default).
//!
//! Every error the reflector sees is passed to the watch error handler (by default,
//! a log line).
//!
//! [`tools/cache/reflector.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/cache/reflector.go

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::Resource;
use parking_lot::Mutex;
use stage1_store::{Store, StoreError};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::{Instant, Interval};
use tokio_util::sync::CancellationToken;

use crate::backoff::{BackoffSettings, ExponentialBackoff};
use crate::error::Error;
use crate::listwatch::ListerWatcher;
use crate::pager::{DEFAULT_PAGE_SIZE, ListPager, Paging};
use crate::retry_with_deadline::RetryWithDeadline;
use crate::watch::{Bookmark, Watch, WatchEvent};
use apimachinery::apis::meta::v1::{ListOptions, WatchOptions};

/// client-go's `defaultMinWatchTimeout`: watches time out after a random time in
/// [5 min, 10 min), so that reconnects spread out. Smaller minimums are not
/// honoured.
pub const DEFAULT_MIN_WATCH_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// A watch that closes sooner than this without any event is a "very short watch".
pub const VERY_SHORT_WATCH: Duration = Duration::from_secs(1);

/// How often a streaming list warns while it waits for its end bookmark.
const INITIAL_EVENTS_END_BOOKMARK_WARNING: Duration = Duration::from_secs(10);

/// How long a run of internal errors may be apart and still count as one (client-go:
/// 1 min).
const INTERNAL_ERROR_RESET_PERIOD: Duration = Duration::from_secs(60);

/// Mirrors client-go's `WatchErrorHandler`: called with the reflector's name and
/// each error the reflector sees. It must return quickly.
pub type WatchErrorHandler = Arc<dyn Fn(&str, &Error) + Send + Sync>;

/// Mirrors the Reflector's `ShouldResync` hook: asked at every resync tick; `true`
/// resyncs.
pub type ShouldResync = Arc<dyn Fn() -> bool + Send + Sync>;

/// Mirrors client-go's `ResourceVersionUpdater`: told every resource version the
/// watch reaches. Stage 5's watch cache uses it to move its version on bookmarks.
pub trait ResourceVersionUpdater: Send + Sync {
    /// The reflector's last synced version is now `resource_version`.
    fn update_resource_version(&self, resource_version: &str);
}

/// Mirrors client-go's `DefaultWatchErrorHandler`: an expired version is routine and
/// logged at debug level; everything else is a warning.
pub fn default_watch_error_handler(name: &str, error: &Error) {
    if error.is_expired() {
        tracing::debug!(reflector = name, %error, "watch closed");
    } else {
        tracing::warn!(reflector = name, %error, "failed to watch");
    }
}

/// How a reflector fills its store before it watches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ListMode {
    /// A paged LIST, then a WATCH from the list's version (client-go without
    /// `UseWatchList`).
    #[default]
    List,
    /// A streaming list (KEP 3157, client-go's `UseWatchList`): one WATCH with
    /// `sendInitialEvents=true` delivers the current state and stays open. Falls
    /// back to [`ListMode::List`] when the streaming list fails.
    WatchList,
}

/// What a reflector is doing right now; see [`Reflector::phase`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Created, not running yet.
    Idle,
    /// Listing (paged).
    Listing,
    /// Collecting the initial events of a streaming list.
    StreamingList,
    /// Watching and applying events.
    Watching,
    /// Waiting before it lists or watches again.
    BackingOff,
    /// [`Reflector::run`] has returned.
    Stopped,
}

/// Configures a [`Reflector`]; mirrors client-go's `ReflectorOptions` and the public
/// fields of `Reflector` (`WatchListPageSize`, `ShouldResync`,
/// `MaxInternalErrorRetryDuration`, `UseWatchList`).
#[derive(Clone, Default)]
pub struct ReflectorOptions {
    /// The name used in logs. Empty: the source location that called
    /// [`Reflector::new`].
    pub name: String,
    /// What the reflector reflects, for logs. Empty: the API version and kind of
    /// `T`.
    pub type_description: String,
    /// How often the store is resynced; zero (the default) never resyncs.
    pub resync_period: Duration,
    /// The least watch timeout; the actual timeout is random in [min, 2×min).
    /// Values under 5 minutes are raised to 5 minutes.
    pub min_watch_timeout: Duration,
    /// client-go's `WatchListPageSize`: the page size of lists. Zero: 500 for lists
    /// from `""` and `"0"`, and unpaged for lists from a version (so the watch
    /// cache can serve them).
    pub page_size: u32,
    /// Paged list or streaming list.
    pub list_mode: ListMode,
    /// How long internal errors (500) reopen the watch at once instead of
    /// relisting; zero (the default) never does.
    pub max_internal_error_retry_duration: Duration,
    /// The backoff between rounds and before retried watches.
    pub backoff: BackoffSettings,
    /// Asked at every resync tick; absent means always resync.
    pub should_resync: Option<ShouldResync>,
    /// Told about every error; absent means [`default_watch_error_handler`].
    pub watch_error_handler: Option<WatchErrorHandler>,
    /// Told about every resource version the watch reaches.
    pub resource_version_updater: Option<Arc<dyn ResourceVersionUpdater>>,
}

impl ReflectorOptions {
    /// Sets [`name`](ReflectorOptions::name).
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets [`type_description`](ReflectorOptions::type_description).
    #[must_use]
    pub fn type_description(mut self, description: impl Into<String>) -> Self {
        self.type_description = description.into();
        self
    }

    /// Sets [`resync_period`](ReflectorOptions::resync_period).
    #[must_use]
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync_period = period;
        self
    }

    /// Sets [`min_watch_timeout`](ReflectorOptions::min_watch_timeout).
    #[must_use]
    pub fn min_watch_timeout(mut self, timeout: Duration) -> Self {
        self.min_watch_timeout = timeout;
        self
    }

    /// Sets [`page_size`](ReflectorOptions::page_size).
    #[must_use]
    pub fn page_size(mut self, page_size: u32) -> Self {
        self.page_size = page_size;
        self
    }

    /// Sets [`list_mode`](ReflectorOptions::list_mode).
    #[must_use]
    pub fn list_mode(mut self, mode: ListMode) -> Self {
        self.list_mode = mode;
        self
    }

    /// Sets [`max_internal_error_retry_duration`](ReflectorOptions::max_internal_error_retry_duration).
    #[must_use]
    pub fn max_internal_error_retry_duration(mut self, duration: Duration) -> Self {
        self.max_internal_error_retry_duration = duration;
        self
    }

    /// Sets [`backoff`](ReflectorOptions::backoff).
    #[must_use]
    pub fn backoff(mut self, backoff: BackoffSettings) -> Self {
        self.backoff = backoff;
        self
    }

    /// Sets [`should_resync`](ReflectorOptions::should_resync).
    #[must_use]
    pub fn should_resync(
        mut self,
        should_resync: impl Fn() -> bool + Send + Sync + 'static,
    ) -> Self {
        self.should_resync = Some(Arc::new(should_resync));
        self
    }

    /// Sets [`watch_error_handler`](ReflectorOptions::watch_error_handler).
    #[must_use]
    pub fn watch_error_handler(
        mut self,
        handler: impl Fn(&str, &Error) + Send + Sync + 'static,
    ) -> Self {
        self.watch_error_handler = Some(Arc::new(handler));
        self
    }

    /// Sets [`resource_version_updater`](ReflectorOptions::resource_version_updater).
    #[must_use]
    pub fn resource_version_updater(
        mut self,
        updater: Arc<dyn ResourceVersionUpdater>,
    ) -> Self {
        self.resource_version_updater = Some(updater);
        self
    }
}

impl fmt::Debug for ReflectorOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReflectorOptions")
            .field("name", &self.name)
            .field("type_description", &self.type_description)
            .field("resync_period", &self.resync_period)
            .field("min_watch_timeout", &self.min_watch_timeout)
            .field("page_size", &self.page_size)
            .field("list_mode", &self.list_mode)
            .field(
                "max_internal_error_retry_duration",
                &self.max_internal_error_retry_duration,
            )
            .field("backoff", &self.backoff)
            .field("should_resync", &self.should_resync.is_some())
            .field("watch_error_handler", &self.watch_error_handler.is_some())
            .field(
                "resource_version_updater",
                &self.resource_version_updater.is_some(),
            )
            .finish()
    }
}

// ANCHOR: resource_version_state
/// The reflector's knowledge of resource versions: client-go's
/// `lastSyncResourceVersion` plus `isLastSyncResourceVersionUnavailable`.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ResourceVersionState {
    /// Nothing synced yet.
    NeverSynced,
    /// The last list or watch event was at this version.
    Synced(String),
    /// The server rejected `last` as expired or too large; the next list must not
    /// use it.
    Unavailable {
        /// The version that was rejected.
        last: String,
    },
}
// ANCHOR_END: resource_version_state

impl ResourceVersionState {
    fn synced(resource_version: &str) -> Self {
        if resource_version.is_empty() {
            ResourceVersionState::NeverSynced
        } else {
            ResourceVersionState::Synced(resource_version.to_string())
        }
    }

    /// Mirrors `LastSyncResourceVersion`.
    fn last_synced(&self) -> &str {
        match self {
            ResourceVersionState::NeverSynced => "",
            ResourceVersionState::Synced(last)
            | ResourceVersionState::Unavailable { last } => last,
        }
    }

    // ANCHOR: relist_resource_version
    /// Mirrors `relistResourceVersion`: the version the next list asks for.
    fn relist_from(&self) -> &str {
        // ANCHOR: ex3-relist-rv
        match self {
            // The last version was refused: read the newest from etcd.
            ResourceVersionState::Unavailable { .. } => "",
            // First list: any version will do, so the watch cache can answer.
            ResourceVersionState::NeverSynced => "0",
            // Later lists: nothing older than what this reflector has already seen.
            ResourceVersionState::Synced(last) => last,
        }
        // ANCHOR_END: ex3-relist-rv
    }
    // ANCHOR_END: relist_resource_version

    /// Mirrors `rewatchResourceVersion`: the version a streaming list starts from.
    fn rewatch_from(&self) -> &str {
        match self {
            ResourceVersionState::Unavailable { .. }
            | ResourceVersionState::NeverSynced => "",
            ResourceVersionState::Synced(last) => last,
        }
    }

    fn mark_unavailable(&mut self) {
        let last = self.last_synced().to_string();
        *self = ResourceVersionState::Unavailable { last };
    }

    fn mark_available(&mut self) {
        if let ResourceVersionState::Unavailable { last } = self {
            *self = ResourceVersionState::synced(last);
        }
    }
}

/// Everything the reflector changes while it runs, under one lock. The lock is never
/// held across an `.await`.
#[derive(Debug)]
struct State {
    resource_version: ResourceVersionState,
    /// Whether the first list (from `"0"`) came back paginated: then the watch
    /// cache is off and later lists keep paging (client-go's
    /// `paginatedResult`).
    initial_list_paging: Paging,
    phase: Phase,
    backoff: ExponentialBackoff,
}

/// Whether the loop goes on after a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Continue,
    Stopped,
}

/// When [`Reflector::handle_any_watch`] returns of its own accord: client-go's
/// `exitOnWatchListBookmarkReceived`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ExitOn {
    /// Only when the stream ends (a plain watch).
    StreamEnd,
    /// Also at the bookmark that ends the initial events (a streaming list).
    InitialEventsEnd,
}

// ANCHOR: watch_end
/// How a watch ended: what client-go's `handleAnyWatch` reports.
#[derive(Debug)]
enum WatchEnd {
    /// Shutdown was requested.
    Stopped,
    /// The server closed the stream after at least a second or at least one event.
    Closed,
    /// The bookmark ending the initial events arrived; the stream is still open.
    InitialEventsEnd,
    /// An `Error` event, a broken stream, a failed resync, or a very short watch.
    Failed(Error),
}

/// What the watch loop does next: the decision at the end of client-go's
/// `Reflector.watch`.
#[derive(Debug)]
enum AfterWatch {
    /// Shutdown was requested.
    Stop,
    /// Watch again from the last version.
    Rewatch,
    /// Watch again from the last version, at once (an internal error within the
    /// retry window).
    RetryNow(Error),
    /// Back off, then watch again from the last version (429, connection refused).
    BackoffThenRewatch(Error),
    /// Return, so that [`Reflector::run`] backs off and lists again.
    Relist(Error),
}
// ANCHOR_END: watch_end

/// Mirrors client-go's `Reflector`: keeps a [`Store`] in step with the objects a
/// [`ListerWatcher`] reports.
///
/// `T` is the object type, `L` the lister-watcher, `S` the store (stage 1's `Cache`,
/// stage 2's `DeltaFifo`, or any other [`Store`]). Share the reflector through an
/// `Arc` to read
/// [`last_sync_resource_version`](Reflector::last_sync_resource_version) or
/// [`phase`](Reflector::phase) while [`run`](Reflector::run) is going.
///
/// # Recovery
/// - A watch that ends normally is reopened from the last version, without a list.
/// - A watch that ends within a second without events, with 410, or with any other
///   error makes the reflector back off and list again (from the last version; from
///   `""` if the server refuses that version as expired or too large).
/// - Connection refused and 429 back off and reopen the watch without a list.
/// - Internal errors (500) reopen the watch at once for up to
///   [`ReflectorOptions::max_internal_error_retry_duration`] (off by default).
///
/// Every error is passed to the watch error handler (by default a log line).
pub struct Reflector<T, L, S> {
    name: String,
    type_description: String,
    lister_watcher: L,
    store: Arc<S>,
    options: ReflectorOptions,
    min_watch_timeout: Duration,
    state: Mutex<State>,
    _object: PhantomData<fn() -> T>,
}

impl<T, L, S> fmt::Debug for Reflector<T, L, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reflector")
            .field("name", &self.name)
            .field("type_description", &self.type_description)
            .field("state", &*self.state.lock())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<T, L, S> Reflector<T, L, S>
where
    T: Resource + Send + Sync + 'static,
    T::DynamicType: Default,
    L: ListerWatcher<T>,
    S: Store<T> + 'static,
{
    /// Mirrors `NewReflectorWithOptions`. Without a name in `options`, the reflector
    /// is named after the source location of this call, as client-go names it
    /// after its caller.
    #[track_caller]
    pub fn new(lister_watcher: L, store: Arc<S>, options: ReflectorOptions) -> Self {
        let name = if options.name.is_empty() {
            let caller = std::panic::Location::caller();
            format!("{}:{}", caller.file(), caller.line())
        } else {
            options.name.clone()
        };
        let type_description = if options.type_description.is_empty() {
            let dynamic_type = T::DynamicType::default();
            format!(
                "{}/{}",
                T::api_version(&dynamic_type),
                T::kind(&dynamic_type)
            )
        } else {
            options.type_description.clone()
        };
        let state = State {
            resource_version: ResourceVersionState::NeverSynced,
            initial_list_paging: Paging::SinglePage,
            phase: Phase::Idle,
            backoff: ExponentialBackoff::new(options.backoff),
        };
        Reflector {
            name,
            type_description,
            lister_watcher,
            store,
            min_watch_timeout: options
                .min_watch_timeout
                .max(DEFAULT_MIN_WATCH_TIMEOUT),
            options,
            state: Mutex::new(state),
            _object: PhantomData,
        }
    }

    /// Mirrors `Name`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Mirrors `TypeDescription`.
    pub fn type_description(&self) -> &str {
        &self.type_description
    }

    /// The store this reflector writes to.
    pub fn store(&self) -> &Arc<S> {
        &self.store
    }

    /// Mirrors `LastSyncResourceVersion`: the version of the last list or watch
    /// event, `""` before the first sync. It is not synchronised with the store.
    pub fn last_sync_resource_version(&self) -> String {
        self.state.lock().resource_version.last_synced().to_string()
    }

    /// What the reflector is doing right now.
    pub fn phase(&self) -> Phase {
        self.state.lock().phase
    }

    // ANCHOR: run
    /// Mirrors `Run`: lists and watches until `shutdown` is cancelled, backing off
    /// between rounds (800 ms doubling to a 30 s cap, with jitter, reset after 2
    /// healthy minutes).
    ///
    /// Returns once `shutdown` is cancelled; the resync task and any open watch are
    /// stopped before it returns.
    pub async fn run(&self, shutdown: CancellationToken) {
        tracing::info!(
            reflector = %self.name,
            r#type = %self.type_description,
            "starting reflector"
        );
        while !shutdown.is_cancelled() {
            if let Err(error) = self.list_and_watch(&shutdown).await {
                self.report(&error);
            }
            if self.back_off(&shutdown).await == Flow::Stopped {
                break;
            }
        }
        self.set_phase(Phase::Stopped);
        tracing::info!(
            reflector = %self.name,
            r#type = %self.type_description,
            "stopping reflector"
        );
    }
    // ANCHOR_END: run

    // ANCHOR: list_and_watch
    /// Mirrors `ListAndWatch`: one round of list (or streaming list), then watch
    /// until a relist is needed. Returns `Ok` when the round ended in a way that
    /// calls for a relist or on shutdown, and an error when it could not even
    /// start watching.
    pub async fn list_and_watch(
        &self,
        shutdown: &CancellationToken,
    ) -> Result<(), Error> {
        tracing::debug!(reflector = %self.name, "listing and watching");
        let watch = match self.options.list_mode {
            ListMode::List => None,
            ListMode::WatchList => match self.watch_list(shutdown).await {
                Ok(Some(watch)) => Some(watch),
                Ok(None) => return Ok(()),
                Err(error) => {
                    self.report(&error);
                    tracing::warn!(
                        reflector = %self.name,
                        %error,
                        "the streaming list failed; falling back to list and watch"
                    );
                    None
                }
            },
        };
        if watch.is_none() {
            self.list(shutdown).await?;
        }
        tracing::debug!(reflector = %self.name, "caches populated");
        self.watch_with_resync(watch, shutdown).await
    }
    // ANCHOR_END: list_and_watch

    // ANCHOR: list
    /// Mirrors client-go's (private) `Reflector.list`: a paged list, `store.replace`
    /// with its items (`syncWith`), and the list's version recorded. Public so
    /// that benches and tests can run one list without a watch. Returns `Ok`
    /// without listing when `shutdown` is cancelled.
    pub async fn list(&self, shutdown: &CancellationToken) -> Result<(), Error> {
        self.set_phase(Phase::Listing);
        let resource_version = self.relist_resource_version();
        let pager =
            ListPager::new().with_page_size(self.list_page_size(&resource_version));
        let listing = async {
            let options = ListOptions {
                resource_version: resource_version.clone(),
                ..ListOptions::default()
            };
            match pager.list(&self.lister_watcher, options).await {
                Err(error)
                    if error.is_expired()
                        || error.is_too_large_resource_version() =>
                {
                    // The version is gone or not there yet: relist at once from "".
                    self.report(&error);
                    self.state.lock().resource_version.mark_unavailable();
                    let options = ListOptions {
                        resource_version: self.relist_resource_version(),
                        ..ListOptions::default()
                    };
                    pager.list(&self.lister_watcher, options).await
                }
                result => result,
            }
        };
        let (list, paging) = tokio::select! {
            biased;
            () = shutdown.cancelled() => return Ok(()),
            listed = listing => listed?,
        };
        {
            let mut state = self.state.lock();
            if resource_version == "0" && paging == Paging::Paginated {
                state.initial_list_paging = Paging::Paginated;
            }
            state.resource_version.mark_available();
        }
        self.sync_with(list.items, &list.resource_version)?;
        self.set_last_sync_resource_version(&list.resource_version);
        Ok(())
    }
    // ANCHOR_END: list

    // ANCHOR: sync_with
    /// Mirrors `syncWith`: replaces the store's contents with a full list.
    fn sync_with(
        &self,
        items: Vec<Arc<T>>,
        resource_version: &str,
    ) -> Result<(), Error> {
        self.store
            .replace(items, resource_version)
            .map_err(|source| Error::Sync { source })
    }
    // ANCHOR_END: sync_with

    /// The page size rule of `Reflector.list`.
    fn list_page_size(&self, resource_version: &str) -> u32 {
        if self.options.page_size != 0 {
            // Asked for explicitly.
            self.options.page_size
        } else if self.state.lock().initial_list_paging == Paging::Paginated {
            // The server paged a list from "0": its watch cache is off, so keep
            // paging.
            DEFAULT_PAGE_SIZE
        } else if !resource_version.is_empty() && resource_version != "0" {
            // An unpaged list from a version can be served from the watch cache.
            0
        } else {
            DEFAULT_PAGE_SIZE
        }
    }

    // ANCHOR: watch_list
    /// Mirrors `watchList`: a streaming list. Returns the still open watch once the
    /// initial events have replaced the store's contents, `None` on shutdown, or
    /// the error that made it give up (the caller then falls back to a paged
    /// list).
    async fn watch_list(
        &self,
        shutdown: &CancellationToken,
    ) -> Result<Option<Watch<T>>, Error> {
        // ANCHOR: ex3-streaming-list
        self.set_phase(Phase::StreamingList);
        loop {
            if shutdown.is_cancelled() {
                return Ok(None);
            }
            let options = WatchOptions {
                resource_version: self.rewatch_resource_version(),
                resource_version_match: Some(
                    crate::ResourceVersionMatch::NotOlderThan,
                ),
                timeout_seconds: Some(self.watch_timeout_seconds()),
                allow_watch_bookmarks: true,
                send_initial_events: true,
                ..WatchOptions::default()
            };
            let start = Instant::now();
            let opened = tokio::select! {
                biased;
                () = shutdown.cancelled() => return Ok(None),
                opened = self.lister_watcher.watch(options) => opened,
            };
            let mut watch = match opened {
                Ok(watch) => watch,
                Err(error) => {
                    match self.retry_streaming_list_after(&error, shutdown).await {
                        Some(Flow::Continue) => continue,
                        Some(Flow::Stopped) => return Ok(None),
                        None => return Err(error),
                    }
                }
            };
            // Collect the initial events into a temporary store, so that a failure
            // half way leaves the real store (often a queue that is
            // drained as it fills) untouched.
            let temporary = stage1_store::new_store(Arc::new(
                stage1_store::meta_namespace_key_func::<T>,
            ));
            let mut resource_version = String::new();
            let end = self
                .handle_any_watch(
                    start,
                    &mut watch,
                    &temporary,
                    |rv| {
                        resource_version.clear();
                        resource_version.push_str(rv);
                    },
                    None,
                    ExitOn::InitialEventsEnd,
                    shutdown,
                )
                .await;
            let error = match end {
                WatchEnd::InitialEventsEnd => {
                    self.state.lock().resource_version.mark_available();
                    self.store
                        .replace(temporary.list().to_vec(), &resource_version)
                        .map_err(|source| Error::Sync { source })?;
                    self.set_last_sync_resource_version(&resource_version);
                    return Ok(Some(watch));
                }
                WatchEnd::Stopped => {
                    watch.stop();
                    return Ok(None);
                }
                // Closed before the end bookmark: start again with a clean state.
                WatchEnd::Closed => {
                    watch.stop();
                    continue;
                }
                WatchEnd::Failed(error) => {
                    watch.stop();
                    error
                }
            };
            match self.retry_streaming_list_after(&error, shutdown).await {
                Some(Flow::Continue) => {}
                Some(Flow::Stopped) => return Ok(None),
                None => return Err(error),
            }
        }
        // ANCHOR_END: ex3-streaming-list
    }
    // ANCHOR_END: watch_list

    /// The retry rule of `watchList` (`isErrorRetriableWithSideEffectsFn`): back off
    /// after 429 or connection refused; after 410 or "too large" mark the
    /// version unavailable and start over from `""`. `None` means give up.
    async fn retry_streaming_list_after(
        &self,
        error: &Error,
        shutdown: &CancellationToken,
    ) -> Option<Flow> {
        if error.is_watch_error_retriable() {
            self.report(error);
            Some(self.back_off(shutdown).await)
        } else if error.is_expired() || error.is_too_large_resource_version() {
            self.report(error);
            self.state.lock().resource_version.mark_unavailable();
            Some(Flow::Continue)
        } else {
            None
        }
    }

    /// Mirrors `watchWithResync`: runs the watch loop with the resync task beside
    /// it, and stops the task before returning.
    async fn watch_with_resync(
        &self,
        watch: Option<Watch<T>>,
        shutdown: &CancellationToken,
    ) -> Result<(), Error> {
        let mut resync = ResyncTask::start(
            Arc::clone(&self.store),
            self.options.resync_period,
            self.options.should_resync.clone(),
            self.name.clone(),
        );
        let result = self.watch(watch, &mut resync, shutdown).await;
        resync.stop().await;
        result
    }

    // ANCHOR: watch_open
    /// Mirrors `Reflector.watch`: opens watches from the last version and applies
    /// their events until a relist is needed or shutdown. Every watch it opens
    /// is stopped before it returns.
    async fn watch(
        &self,
        mut watch: Option<Watch<T>>,
        resync: &mut ResyncTask,
        shutdown: &CancellationToken,
    ) -> Result<(), Error> {
        let mut retry = RetryWithDeadline::new(
            self.options.max_internal_error_retry_duration,
            INTERNAL_ERROR_RESET_PERIOD,
            Error::is_internal_error,
        );
        loop {
            if shutdown.is_cancelled() {
                if let Some(mut watch) = watch {
                    watch.stop();
                }
                return Ok(());
            }
            // Start the clock before the request: some proxies send no headers until
            // the first event.
            let start = Instant::now();
            let mut current = match watch.take() {
                Some(watch) => watch,
                None => {
                    let options = WatchOptions {
                        resource_version: self.last_sync_resource_version(),
                        timeout_seconds: Some(self.watch_timeout_seconds()),
                        allow_watch_bookmarks: true,
                        ..WatchOptions::default()
                    };
                    let opened = tokio::select! {
                        biased;
                        () = shutdown.cancelled() => return Ok(()),
                        opened = self.lister_watcher.watch(options) => opened,
                    };
                    match opened {
                        Ok(watch) => watch,
                        Err(error) if error.is_watch_error_retriable() => {
                            self.report(&error);
                            if self.back_off(shutdown).await == Flow::Stopped {
                                return Ok(());
                            }
                            continue;
                        }
                        Err(error) => return Err(error),
                    }
                }
            };
            // ANCHOR_END: watch_open
            // ANCHOR: watch_apply
            self.set_phase(Phase::Watching);
            let end = self
                .handle_any_watch(
                    start,
                    &mut current,
                    &*self.store,
                    |rv| self.watch_reached(rv),
                    Some(&mut *resync),
                    ExitOn::StreamEnd,
                    shutdown,
                )
                .await;
            current.stop();
            match after_watch(end, &mut retry) {
                AfterWatch::Stop => return Ok(()),
                AfterWatch::Rewatch => {}
                AfterWatch::RetryNow(error) => self.report(&error),
                AfterWatch::BackoffThenRewatch(error) => {
                    self.report(&error);
                    if self.back_off(shutdown).await == Flow::Stopped {
                        return Ok(());
                    }
                }
                AfterWatch::Relist(error) => {
                    self.report(&error);
                    return Ok(());
                }
            }
        }
    }
    // ANCHOR_END: watch_apply

    // ANCHOR: handle_any_watch
    /// Mirrors `handleAnyWatch` (client-go's `watchHandler`): applies the events of
    /// `watch` to `store` and reports each new version to
    /// `set_resource_version`, until the stream ends, an error ends it, the
    /// resync task fails, or shutdown; with [`ExitOn::InitialEventsEnd`], also
    /// at the end bookmark of a streaming list.
    ///
    /// An event whose object has the wrong type is logged and skipped. The caller
    /// stops the watch.
    #[allow(clippy::too_many_arguments)]
    async fn handle_any_watch<St>(
        &self,
        start: Instant,
        watch: &mut Watch<T>,
        store: &St,
        mut set_resource_version: impl FnMut(&str) + Send,
        mut resync: Option<&mut ResyncTask>,
        exit_on: ExitOn,
        shutdown: &CancellationToken,
    ) -> WatchEnd
    where
        St: Store<T> + ?Sized,
    {
        let mut event_count = 0usize;
        let mut bookmark_warning = BookmarkWarning::new(exit_on, start);
        loop {
            let item = tokio::select! {
                biased;
                () = shutdown.cancelled() => return WatchEnd::Stopped,
                source = resync_failure(resync.as_deref_mut()) => {
                    return WatchEnd::Failed(Error::Resync { source });
                }
                () = bookmark_warning.tick() => {
                    bookmark_warning.warn_if_late(&self.name);
                    continue;
                }
                item = watch.next() => item,
            };
            let Some(item) = item else { break };
            // ANCHOR_END: handle_any_watch
            // ANCHOR: handle_any_watch_events
            let event = match item {
                Ok(event) => event,
                Err(error @ Error::UnexpectedType { .. }) => {
                    self.report(&error);
                    continue;
                }
                Err(error) => return WatchEnd::Failed(error),
            };
            match apply_event(&self.name, store, event) {
                Err(error) => return WatchEnd::Failed(error),
                Ok(progress) => {
                    set_resource_version(&progress.resource_version);
                    event_count += 1;
                    if exit_on == ExitOn::InitialEventsEnd
                        && progress.is_initial_events_end()
                    {
                        tracing::debug!(
                            reflector = %self.name,
                            events = event_count,
                            elapsed = ?start.elapsed(),
                            "received the bookmark that ends the initial events"
                        );
                        return WatchEnd::InitialEventsEnd;
                    }
                    bookmark_warning.observe_event();
                }
            }
        }
        if start.elapsed() < VERY_SHORT_WATCH && event_count == 0 {
            return WatchEnd::Failed(Error::VeryShortWatch {
                name: self.name.clone(),
            });
        }
        tracing::debug!(
            reflector = %self.name,
            events = event_count,
            "watch closed"
        );
        WatchEnd::Closed
    }
    // ANCHOR_END: handle_any_watch_events

    /// A watch event moved the version: record it and tell the updater.
    fn watch_reached(&self, resource_version: &str) {
        self.set_last_sync_resource_version(resource_version);
        if let Some(updater) = &self.options.resource_version_updater {
            updater.update_resource_version(resource_version);
        }
    }

    fn set_last_sync_resource_version(&self, resource_version: &str) {
        self.state.lock().resource_version =
            ResourceVersionState::synced(resource_version);
    }

    fn relist_resource_version(&self) -> String {
        self.state.lock().resource_version.relist_from().to_string()
    }

    /// Mirrors `rewatchResourceVersion`: where a streaming list starts.
    fn rewatch_resource_version(&self) -> String {
        self.state
            .lock()
            .resource_version
            .rewatch_from()
            .to_string()
    }

    fn set_phase(&self, phase: Phase) {
        self.state.lock().phase = phase;
    }

    /// Random in [min, 2×min), in whole seconds, so that watches do not all
    /// reconnect at once.
    fn watch_timeout_seconds(&self) -> u32 {
        let seconds =
            self.min_watch_timeout.as_secs_f64() * (rand::random::<f64>() + 1.0);
        // `as` saturates; a timeout beyond u32 seconds is not a concern.
        seconds as u32
    }

    /// Waits for the next backoff delay, or until shutdown.
    async fn back_off(&self, shutdown: &CancellationToken) -> Flow {
        let delay = {
            let mut state = self.state.lock();
            state.phase = Phase::BackingOff;
            state.backoff.next_delay()
        };
        tokio::select! {
            biased;
            () = shutdown.cancelled() => Flow::Stopped,
            () = tokio::time::sleep(delay) => Flow::Continue,
        }
    }

    fn report(&self, error: &Error) {
        match &self.options.watch_error_handler {
            Some(handler) => handler(&self.name, error),
            None => default_watch_error_handler(&self.name, error),
        }
    }
}

// ANCHOR: apply_event
/// Applies one watch event to `store`: the `switch event.Type` of client-go's
/// `handleAnyWatch`.
///
/// Returns how far the watch got, as a [`Bookmark`]: the version of the event's
/// object (or of the bookmark itself), annotated when it ends the initial events of
/// a streaming list. An `Error` event returns its error instead. A store error is
/// logged and the event still counts, as in client-go.
fn apply_event<T, St>(
    name: &str,
    store: &St,
    event: WatchEvent<T>,
) -> Result<Bookmark, Error>
where
    T: Resource,
    St: Store<T> + ?Sized,
{
    // ANCHOR: ex3-watch-handler
    let version_of =
        |obj: &T| obj.meta().resource_version.clone().unwrap_or_default();
    let (operation, resource_version, result) = match event {
        WatchEvent::Added(obj) => ("add", version_of(&obj), store.add(obj)),
        WatchEvent::Modified(obj) => ("update", version_of(&obj), store.update(obj)),
        WatchEvent::Deleted(obj) => ("delete", version_of(&obj), store.delete(obj)),
        // A bookmark changes nothing in the store; it only moves the version.
        WatchEvent::Bookmark(bookmark) => return Ok(bookmark),
        // Mirrors `apierrors.FromObject`: the watch ends with the server's error.
        WatchEvent::Error(status) => return Err(Error::from_status(*status)),
    };
    if let Err(error) = result {
        tracing::warn!(
            reflector = name,
            %error,
            "unable to {operation} watch event object in the store"
        );
    }
    Ok(Bookmark::new(resource_version))
    // ANCHOR_END: ex3-watch-handler
}
// ANCHOR_END: apply_event

// ANCHOR: after_watch
/// Decides what follows a watch: the error switch at the end of client-go's
/// `Reflector.watch`.
fn after_watch(end: WatchEnd, retry: &mut RetryWithDeadline) -> AfterWatch {
    // ANCHOR: ex3-after-watch
    let error = match end {
        WatchEnd::Stopped => return AfterWatch::Stop,
        // A normal close (the server's timeout, say): watch again from where we are.
        WatchEnd::Closed | WatchEnd::InitialEventsEnd => return AfterWatch::Rewatch,
        WatchEnd::Failed(error) => error,
    };
    retry.after(&error);
    if error.is_expired() {
        // Relist from the last version: a list "not older than" it may still be
        // served.
        AfterWatch::Relist(error)
    } else if error.is_watch_error_retriable() {
        // Overloaded or restarting: nothing is lost by watching again from the same
        // version.
        AfterWatch::BackoffThenRewatch(error)
    } else if error.is_internal_error() && retry.should_retry() {
        AfterWatch::RetryNow(error)
    } else {
        // A very short watch, an Error event, a failed resync, anything else.
        AfterWatch::Relist(error)
    }
    // ANCHOR_END: ex3-after-watch
}
// ANCHOR_END: after_watch

/// The failure of the resync task, if there is one; pending otherwise.
async fn resync_failure(resync: Option<&mut ResyncTask>) -> StoreError {
    match resync {
        Some(resync) => resync.failure().await,
        None => std::future::pending().await,
    }
}

/// Mirrors client-go's `initialEventsEndBookmarkTicker`: while a streaming list
/// waits for its end bookmark, warn every 10 s if no event has arrived for 10 s.
struct BookmarkWarning {
    ticker: Option<Interval>,
    start: Instant,
    last_event: Option<Instant>,
}

impl BookmarkWarning {
    fn new(exit_on: ExitOn, start: Instant) -> Self {
        let ticker = (exit_on == ExitOn::InitialEventsEnd).then(|| {
            tokio::time::interval_at(
                start + INITIAL_EVENTS_END_BOOKMARK_WARNING,
                INITIAL_EVENTS_END_BOOKMARK_WARNING,
            )
        });
        BookmarkWarning {
            ticker,
            start,
            last_event: None,
        }
    }

    async fn tick(&mut self) {
        match self.ticker.as_mut() {
            Some(ticker) => {
                ticker.tick().await;
            }
            None => std::future::pending().await,
        }
    }

    fn observe_event(&mut self) {
        if self.ticker.is_some() {
            self.last_event = Some(Instant::now());
        }
    }

    fn warn_if_late(&self, name: &str) {
        match self.last_event {
            None => tracing::warn!(
                reflector = name,
                waited = ?self.start.elapsed(),
                "awaiting the bookmark that ends the initial events; no events received yet"
            ),
            Some(last) if last.elapsed() >= INITIAL_EVENTS_END_BOOKMARK_WARNING => {
                tracing::warn!(
                    reflector = name,
                    since_last_event = ?last.elapsed(),
                    "the bookmark that ends the initial events has not arrived"
                );
            }
            Some(_) => {}
        }
    }
}

// ANCHOR: resync_task_start
/// Mirrors `startResync`: a task that calls `store.resync()` every period (when
/// `should_resync` agrees) and reports the first failure. Owned by the watch loop,
/// which stops it before returning; dropping it aborts the task.
struct ResyncTask {
    cancel: CancellationToken,
    handle: Option<JoinHandle<()>>,
    failure: Option<oneshot::Receiver<StoreError>>,
}

impl ResyncTask {
    fn start<T, S>(
        store: Arc<S>,
        period: Duration,
        should_resync: Option<ShouldResync>,
        name: String,
    ) -> Self
    where
        T: 'static,
        S: Store<T> + 'static,
    {
        let cancel = CancellationToken::new();
        if period.is_zero() {
            // client-go's resyncChan never fires for a zero period.
            return ResyncTask {
                cancel,
                handle: None,
                failure: None,
            };
        }
        let (report, failure) = oneshot::channel();
        let stop = cancel.clone();
        let handle = tokio::spawn(async move {
            loop {
                tokio::select! {
                    biased;
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(period) => {}
                }
                if should_resync.as_ref().is_none_or(|should| should()) {
                    tracing::debug!(reflector = %name, "forcing resync");
                    if let Err(error) = store.resync() {
                        // The watch loop may already be gone; then nobody needs the
                        // error.
                        let _ = report.send(error);
                        return;
                    }
                }
            }
        });
        ResyncTask {
            cancel,
            handle: Some(handle),
            failure: Some(failure),
        }
    }
    // ANCHOR_END: resync_task_start

    // ANCHOR: resync_task_stop
    /// The first resync error. Pending forever if there is none (or no task).
    async fn failure(&mut self) -> StoreError {
        let Some(failure) = self.failure.as_mut() else {
            return std::future::pending().await;
        };
        let received = failure.await;
        self.failure = None;
        match received {
            Ok(error) => error,
            // The task ended without an error.
            Err(_) => std::future::pending().await,
        }
    }

    /// Stops the task and waits for it to finish.
    async fn stop(mut self) {
        self.cancel.cancel();
        if let Some(handle) = self.handle.take() {
            // A panic in `store.resync()` surfaces here as a JoinError; the loop is
            // over either way.
            let _ = handle.await;
        }
    }
}

impl Drop for ResyncTask {
    fn drop(&mut self) {
        self.cancel.cancel();
        if let Some(handle) = self.handle.take() {
            handle.abort();
        }
    }
}
// ANCHOR_END: resync_task_stop

/// Unit tests of the pieces a learner writes, each in a module named after its
/// exercise region (`ex3_*`) and needing no region that comes later in the book;
/// and client-go's tests of `handleWatch`, `watch` and `resyncChan`, which reach
/// private functions. The scenarios that run a whole reflector are in
/// `tests/reflector.rs`.
#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use k8s_openapi::api::core::v1::Pod;
    use stage1_store::Cache;

    use super::*;
    use crate::fake::{
        Call, FakeListerWatcher, WatchReply, connection_refused, expired_status,
        internal_error_status, too_many_requests_status,
    };
    use crate::watch::WatchItem;

    type TestReflector = Reflector<Pod, FakeListerWatcher<Pod>, Cache<Pod>>;

    /// The longest any wait may take, in (paused) tokio time.
    const PATIENCE: Duration = Duration::from_secs(3600);

    fn pod(name: &str, resource_version: &str) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = Some(name.to_string());
        pod.metadata.namespace = Some("default".to_string());
        if !resource_version.is_empty() {
            pod.metadata.resource_version = Some(resource_version.to_string());
        }
        pod
    }

    /// A reflector over `fake` writing into a fresh cache.
    fn reflector(
        fake: &FakeListerWatcher<Pod>,
        options: ReflectorOptions,
    ) -> (TestReflector, Arc<Cache<Pod>>) {
        let store = Arc::new(Cache::for_resources());
        let options = options.name("test-reflector");
        (
            Reflector::new(fake.clone(), Arc::clone(&store), options),
            store,
        )
    }

    /// `name → resource version` of what `store` holds, sorted by name.
    fn contents(store: &Cache<Pod>) -> Vec<(String, String)> {
        let mut contents: Vec<_> = store
            .list()
            .iter()
            .map(|pod| {
                (
                    pod.metadata.name.clone().unwrap_or_default(),
                    pod.metadata.resource_version.clone().unwrap_or_default(),
                )
            })
            .collect();
        contents.sort();
        contents
    }

    /// A watch that delivers `items`, then stays open.
    fn open_watch(items: Vec<WatchItem<Pod>>) -> Watch<Pod> {
        Watch::new(futures::stream::iter(items).chain(futures::stream::pending()))
    }

    /// Runs `handle_any_watch` as `Reflector.watch` does (a plain watch, no resync
    /// task), recording each version the watch reaches on the reflector.
    async fn handle_watch(
        reflector: &TestReflector,
        watch: &mut Watch<Pod>,
        store: &Cache<Pod>,
        shutdown: &CancellationToken,
    ) -> WatchEnd {
        let handled = reflector.handle_any_watch(
            Instant::now(),
            watch,
            store,
            |rv| reflector.set_last_sync_resource_version(rv),
            None,
            ExitOn::StreamEnd,
            shutdown,
        );
        match tokio::time::timeout(PATIENCE, handled).await {
            Ok(end) => end,
            Err(_) => panic!("handle_any_watch did not return"),
        }
    }

    fn is_very_short(end: &WatchEnd) -> bool {
        matches!(end, WatchEnd::Failed(Error::VeryShortWatch { .. }))
    }

    mod ex3_relist_rv {
        use super::*;

        #[test]
        fn ex3_relist_rv_asks_for_any_version_before_the_first_sync() {
            assert_eq!(ResourceVersionState::NeverSynced.relist_from(), "0");
        }

        #[test]
        fn ex3_relist_rv_asks_for_the_last_version_once_synced() {
            assert_eq!(ResourceVersionState::synced("10").relist_from(), "10");
        }

        #[test]
        fn ex3_relist_rv_asks_for_the_newest_version_after_a_refusal() {
            let refused = ResourceVersionState::Unavailable {
                last: "10".to_string(),
            };
            assert_eq!(refused.relist_from(), "");
        }

        #[test]
        fn ex3_relist_rv_follows_the_state_through_a_refusal_and_a_list() {
            let mut state = ResourceVersionState::NeverSynced;
            assert_eq!(state.relist_from(), "0");
            assert_eq!(state.rewatch_from(), "");
            state = ResourceVersionState::synced("10");
            assert_eq!(state.relist_from(), "10");
            assert_eq!(state.rewatch_from(), "10");
            state.mark_unavailable();
            assert_eq!(state.relist_from(), "");
            assert_eq!(state.rewatch_from(), "");
            assert_eq!(state.last_synced(), "10");
            state.mark_available();
            assert_eq!(state, ResourceVersionState::synced("10"));
            assert_eq!(state.relist_from(), "10");
            assert_eq!(
                ResourceVersionState::synced(""),
                ResourceVersionState::NeverSynced
            );
        }
    }

    mod ex3_watch_handler {
        use super::*;

        fn apply(
            store: &Cache<Pod>,
            event: WatchEvent<Pod>,
        ) -> Result<Bookmark, Error> {
            apply_event("test-reflector", store, event)
        }

        #[test]
        fn ex3_watch_handler_applies_adds_updates_and_deletes() {
            let store = Cache::for_resources();
            let reached = apply(&store, WatchEvent::Added(Arc::new(pod("a", "1"))));
            assert_eq!(reached.expect("an add"), Bookmark::new("1"));
            assert_eq!(contents(&store), [("a".to_string(), "1".to_string())]);
            let reached =
                apply(&store, WatchEvent::Modified(Arc::new(pod("a", "2"))));
            assert_eq!(reached.expect("an update"), Bookmark::new("2"));
            assert_eq!(contents(&store), [("a".to_string(), "2".to_string())]);
            let reached =
                apply(&store, WatchEvent::Deleted(Arc::new(pod("a", "3"))));
            assert_eq!(reached.expect("a delete"), Bookmark::new("3"));
            assert!(store.is_empty());
        }

        #[test]
        fn ex3_watch_handler_passes_a_bookmark_on_and_leaves_the_store_alone() {
            let store = Cache::for_resources();
            store.add(Arc::new(pod("a", "1"))).expect("named");
            let end = Bookmark::initial_events_end("7");
            let reached = apply(&store, WatchEvent::Bookmark(end.clone()));
            assert_eq!(reached.expect("a bookmark"), end);
            assert_eq!(contents(&store), [("a".to_string(), "1".to_string())]);
        }

        #[test]
        fn ex3_watch_handler_turns_an_error_event_into_its_error() {
            let store = Cache::for_resources();
            let status = expired_status("too old resource version: 1 (2)");
            let error = apply(&store, WatchEvent::Error(Box::new(status)))
                .expect_err("an ERROR event ends the watch");
            assert!(error.is_expired(), "{error}");
            assert!(store.is_empty());
        }

        #[test]
        fn ex3_watch_handler_logs_a_store_error_and_still_counts_the_event() {
            let store = Cache::for_resources();
            let mut nameless = Pod::default();
            nameless.metadata.resource_version = Some("9".to_string());
            let reached = apply(&store, WatchEvent::Added(Arc::new(nameless)));
            assert_eq!(
                reached.expect("a store error is not the watch's"),
                Bookmark::new("9")
            );
            assert!(store.is_empty());
        }

        /// Mirrors client-go's `TestReflectorWatchHandler`
        /// (`tools/cache/reflector_test.go`): an object of another type is
        /// skipped, the others reach the store, and the version is the last
        /// event's (32), not the highest (55).
        #[tokio::test(start_paused = true)]
        async fn test_reflector_watch_handler() {
            let (reflector, store) =
                reflector(&FakeListerWatcher::new(), ReflectorOptions::default());
            store.add(Arc::new(pod("foo", ""))).expect("named");
            store.add(Arc::new(pod("bar", ""))).expect("named");
            let shutdown = CancellationToken::new();
            let mut watch = open_watch(vec![
                Err(Error::UnexpectedType {
                    expected: "v1/Pod".to_string(),
                    actual: "v1/Service".to_string(),
                }),
                Ok(WatchEvent::Deleted(Arc::new(pod("foo", "")))),
                Ok(WatchEvent::Modified(Arc::new(pod("bar", "55")))),
                Ok(WatchEvent::Added(Arc::new(pod("baz", "32")))),
            ]);
            // Stop once the last event is applied, as the Go test's wrapped
            // setLastSyncResourceVersion does.
            let end = reflector
                .handle_any_watch(
                    Instant::now(),
                    &mut watch,
                    &*store,
                    |rv| {
                        reflector.set_last_sync_resource_version(rv);
                        if rv == "32" {
                            shutdown.cancel();
                        }
                    },
                    None,
                    ExitOn::StreamEnd,
                    &shutdown,
                )
                .await;
            assert!(matches!(end, WatchEnd::Stopped), "{end:?}");
            assert_eq!(
                contents(&store),
                [
                    ("bar".to_string(), "55".to_string()),
                    ("baz".to_string(), "32".to_string())
                ]
            );
            assert_eq!(reflector.last_sync_resource_version(), "32");
        }
    }

    mod ex3_after_watch {
        use super::*;

        fn retry_off() -> RetryWithDeadline {
            RetryWithDeadline::new(
                Duration::ZERO,
                INTERNAL_ERROR_RESET_PERIOD,
                Error::is_internal_error,
            )
        }

        fn after(end: WatchEnd) -> AfterWatch {
            after_watch(end, &mut retry_off())
        }

        fn failed(
            status: k8s_openapi::apimachinery::pkg::apis::meta::v1::Status,
        ) -> WatchEnd {
            WatchEnd::Failed(Error::from_status(status))
        }

        #[test]
        fn ex3_after_watch_stops_on_shutdown() {
            assert!(matches!(after(WatchEnd::Stopped), AfterWatch::Stop));
        }

        #[test]
        fn ex3_after_watch_rewatches_after_a_normal_close() {
            assert!(matches!(after(WatchEnd::Closed), AfterWatch::Rewatch));
            assert!(matches!(
                after(WatchEnd::InitialEventsEnd),
                AfterWatch::Rewatch
            ));
        }

        #[test]
        fn ex3_after_watch_relists_after_an_expired_version() {
            let next = after(failed(expired_status("too old resource version")));
            assert!(
                matches!(&next, AfterWatch::Relist(error) if error.is_expired()),
                "{next:?}"
            );
        }

        #[test]
        fn ex3_after_watch_backs_off_after_429_and_connection_refused() {
            let next = after(failed(too_many_requests_status()));
            let AfterWatch::BackoffThenRewatch(error) = next else {
                panic!("{next:?}");
            };
            assert!(error.is_too_many_requests(), "{error}");
            let next = after(WatchEnd::Failed(connection_refused()));
            let AfterWatch::BackoffThenRewatch(error) = next else {
                panic!("{next:?}");
            };
            assert!(error.is_connection_refused(), "{error}");
        }

        #[tokio::test(start_paused = true)]
        async fn ex3_after_watch_retries_internal_errors_while_the_window_lasts() {
            let mut retry = RetryWithDeadline::new(
                Duration::from_secs(30),
                INTERNAL_ERROR_RESET_PERIOD,
                Error::is_internal_error,
            );
            let no_leader =
                || failed(internal_error_status("etcdserver: no leader"));
            for _ in 0..3 {
                let next = after_watch(no_leader(), &mut retry);
                assert!(matches!(next, AfterWatch::RetryNow(_)), "{next:?}");
                tokio::time::advance(Duration::from_secs(10)).await;
            }
            // 30 s after the first error: still inside the window.
            let next = after_watch(no_leader(), &mut retry);
            assert!(matches!(next, AfterWatch::RetryNow(_)), "{next:?}");
            tokio::time::advance(Duration::from_secs(10)).await;
            let next = after_watch(no_leader(), &mut retry);
            assert!(matches!(next, AfterWatch::Relist(_)), "{next:?}");
        }

        #[test]
        fn ex3_after_watch_relists_after_an_internal_error_when_retries_are_off() {
            let next = after(failed(internal_error_status("etcdserver: no leader")));
            assert!(matches!(next, AfterWatch::Relist(_)), "{next:?}");
        }

        #[test]
        fn ex3_after_watch_relists_after_anything_else() {
            let very_short = WatchEnd::Failed(Error::VeryShortWatch {
                name: "test-reflector".to_string(),
            });
            assert!(matches!(after(very_short), AfterWatch::Relist(_)));
            let forbidden = k8s_openapi::apimachinery::pkg::apis::meta::v1::Status {
                code: Some(403),
                reason: Some("Forbidden".to_string()),
                ..Default::default()
            };
            assert!(matches!(after(failed(forbidden)), AfterWatch::Relist(_)));
            let resync = WatchEnd::Failed(Error::Resync {
                source: StoreError::IndexNotFound {
                    name: "by-node".to_string(),
                },
            });
            assert!(matches!(after(resync), AfterWatch::Relist(_)));
        }

        /// Mirrors client-go's `TestReflectorWatchStoppedAfter`: shutdown while a
        /// watch is open ends `watch` without an error, and the watch it opened
        /// is stopped.
        #[tokio::test(start_paused = true)]
        async fn test_reflector_watch_stopped_after() {
            let fake = FakeListerWatcher::new();
            let (reflector, _store) = reflector(&fake, ReflectorOptions::default());
            let shutdown = CancellationToken::new();
            let mut resync = ResyncTask::start(
                Arc::clone(reflector.store()),
                Duration::ZERO,
                None,
                reflector.name().to_string(),
            );
            let cancel_soon = async {
                tokio::time::sleep(Duration::from_millis(10)).await;
                shutdown.cancel();
            };
            let (watched, ()) = tokio::time::timeout(PATIENCE, async {
                tokio::join!(
                    reflector.watch(None, &mut resync, &shutdown),
                    cancel_soon
                )
            })
            .await
            .expect("watch returns once shut down");
            watched.expect("no error on shutdown");
            assert_eq!(fake.watch_calls().len(), 1);
            assert_eq!(fake.list_calls(), vec![]);
            assert_eq!(fake.open_watches(), 0, "the watch was stopped");
        }
    }

    mod ex3_streaming_list {
        use super::*;
        use apimachinery::apis::meta::v1::ResourceVersionMatch;

        fn streaming(resource_version: &str) -> Call {
            Call::Watch(WatchOptions {
                resource_version: resource_version.to_string(),
                resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
                allow_watch_bookmarks: true,
                send_initial_events: true,
                ..WatchOptions::default()
            })
        }

        /// The fake's calls with each watch timeout checked and blanked.
        fn calls(fake: &FakeListerWatcher<Pod>) -> Vec<Call> {
            fake.calls()
                .into_iter()
                .map(|call| match call {
                    Call::Watch(mut options) => {
                        let timeout = options.timeout_seconds.take();
                        assert!(
                            timeout.is_some_and(|t| (300..600).contains(&t)),
                            "{timeout:?}"
                        );
                        Call::Watch(options)
                    }
                    list => list,
                })
                .collect()
        }

        fn fake_with(names: &[&str]) -> FakeListerWatcher<Pod> {
            let fake = FakeListerWatcher::new();
            for name in names {
                fake.add(pod(name, "")).expect("named");
            }
            fake
        }

        async fn stream(
            reflector: &TestReflector,
            shutdown: &CancellationToken,
        ) -> Result<Option<Watch<Pod>>, Error> {
            tokio::time::timeout(PATIENCE, reflector.watch_list(shutdown))
                .await
                .expect("the streaming list returns")
        }

        #[tokio::test(start_paused = true)]
        async fn ex3_streaming_list_replaces_the_store_at_the_end_bookmark() {
            let fake = fake_with(&["a", "b"]);
            let (reflector, store) = reflector(&fake, ReflectorOptions::default());
            store.add(Arc::new(pod("gone", "1"))).expect("named");
            let shutdown = CancellationToken::new();
            let mut watch = stream(&reflector, &shutdown)
                .await
                .expect("streamed")
                .expect("not shut down");
            assert_eq!(
                contents(&store),
                [
                    ("a".to_string(), "1".to_string()),
                    ("b".to_string(), "2".to_string())
                ]
            );
            assert_eq!(reflector.last_sync_resource_version(), "2");
            assert_eq!(reflector.phase(), Phase::StreamingList);
            assert_eq!(calls(&fake), [streaming("")]);
            // The stream stays open for the watch that follows.
            fake.add(pod("c", "")).expect("named");
            let next = tokio::time::timeout(PATIENCE, watch.next()).await;
            let Ok(Some(Ok(WatchEvent::Added(added)))) = next else {
                panic!("{next:?}");
            };
            assert_eq!(added.metadata.name.as_deref(), Some("c"));
        }

        #[tokio::test(start_paused = true)]
        async fn ex3_streaming_list_starts_over_if_the_stream_ends_early() {
            let fake = fake_with(&["a"]);
            fake.push_watch_reply(WatchReply::Items(vec![Ok(WatchEvent::Added(
                Arc::new(pod("stale", "1")),
            ))]));
            let (reflector, store) = reflector(&fake, ReflectorOptions::default());
            let shutdown = CancellationToken::new();
            stream(&reflector, &shutdown)
                .await
                .expect("streamed")
                .expect("not shut down");
            assert_eq!(calls(&fake), [streaming(""), streaming("")]);
            assert_eq!(contents(&store), [("a".to_string(), "1".to_string())]);
        }

        #[tokio::test(start_paused = true)]
        async fn ex3_streaming_list_starts_from_empty_after_an_expired_version() {
            let fake = fake_with(&["a"]);
            fake.fail_next_watch(Error::from_status(expired_status(
                "too old resource version: 1 (2)",
            )));
            let (reflector, store) = reflector(&fake, ReflectorOptions::default());
            reflector.set_last_sync_resource_version("1");
            let shutdown = CancellationToken::new();
            stream(&reflector, &shutdown)
                .await
                .expect("streamed")
                .expect("not shut down");
            assert_eq!(calls(&fake), [streaming("1"), streaming("")]);
            assert_eq!(contents(&store), [("a".to_string(), "1".to_string())]);
            assert_eq!(reflector.last_sync_resource_version(), "1");
        }

        #[tokio::test(start_paused = true)]
        async fn ex3_streaming_list_backs_off_after_429_and_streams_again() {
            let fake = fake_with(&["a"]);
            fake.fail_next_watch(Error::from_status(too_many_requests_status()));
            let (reflector, store) = reflector(&fake, ReflectorOptions::default());
            let shutdown = CancellationToken::new();
            let start = Instant::now();
            stream(&reflector, &shutdown)
                .await
                .expect("streamed")
                .expect("not shut down");
            assert!(start.elapsed() >= Duration::from_millis(800));
            assert_eq!(calls(&fake), [streaming(""), streaming("")]);
            assert_eq!(store.len(), 1);
        }

        #[tokio::test(start_paused = true)]
        async fn ex3_streaming_list_gives_up_on_other_errors() {
            let fake = fake_with(&["a"]);
            fake.fail_next_watch(Error::from_status(internal_error_status(
                "watchlist not supported",
            )));
            let (reflector, store) = reflector(&fake, ReflectorOptions::default());
            let shutdown = CancellationToken::new();
            let error = stream(&reflector, &shutdown)
                .await
                .expect_err("the caller falls back to a list");
            assert_eq!(error.code(), Some(500));
            assert_eq!(calls(&fake), [streaming("")]);
            assert!(store.is_empty());
        }

        #[tokio::test(start_paused = true)]
        async fn ex3_streaming_list_returns_nothing_once_shut_down() {
            let fake = fake_with(&["a"]);
            let (reflector, store) = reflector(&fake, ReflectorOptions::default());
            let shutdown = CancellationToken::new();
            shutdown.cancel();
            let watch = stream(&reflector, &shutdown).await.expect("no error");
            assert!(watch.is_none());
            assert_eq!(fake.calls(), vec![]);
            assert!(store.is_empty());
        }
    }

    /// client-go's tests of `handleWatch` that involve no event, so no exercise
    /// region: how a watch ends.
    mod handle_watch {
        use super::*;

        /// Mirrors client-go's `TestReflectorStopWatch`: a stop requested before
        /// the handler starts ends it at once.
        ///
        /// Go also checks that `handleWatch` calls `Stop` on the watch; here the
        /// caller, `Reflector::watch`, stops it (see
        /// `test_reflector_watch_stopped_after`).
        #[tokio::test(start_paused = true)]
        async fn test_reflector_stop_watch() {
            let (reflector, store) =
                reflector(&FakeListerWatcher::new(), ReflectorOptions::default());
            let shutdown = CancellationToken::new();
            shutdown.cancel();
            let mut watch = open_watch(vec![]);
            let end = handle_watch(&reflector, &mut watch, &store, &shutdown).await;
            assert!(matches!(end, WatchEnd::Stopped), "{end:?}");
        }

        /// Mirrors client-go's `TestReflectorHandleWatchStoppedBefore`: with the
        /// stop already requested, an event waiting in the watch is not applied.
        #[tokio::test(start_paused = true)]
        async fn test_reflector_handle_watch_stopped_before() {
            let (reflector, store) =
                reflector(&FakeListerWatcher::new(), ReflectorOptions::default());
            let shutdown = CancellationToken::new();
            shutdown.cancel();
            let mut watch =
                open_watch(vec![Ok(WatchEvent::Added(Arc::new(pod("a", "1"))))]);
            let end = handle_watch(&reflector, &mut watch, &store, &shutdown).await;
            assert!(matches!(end, WatchEnd::Stopped), "{end:?}");
            assert!(store.is_empty());
            assert_eq!(reflector.last_sync_resource_version(), "");
        }

        /// Mirrors client-go's `TestReflectorHandleWatchStoppedAfter`: a stop
        /// requested while the handler waits for events ends it.
        #[tokio::test(start_paused = true)]
        async fn test_reflector_handle_watch_stopped_after() {
            let (reflector, store) =
                reflector(&FakeListerWatcher::new(), ReflectorOptions::default());
            let shutdown = CancellationToken::new();
            let mut watch = open_watch(vec![]);
            let cancel_soon = async {
                tokio::time::sleep(Duration::from_millis(10)).await;
                shutdown.cancel();
            };
            let (end, ()) = tokio::join!(
                handle_watch(&reflector, &mut watch, &store, &shutdown),
                cancel_soon
            );
            assert!(matches!(end, WatchEnd::Stopped), "{end:?}");
        }

        /// Mirrors client-go's `TestReflectorHandleWatchResultChanClosedBefore`: a
        /// watch that has already ended, without events, is a very short watch.
        #[tokio::test(start_paused = true)]
        async fn test_reflector_handle_watch_result_chan_closed_before() {
            let (reflector, store) =
                reflector(&FakeListerWatcher::new(), ReflectorOptions::default());
            let mut watch = Watch::from_items(Vec::<WatchItem<Pod>>::new());
            let end = handle_watch(
                &reflector,
                &mut watch,
                &store,
                &CancellationToken::new(),
            )
            .await;
            assert!(is_very_short(&end), "{end:?}");
        }

        /// Mirrors client-go's `TestReflectorHandleWatchResultChanClosedAfter`: a
        /// watch the server ends 10 ms in, without events, is a very short watch.
        #[tokio::test(start_paused = true)]
        async fn test_reflector_handle_watch_result_chan_closed_after() {
            let (reflector, store) =
                reflector(&FakeListerWatcher::new(), ReflectorOptions::default());
            let (sender, receiver) =
                futures::channel::mpsc::unbounded::<WatchItem<Pod>>();
            let mut watch = Watch::new(receiver);
            let close_soon = async move {
                tokio::time::sleep(Duration::from_millis(10)).await;
                drop(sender);
            };
            let shutdown = CancellationToken::new();
            let (end, ()) = tokio::join!(
                handle_watch(&reflector, &mut watch, &store, &shutdown),
                close_soon
            );
            assert!(is_very_short(&end), "{end:?}");
        }

        /// Mirrors client-go's `TestReflectorWatchHandlerError` (client-go before
        /// 1.31): a watch stopped by someone else, before any event, ends the
        /// handler with an error.
        #[tokio::test(start_paused = true)]
        async fn test_reflector_watch_handler_error() {
            let (reflector, store) =
                reflector(&FakeListerWatcher::new(), ReflectorOptions::default());
            let mut watch = open_watch(vec![]);
            let stopper = watch.stopper();
            let stop = async move {
                tokio::task::yield_now().await;
                stopper.stop();
            };
            let shutdown = CancellationToken::new();
            let (end, ()) = tokio::join!(
                handle_watch(&reflector, &mut watch, &store, &shutdown),
                stop
            );
            assert!(is_very_short(&end), "{end:?}");
        }
    }

    /// client-go's tests of `Reflector.watch` and `resyncChan` that involve no
    /// exercise region.
    mod watch_loop {
        use super::*;

        /// Mirrors client-go's `TestReflectorWatchStoppedBefore`: with the stop
        /// already requested, `watch` neither lists nor watches.
        #[tokio::test(start_paused = true)]
        async fn test_reflector_watch_stopped_before() {
            let fake = FakeListerWatcher::new();
            let (reflector, _store) = reflector(&fake, ReflectorOptions::default());
            let shutdown = CancellationToken::new();
            shutdown.cancel();
            let mut resync = ResyncTask::start(
                Arc::clone(reflector.store()),
                Duration::ZERO,
                None,
                reflector.name().to_string(),
            );
            let watched = tokio::time::timeout(
                PATIENCE,
                reflector.watch(None, &mut resync, &shutdown),
            )
            .await
            .expect("watch returns at once");
            watched.expect("no error");
            assert_eq!(fake.calls(), vec![]);
        }

        /// Mirrors client-go's `TestReflectorResyncChan`: the resync task ticks
        /// after one period (here it asks `should_resync`, which says no).
        #[tokio::test(start_paused = true)]
        async fn test_reflector_resync_chan() {
            let store = Arc::new(Cache::<Pod>::for_resources());
            let (ticked, mut ticks) = tokio::sync::mpsc::unbounded_channel();
            let asked = Arc::new(AtomicUsize::new(0));
            let counter = Arc::clone(&asked);
            let should_resync: ShouldResync = Arc::new(move || {
                counter.fetch_add(1, Ordering::SeqCst);
                let _ = ticked.send(Instant::now());
                false
            });
            let start = Instant::now();
            let task = ResyncTask::start(
                store,
                Duration::from_millis(1),
                Some(should_resync),
                "test-reflector".to_string(),
            );
            let first = tokio::time::timeout(PATIENCE, ticks.recv())
                .await
                .expect("a tick in time")
                .expect("the task is running");
            assert_eq!(first - start, Duration::from_millis(1));
            task.stop().await;
            let asked_at_stop = asked.load(Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(1)).await;
            assert_eq!(asked.load(Ordering::SeqCst), asked_at_stop, "stopped");
        }
    }

    /// The typed case of client-go's `TestGetTypeDescriptionFromObject`: the
    /// description is the object type's API version and kind; and a reflector
    /// without a name is named after the place that created it.
    #[test]
    fn test_get_type_description_from_object() {
        let (reflector, _store) =
            reflector(&FakeListerWatcher::new(), ReflectorOptions::default());
        assert_eq!(reflector.type_description(), "v1/Pod");
        assert_eq!(reflector.name(), "test-reflector");
        let unnamed: TestReflector = Reflector::new(
            FakeListerWatcher::new(),
            Arc::new(Cache::for_resources()),
            ReflectorOptions::default(),
        );
        assert!(
            unnamed.name().contains("reflector.rs:"),
            "{}",
            unnamed.name()
        );
    }
}
