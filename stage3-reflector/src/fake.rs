//! A scriptable, in-memory [`ListerWatcher`] for tests, exercises and benches.
//!
//! It plays the API server: it holds objects under a resource-version counter, pages
//! lists and hands out continue tokens, and delivers watch events, replaying history
//! after the requested version. On top of that a test can script replies (a failed
//! list, a watch that closes at once), inject errors and events, expire continue
//! tokens, compact history, and read back the exact sequence of list and watch calls
//! with their options.
//!
//! client-go's tests do the same with `ListWatch{ListFunc, WatchFunc}` closures and
//! `watch.NewFake()`; here one type does both, so the scenarios read as a script.
//!
//! ```
//! # use stage3_reflector::{FakeListerWatcher, ListerWatcher, ListOptions};
//! # use k8s_openapi::api::core::v1::Pod;
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let fake = FakeListerWatcher::<Pod>::new();
//! let mut pod = Pod::default();
//! pod.metadata.name = Some("web-0".into());
//! pod.metadata.namespace = Some("default".into());
//! fake.add(pod).expect("a named pod has a key");
//! let page = fake.list(ListOptions::default()).await.expect("the fake serves lists");
//! assert_eq!(page.items.len(), 1);
//! assert_eq!(page.resource_version, "1");
//! # });
//! ```
//!
//! Waits such as [`wait_for_calls`](FakeListerWatcher::wait_for_calls) wait as long
//! as it takes: wrap them in `tokio::time::timeout` so that a broken reflector fails
//! the test instead of hanging it.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::Arc;

use futures::StreamExt;
use futures::channel::mpsc::{UnboundedSender, unbounded};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    Status, StatusCause, StatusDetails,
};
use kube::Resource;
use parking_lot::Mutex;
use stage1_store::{KeyError, meta_namespace_key_func};
use tokio::sync::Notify;

use crate::error::Error;
use crate::listwatch::{ListPage, ListerWatcher};
use crate::watch::{Bookmark, Watch, WatchEvent, WatchItem};
use apimachinery::api::errors::reason;
use apimachinery::apis::meta::v1::{ListOptions, WatchOptions};

/// One call the fake received, with its options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// `list(options)`
    List(ListOptions),
    /// `watch(options)`
    Watch(WatchOptions),
}

// ANCHOR: replies
/// A scripted answer to the next list call; see
/// [`FakeListerWatcher::push_list_reply`].
pub enum ListReply<K> {
    /// Serve the fake's objects, paged as the options ask (the default).
    Serve,
    /// Serve, then expire every continue token handed out so far, so that the next
    /// page fails with 410 Expired.
    ServeThenExpireContinueTokens,
    /// Answer with exactly this page.
    Page(ListPage<K>),
    /// Fail with this error.
    Fail(Error),
}

/// A scripted answer to the next watch call; see
/// [`FakeListerWatcher::push_watch_reply`].
pub enum WatchReply<K> {
    /// A live watch (the default): replays history after the requested version, then
    /// delivers every change until
    /// [`close_watches`](FakeListerWatcher::close_watches).
    Live,
    /// Fail with this error.
    Fail(Error),
    /// Deliver exactly these items, then close.
    Items(Vec<WatchItem<K>>),
    /// Deliver exactly these items, then stay open without sending more until the
    /// consumer stops the watch: client-go's `watch.NewFake()` with events pushed
    /// into it.
    ItemsThenIdle(Vec<WatchItem<K>>),
}
// ANCHOR_END: replies

impl<K> fmt::Debug for ListReply<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListReply::Serve => f.write_str("Serve"),
            ListReply::ServeThenExpireContinueTokens => {
                f.write_str("ServeThenExpireContinueTokens")
            }
            ListReply::Page(page) => write!(f, "Page({} items)", page.items.len()),
            ListReply::Fail(error) => write!(f, "Fail({error})"),
        }
    }
}

impl<K> fmt::Debug for WatchReply<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WatchReply::Live => f.write_str("Live"),
            WatchReply::Fail(error) => write!(f, "Fail({error})"),
            WatchReply::Items(items) => write!(f, "Items({} items)", items.len()),
            WatchReply::ItemsThenIdle(items) => {
                write!(f, "ItemsThenIdle({} items)", items.len())
            }
        }
    }
}

/// The fake API server's state.
struct State<K> {
    /// The objects by `namespace/name`; sorted, so lists and pages are
    /// deterministic.
    objects: BTreeMap<String, Arc<K>>,
    /// The resource version of the last change.
    resource_version: u64,
    /// Every change, for watches that start from an older version.
    history: Vec<(u64, WatchEvent<K>)>,
    /// Watches from versions below this get 410 Expired.
    compacted_before: u64,
    /// Continue tokens of older epochs are expired.
    continue_epoch: u64,
    calls: Vec<Call>,
    list_replies: VecDeque<ListReply<K>>,
    watch_replies: VecDeque<WatchReply<K>>,
    /// The senders of live watches; a closed one is a stopped watch.
    live_watches: Vec<UnboundedSender<WatchItem<K>>>,
}

struct Shared<K> {
    state: Mutex<State<K>>,
    changed: Notify,
}

/// A fake API server for one resource type, for tests, exercises and benches.
///
/// It holds objects under a resource-version counter, pages lists with continue
/// tokens, and replays history to watches that start from an older version. A test
/// can script the next replies ([`ListReply`], [`WatchReply`]), inject events and
/// errors ([`emit`](Self::emit) and friends), expire continue tokens, compact
/// history, and read back every call with its options ([`calls`](Self::calls)).
/// Waits such as [`wait_for_calls`](Self::wait_for_calls) wait as long as it takes:
/// wrap them in `tokio::time::timeout`.
///
/// Cloning gives another handle to the same fake, so a test can keep one while the
/// reflector owns another.
pub struct FakeListerWatcher<K> {
    shared: Arc<Shared<K>>,
}

impl<K> Clone for FakeListerWatcher<K> {
    fn clone(&self) -> Self {
        FakeListerWatcher {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<K> fmt::Debug for FakeListerWatcher<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.state.lock();
        f.debug_struct("FakeListerWatcher")
            .field("objects", &state.objects.len())
            .field("resource_version", &state.resource_version)
            .field("calls", &state.calls)
            .field("list_replies", &state.list_replies)
            .field("watch_replies", &state.watch_replies)
            .finish_non_exhaustive()
    }
}

impl<K> Default for FakeListerWatcher<K>
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Default,
{
    fn default() -> Self {
        Self::new()
    }
}

impl<K> FakeListerWatcher<K>
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Default,
{
    /// An empty fake at resource version 0.
    pub fn new() -> Self {
        FakeListerWatcher {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    objects: BTreeMap::new(),
                    resource_version: 0,
                    history: Vec::new(),
                    compacted_before: 0,
                    continue_epoch: 0,
                    calls: Vec::new(),
                    list_replies: VecDeque::new(),
                    watch_replies: VecDeque::new(),
                    live_watches: Vec::new(),
                }),
                changed: Notify::new(),
            }),
        }
    }

    // ----- changing the objects -----

    /// Creates `obj` at the next resource version and tells live watches (`ADDED`).
    /// Returns the stored object. Fails if `obj` has no name.
    pub fn add(&self, obj: K) -> Result<Arc<K>, KeyError> {
        self.change(obj, Change::Added)
    }

    /// Replaces `obj` (by key) at the next resource version and tells live watches
    /// (`MODIFIED`).
    pub fn modify(&self, obj: K) -> Result<Arc<K>, KeyError> {
        self.change(obj, Change::Modified)
    }

    /// Removes the object with `obj`'s key at the next resource version and tells
    /// live watches (`DELETED`, carrying `obj` at the deletion's version).
    pub fn delete(&self, obj: K) -> Result<Arc<K>, KeyError> {
        self.change(obj, Change::Deleted)
    }

    fn change(&self, mut obj: K, change: Change) -> Result<Arc<K>, KeyError> {
        let key = meta_namespace_key_func(&obj)?;
        let stored = {
            let mut state = self.shared.state.lock();
            state.resource_version += 1;
            let resource_version = state.resource_version;
            obj.meta_mut().resource_version = Some(resource_version.to_string());
            let obj = Arc::new(obj);
            let event = match change {
                Change::Added => {
                    state.objects.insert(key, Arc::clone(&obj));
                    WatchEvent::Added(Arc::clone(&obj))
                }
                Change::Modified => {
                    state.objects.insert(key, Arc::clone(&obj));
                    WatchEvent::Modified(Arc::clone(&obj))
                }
                Change::Deleted => {
                    state.objects.remove(&key);
                    WatchEvent::Deleted(Arc::clone(&obj))
                }
            };
            state.history.push((resource_version, event.clone()));
            state.broadcast(&event);
            obj
        };
        self.shared.changed.notify_waiters();
        Ok(stored)
    }

    /// Forgets history before the current version: later watches from an older
    /// version, and continue tokens, fail with 410 Expired (etcd compaction).
    pub fn compact(&self) {
        {
            let mut state = self.shared.state.lock();
            state.compacted_before = state.resource_version;
            state.history.clear();
            state.continue_epoch += 1;
        }
        self.shared.changed.notify_waiters();
    }

    /// Expires every continue token handed out so far: the next page request fails
    /// with 410.
    pub fn expire_continue_tokens(&self) {
        self.shared.state.lock().continue_epoch += 1;
    }

    /// The fake's current resource version.
    pub fn resource_version(&self) -> String {
        self.shared.state.lock().resource_version.to_string()
    }

    /// The stored objects, sorted by key.
    pub fn objects(&self) -> Vec<Arc<K>> {
        self.shared.state.lock().objects.values().cloned().collect()
    }

    // ----- scripting replies -----

    /// Queues the answer to a coming list call; calls take replies in order, and
    /// serve the objects once the queue is empty.
    pub fn push_list_reply(&self, reply: ListReply<K>) {
        self.shared.state.lock().list_replies.push_back(reply);
    }

    /// Queues the answer to a coming watch call; calls take replies in order, and
    /// open live watches once the queue is empty.
    pub fn push_watch_reply(&self, reply: WatchReply<K>) {
        self.shared.state.lock().watch_replies.push_back(reply);
    }

    /// Makes the next list call fail with `error`.
    pub fn fail_next_list(&self, error: Error) {
        self.push_list_reply(ListReply::Fail(error));
    }

    /// Makes the next watch call fail with `error`.
    pub fn fail_next_watch(&self, error: Error) {
        self.push_watch_reply(WatchReply::Fail(error));
    }

    // ----- talking to open watches -----

    /// Sends `item` to every live watch, as it is (no version change, no history).
    pub fn emit(&self, item: WatchItem<K>) {
        let item = match item {
            Ok(event) => event,
            Err(error) => {
                // Errors cannot be cloned; only the newest live watch gets this one.
                let state = self.shared.state.lock();
                if let Some(watch) =
                    state.live_watches.iter().rev().find(|w| !w.is_closed())
                {
                    // A watch stopped just now simply misses it.
                    let _ = watch.unbounded_send(Err(error));
                }
                return;
            }
        };
        self.shared.state.lock().broadcast(&item);
    }

    /// Sends a bookmark at `resource_version` to every live watch.
    pub fn emit_bookmark(&self, resource_version: &str) {
        self.emit(Ok(WatchEvent::Bookmark(Bookmark::new(resource_version))));
    }

    /// Sends an `ERROR` event with `status` to every live watch.
    pub fn emit_error(&self, status: Status) {
        self.emit(Ok(WatchEvent::Error(Box::new(status))));
    }

    /// Sends the newest live watch an object of another type (`actual`, such as
    /// `v1/Service`), as a decoder reports it.
    pub fn emit_unexpected_type(&self, actual: &str) {
        let dynamic_type = K::DynamicType::default();
        let expected = format!(
            "{}/{}",
            K::api_version(&dynamic_type),
            K::kind(&dynamic_type)
        );
        self.emit(Err(Error::UnexpectedType {
            expected,
            actual: actual.to_string(),
        }));
    }

    /// Ends every live watch normally, as the server does when a watch times out.
    pub fn close_watches(&self) {
        self.shared.state.lock().live_watches.clear();
        self.shared.changed.notify_waiters();
    }

    /// How many live watches are open and not stopped by their consumer.
    pub fn open_watches(&self) -> usize {
        self.shared
            .state
            .lock()
            .live_watches
            .iter()
            .filter(|watch| !watch.is_closed())
            .count()
    }

    // ----- what happened -----

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.shared.state.lock().calls.clone()
    }

    /// The options of every list call so far.
    pub fn list_calls(&self) -> Vec<ListOptions> {
        self.calls()
            .into_iter()
            .filter_map(|call| match call {
                Call::List(options) => Some(options),
                Call::Watch(_) => None,
            })
            .collect()
    }

    /// The options of every watch call so far.
    pub fn watch_calls(&self) -> Vec<WatchOptions> {
        self.calls()
            .into_iter()
            .filter_map(|call| match call {
                Call::Watch(options) => Some(options),
                Call::List(_) => None,
            })
            .collect()
    }

    /// Waits until at least `count` calls have been made.
    pub async fn wait_for_calls(&self, count: usize) {
        self.wait_until(|state| state.calls.len() >= count).await;
    }

    /// Waits until at least `count` watch calls have been made.
    pub async fn wait_for_watch_calls(&self, count: usize) {
        self.wait_until(|state| {
            state
                .calls
                .iter()
                .filter(|call| matches!(call, Call::Watch(_)))
                .count()
                >= count
        })
        .await;
    }

    /// Waits until at least `count` list calls have been made.
    pub async fn wait_for_list_calls(&self, count: usize) {
        self.wait_until(|state| {
            state
                .calls
                .iter()
                .filter(|call| matches!(call, Call::List(_)))
                .count()
                >= count
        })
        .await;
    }

    async fn wait_until(&self, mut done: impl FnMut(&State<K>) -> bool) {
        loop {
            let notified = self.shared.changed.notified();
            let mut notified = std::pin::pin!(notified);
            // Register before checking, so that a change in between is not missed.
            notified.as_mut().enable();
            if done(&self.shared.state.lock()) {
                return;
            }
            notified.await;
        }
    }

    // ----- serving -----

    fn serve_list(&self, options: ListOptions) -> Result<ListPage<K>, Error> {
        let mut state = self.shared.state.lock();
        state.calls.push(Call::List(options.clone()));
        let reply = state.list_replies.pop_front().unwrap_or(ListReply::Serve);
        match reply {
            ListReply::Serve => state.page(&options),
            ListReply::ServeThenExpireContinueTokens => {
                let page = state.page(&options);
                state.continue_epoch += 1;
                page
            }
            ListReply::Page(page) => Ok(page),
            ListReply::Fail(error) => Err(error),
        }
    }

    fn serve_watch(&self, options: WatchOptions) -> Result<Watch<K>, Error> {
        let mut state = self.shared.state.lock();
        state.calls.push(Call::Watch(options.clone()));
        let reply = state.watch_replies.pop_front().unwrap_or(WatchReply::Live);
        match reply {
            WatchReply::Live => state.open_live_watch(&options),
            WatchReply::Fail(error) => Err(error),
            WatchReply::Items(items) => Ok(Watch::from_items(items)),
            WatchReply::ItemsThenIdle(items) => Ok(Watch::new(
                futures::stream::iter(items).chain(futures::stream::pending()),
            )),
        }
    }
}

enum Change {
    Added,
    Modified,
    Deleted,
}

impl<K: Send + Sync + 'static> State<K> {
    fn broadcast(&mut self, event: &WatchEvent<K>) {
        self.live_watches.retain(|watch| {
            // A send fails only when the consumer has stopped the watch: forget it.
            watch.unbounded_send(Ok(event.clone())).is_ok()
        });
    }

    /// The version a request names: `""` and `"0"` mean the current one.
    fn requested_version(&self, resource_version: &str) -> Result<u64, Error> {
        if resource_version.is_empty() || resource_version == "0" {
            return Ok(self.resource_version);
        }
        let requested: u64 = resource_version
            .parse()
            .map_err(|_| Error::from_status(bad_request_status(resource_version)))?;
        if requested > self.resource_version {
            return Err(Error::from_status(too_large_resource_version_status(
                requested,
                self.resource_version,
            )));
        }
        Ok(requested)
    }

    fn page(&self, options: &ListOptions) -> Result<ListPage<K>, Error> {
        // A first page is served at the current version (an older requested version
        // is fine: "not older than"); later pages keep the first page's
        // version.
        let (offset, resource_version) = if options.continue_token.is_empty() {
            self.requested_version(&options.resource_version)?;
            (0, self.resource_version)
        } else {
            self.parse_continue(&options.continue_token)?
        };
        let limit = match options.limit {
            0 => usize::MAX,
            limit => usize::try_from(limit).unwrap_or(usize::MAX),
        };
        let items: Vec<Arc<K>> = self
            .objects
            .values()
            .skip(offset)
            .take(limit)
            .cloned()
            .collect();
        let end = offset.saturating_add(items.len());
        let page = ListPage::new(items, resource_version.to_string());
        if end < self.objects.len() {
            let token = format!(
                "fake-continue:{}:{}:{}",
                self.continue_epoch, end, resource_version
            );
            Ok(page.with_continue(token))
        } else {
            Ok(page)
        }
    }

    fn parse_continue(&self, token: &str) -> Result<(usize, u64), Error> {
        let mut parts = token
            .strip_prefix("fake-continue:")
            .unwrap_or("")
            .split(':');
        let parsed = match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(epoch), Some(offset), Some(rv), None) => {
                match (
                    epoch.parse::<u64>(),
                    offset.parse::<usize>(),
                    rv.parse::<u64>(),
                ) {
                    (Ok(epoch), Ok(offset), Ok(rv)) => Some((epoch, offset, rv)),
                    _ => None,
                }
            }
            _ => None,
        };
        let Some((epoch, offset, resource_version)) = parsed else {
            return Err(Error::from_status(bad_request_status(token)));
        };
        if epoch != self.continue_epoch {
            return Err(Error::from_status(expired_status(
                "The provided continue parameter is too old to display a consistent list result. \
                 You can start a new list without the continue parameter.",
            )));
        }
        Ok((offset, resource_version))
    }

    fn open_live_watch(
        &mut self,
        options: &WatchOptions,
    ) -> Result<Watch<K>, Error> {
        let (sender, receiver) = unbounded();
        let send = |item: WatchItem<K>| {
            // The receiver is still in our hands, so this cannot fail.
            let _ = sender.unbounded_send(item);
        };
        if options.send_initial_events {
            let requested = self.requested_version(&options.resource_version)?;
            for obj in self.objects.values() {
                send(Ok(WatchEvent::Added(Arc::clone(obj))));
            }
            let version = requested.max(self.resource_version);
            send(Ok(WatchEvent::Bookmark(Bookmark::initial_events_end(
                version.to_string(),
            ))));
        } else if options.resource_version == "0" {
            // "Any version": the server starts with the current state.
            for obj in self.objects.values() {
                send(Ok(WatchEvent::Added(Arc::clone(obj))));
            }
        } else if !options.resource_version.is_empty() {
            let requested = self.requested_version(&options.resource_version)?;
            if requested < self.compacted_before {
                return Err(Error::from_status(expired_status(&format!(
                    "too old resource version: {requested} ({})",
                    self.compacted_before
                ))));
            }
            for (version, event) in &self.history {
                if *version > requested {
                    send(Ok(event.clone()));
                }
            }
        }
        self.live_watches.push(sender);
        Ok(Watch::new(receiver))
    }
}

impl<K> ListerWatcher<K> for FakeListerWatcher<K>
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Default,
{
    async fn list(&self, options: ListOptions) -> Result<ListPage<K>, Error> {
        let result = self.serve_list(options);
        self.shared.changed.notify_waiters();
        result
    }

    async fn watch(&self, options: WatchOptions) -> Result<Watch<K>, Error> {
        let result = self.serve_watch(options);
        self.shared.changed.notify_waiters();
        result
    }
}

// ----- statuses and errors a real server sends -----

fn failure(code: i32, reason: &str, message: &str) -> Status {
    Status {
        code: Some(code),
        reason: Some(reason.to_string()),
        message: Some(message.to_string()),
        status: Some("Failure".to_string()),
        ..Status::default()
    }
}

/// 410 Expired, as a server sends it for a compacted resource version.
pub fn expired_status(message: &str) -> Status {
    failure(410, reason::EXPIRED, message)
}

/// 410 Gone, as servers before 1.18 sent it for a compacted resource version.
pub fn gone_status(message: &str) -> Status {
    failure(410, reason::GONE, message)
}

/// 429 TooManyRequests, with a one-second retry hint.
pub fn too_many_requests_status() -> Status {
    let mut status = failure(
        429,
        reason::TOO_MANY_REQUESTS,
        "too many requests, please try again later",
    );
    status.details = Some(StatusDetails {
        retry_after_seconds: Some(1),
        ..StatusDetails::default()
    });
    status
}

/// 500 InternalError with `message`, such as `etcdserver: no leader`.
pub fn internal_error_status(message: &str) -> Status {
    failure(
        500,
        reason::INTERNAL_ERROR,
        &format!("Internal error occurred: {message}"),
    )
}

/// 504 Timeout with the `ResourceVersionTooLarge` cause, as a lagging watch cache
/// sends it.
pub fn too_large_resource_version_status(requested: u64, current: u64) -> Status {
    let mut status = failure(
        504,
        reason::TIMEOUT,
        &format!("Too large resource version: {requested}, current: {current}"),
    );
    status.details = Some(StatusDetails {
        causes: Some(vec![StatusCause {
            reason: Some(reason::CAUSE_RESOURCE_VERSION_TOO_LARGE.to_string()),
            message: Some(format!(
                "Too large resource version: {requested}, current: {current}"
            )),
            field: None,
        }]),
        retry_after_seconds: Some(1),
        ..StatusDetails::default()
    });
    status
}

fn bad_request_status(what: &str) -> Status {
    failure(400, "BadRequest", &format!("invalid value {what:?}"))
}

/// A transport error whose source is an I/O `ConnectionRefused`, as a client reports
/// a server that is down.
pub fn connection_refused() -> Error {
    Error::Transport {
        source: Box::new(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "connection refused",
        )),
    }
}
