//! Mirrors apiserver's `pkg/storage/etcd3/watcher.go`: the watchChan of source
//! document 001.
//!
//! A watchChan turns one etcd watch into a Kubernetes watch. Two tasks and three
//! channels:
//!
//! ```text
//!   etcd watch ──► start_watching ──incoming (100)──► process_event ──result (100)──► Watch
//!                        │  (sync first when initial_rev is 0)   │ transform + filter
//!                        └──────────── errors (1) ──► run ───────┴──► one Error event, then close
//! ```
//!
//! [`run`](WatchChan::run) owns both tasks: whatever ends the watch (an error, the
//! etcd stream closing, or the consumer dropping the [`Watch`]) cancels the shared
//! token, waits for the consumer task, and closes the result channel.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::{Watch, WatchItem};
#[allow(
    unused_imports,
    reason = "used only by the ex5-transform exercise, which may be stubbed"
)]
use apimachinery::watch::Bookmark;
use apimachinery::watch::WatchEvent;
use futures::{Stream, StreamExt};
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::decode;
use super::event::{Event, parse_event, parse_kv, progress_notify_event};
use crate::StorageError;
use crate::api_object_versioner::{next_revision, resource_version_of, revision_of};
use crate::kv::{Kv, KvError, ProgressRequester, RangeRequest, WatchRequest};
use crate::{Object, ResourceInfo, SelectionPredicate};

/// Mirrors `incomingBufSize`: events read from etcd, waiting to be decoded.
pub const INCOMING_BUF_SIZE: usize = 100;
/// Mirrors `outgoingBufSize`: decoded events waiting for the consumer.
pub const OUTGOING_BUF_SIZE: usize = 100;
/// Mirrors `maxLimit`: the page size of the initial sync.
pub const SYNC_PAGE_SIZE: i64 = 10_000;

/// What a watchChan is asked to do: the arguments of `watcher.createWatchChan`.
#[derive(Clone, Debug, Default)]
pub struct WatchChanOptions {
    /// Start after this resource version (as parsed, a `uint64`); 0 means "from
    /// the current state". The watchChan converts it to an etcd revision with
    /// checked arithmetic: a version at or above `i64::MAX` has no revision after
    /// it, so such a watch stays open and sees nothing (upstream's
    /// `wc.initialRev + 1` wraps instead).
    pub initial_rev: u64,
    /// List the current state as create events before watching (`sync`), whatever
    /// `initial_rev` is: upstream's `areInitialEventsRequired` (`""`/`"0"` without
    /// `sendInitialEvents`, or `sendInitialEvents=true` at any version). With a
    /// non-zero `initial_rev` the store must have reached it, or the watch ends
    /// with a 504 `ResourceVersionTooLarge` error event.
    pub force_initial_events: bool,
    /// Watch every key under the key (a list watch) rather than one key.
    pub recursive: bool,
    /// Ask etcd for progress notifications, which become bookmarks.
    pub progress_notify: bool,
    /// Which objects the watcher wants.
    pub predicate: SelectionPredicate,
    /// After the initial sync, send a bookmark annotated
    /// `k8s.io/initial-events-end` (`isInitialEventsEndBookmarkRequired`:
    /// `sendInitialEvents` with bookmarks allowed).
    pub initial_events_end_bookmark: bool,
    /// Where the open etcd watch registers, so that the store can ask it for
    /// progress ([`ProgressRegistry::request_progress`]).
    pub progress_registry: Option<Arc<ProgressRegistry>>,
}

// ANCHOR: progress_registry
/// The open etcd watches of one store, for `store.RequestWatchProgress`: the Cacher
/// asks for progress when a consistent read waits, and each watch answers with a
/// progress notification at etcd's current revision (a bookmark), so a quiet cache
/// catches up without any write.
#[derive(Default)]
pub struct ProgressRegistry {
    watches: parking_lot::Mutex<Vec<(u64, Arc<dyn ProgressRequester>)>>,
    next_id: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for ProgressRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressRegistry")
            .field("watches", &self.watches.lock().len())
            .finish()
    }
}

impl ProgressRegistry {
    /// Asks every open watch for a progress notification. Returns how many were
    /// asked.
    pub async fn request_progress(&self) -> usize {
        let requesters: Vec<_> = self
            .watches
            .lock()
            .iter()
            .map(|(_, r)| Arc::clone(r))
            .collect();
        for requester in &requesters {
            if let Err(err) = requester.request_progress().await {
                tracing::debug!(%err, "progress request failed");
            }
        }
        requesters.len()
    }

    fn register(
        self: &Arc<Self>,
        requester: Arc<dyn ProgressRequester>,
    ) -> ProgressRegistration {
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.watches.lock().push((id, requester));
        ProgressRegistration {
            registry: Arc::clone(self),
            id,
        }
    }
}

/// Removes a watch from its registry when the watch ends.
struct ProgressRegistration {
    registry: Arc<ProgressRegistry>,
    id: u64,
}

impl Drop for ProgressRegistration {
    fn drop(&mut self) {
        self.registry
            .watches
            .lock()
            .retain(|(id, _)| *id != self.id);
    }
}
// ANCHOR_END: progress_registry

// ANCHOR: watch_chan
/// Mirrors `watchChan`: one etcd watch turned into Kubernetes watch events.
pub struct WatchChan {
    kv: Arc<dyn Kv>,
    info: ResourceInfo,
    key: String,
    initial_rev: u64,
    force_initial_events: bool,
    recursive: bool,
    progress_notify: bool,
    internal_pred: SelectionPredicate,
    initial_events_end_bookmark: bool,
    progress_registry: Option<Arc<ProgressRegistry>>,
    /// `ctx` and `cancel`: cancelled by whatever ends the watch, and by dropping
    /// the [`Watch`].
    cancel: CancellationToken,
    result_tx: mpsc::Sender<WatchItem<Object>>,
}
// ANCHOR_END: watch_chan

impl WatchChan {
    /// Mirrors `watcher.Watch` + `createWatchChan` + `go wc.run()`: starts the
    /// watchChan on the current tokio runtime and returns the consumer's end.
    /// Dropping or stopping the returned [`Watch`] cancels every task of the
    /// watchChan.
    pub fn start(
        kv: Arc<dyn Kv>,
        info: ResourceInfo,
        key: impl Into<String>,
        options: WatchChanOptions,
    ) -> Watch<Object> {
        let mut key = key.into();
        if options.recursive && !key.ends_with('/') {
            key.push('/');
        }
        let (result_tx, result_rx) = mpsc::channel(OUTGOING_BUF_SIZE);
        let cancel = CancellationToken::new();
        let wc = WatchChan {
            kv,
            info,
            key,
            initial_rev: options.initial_rev,
            force_initial_events: options.force_initial_events,
            recursive: options.recursive,
            progress_notify: options.progress_notify,
            internal_pred: options.predicate,
            initial_events_end_bookmark: options.initial_events_end_bookmark,
            progress_registry: options.progress_registry,
            cancel: cancel.clone(),
            result_tx,
        };
        tokio::spawn(Arc::new(wc).run());
        Watch::new(ResultStream {
            rx: result_rx,
            _cancel_on_drop: cancel.drop_guard(),
        })
    }

    // ANCHOR: run
    /// Mirrors `watchChan.run`: starts the producer
    /// ([`start_watching`](Self::start_watching)) and the consumer
    /// ([`process_event`](Self::process_event)), waits for an error, the end of
    /// the etcd watch or cancellation, then reaps both and closes the result
    /// channel.
    async fn run(self: Arc<Self>) {
        let (incoming_tx, incoming_rx) = mpsc::channel(INCOMING_BUF_SIZE);
        let (err_tx, mut err_rx) = mpsc::channel::<StorageError>(1);
        let mut producer = tokio::spawn(
            Arc::clone(&self).start_watching(incoming_tx, err_tx.clone()),
        );
        let consumer =
            tokio::spawn(Arc::clone(&self).process_event(incoming_rx, err_tx));

        let mut producer_done = false;
        tokio::select! {
            biased;
            Some(err) = err_rx.recv() => {
                // The error event reaches the consumer before the result channel
                // closes, unless the consumer has given up.
                let event = Ok(WatchEvent::Error(Box::new(err.to_status())));
                tokio::select! {
                    _ = self.result_tx.send(event) => {}
                    () = self.cancel.cancelled() => {}
                }
            }
            _ = &mut producer => producer_done = true,
            () = self.cancel.cancelled() => {}
        }
        // Reap every task, whatever ended the watch. Cancelling twice is fine.
        self.cancel.cancel();
        let _ = consumer.await;
        if !producer_done {
            let _ = producer.await;
        }
        // `self` (and with it `result_tx`) drops here: the consumer sees the end of
        // the stream.
    }
    // ANCHOR_END: run

    // ANCHOR: start_watching
    /// Mirrors `watchChan.startWatching`: lists first when initial events are
    /// required ([`sync`](Self::sync), which moves the start to the list's
    /// revision), then watches from `initial_rev + 1` with `prev_kv`, `prefix`
    /// (for a list watch) and `progress_notify`, parsing each etcd event onto
    /// the incoming channel. A required list at a version the store
    /// has not reached is a `TooLargeResourceVersion` error instead. A start
    /// after `i64::MAX` (or after a version no revision reaches) opens no etcd
    /// watch: nothing can follow it, and the watch stays open, empty, until it
    /// is cancelled.
    async fn start_watching(
        self: Arc<Self>,
        incoming: mpsc::Sender<Event>,
        errors: mpsc::Sender<StorageError>,
    ) {
        // `None`: beyond every etcd revision.
        let mut initial_rev = revision_of(self.initial_rev);
        if self.initial_rev > 0
            && self.force_initial_events
            && let Err(err) = self.check_not_ahead(self.initial_rev).await
        {
            return self.send_error(&errors, err);
        }
        if self.force_initial_events {
            match self.sync(&incoming).await {
                Ok(rev) => initial_rev = Some(rev),
                Err(err) => {
                    tracing::error!(
                        key = %self.key,
                        %err,
                        "failed to sync with latest state"
                    );
                    self.send_error(&errors, err);
                    return;
                }
            }
        }
        if self.initial_events_end_bookmark
            && let Some(rev) = initial_rev
        {
            let mut end = progress_notify_event(rev);
            end.is_initial_events_end_bookmark = true;
            self.send_event(&incoming, end).await;
        }
        // ANCHOR_END: start_watching
        // ANCHOR: start_watching_open
        let Some(start_revision) = initial_rev.and_then(next_revision) else {
            // No revision follows: an empty watch until the consumer stops it.
            self.cancel.cancelled().await;
            return;
        };
        let request = WatchRequest {
            key: self.key.clone().into(),
            prefix: self.recursive,
            start_revision,
            prev_kv: true,
            progress_notify: self.progress_notify,
        };
        let watch = tokio::select! {
            watch = self.kv.watch(request) => watch,
            () = self.cancel.cancelled() => return,
        };
        let mut watch = match watch {
            Ok(watch) => watch,
            Err(err) => return self.send_error(&errors, interpret_watch_error(err)),
        };
        let _registration = self
            .progress_registry
            .as_ref()
            .map(|registry| registry.register(Arc::clone(&watch.progress)));
        // ANCHOR_END: start_watching_open
        // ANCHOR: start_watching_loop
        loop {
            let response = tokio::select! {
                response = watch.responses.next() => response,
                () = self.cancel.cancelled() => return,
            };
            let response = match response {
                // The etcd side ended the watch (client closed): the watch is over.
                None => return,
                Some(Err(err)) => {
                    return self.send_error(&errors, interpret_watch_error(err));
                }
                Some(Ok(response)) => response,
            };
            if response.compact_revision != 0 {
                let err = KvError::Compacted {
                    compacted: response.compact_revision,
                };
                return self.send_error(&errors, interpret_watch_error(err));
            }
            if response.canceled {
                let reason =
                    format!("etcd cancelled the watch: {}", response.cancel_reason);
                return self.send_error(&errors, StorageError::Internal(reason));
            }
            if response.is_progress_notify() {
                self.send_event(
                    &incoming,
                    progress_notify_event(response.header_revision),
                )
                .await;
                continue;
            }
            for event in &response.events {
                match parse_event(event) {
                    Ok(parsed) => self.send_event(&incoming, parsed).await,
                    Err(message) => {
                        tracing::error!(
                            key = %self.key,
                            %message,
                            "watch chan error"
                        );
                        return self
                            .send_error(&errors, StorageError::Internal(message));
                    }
                }
            }
        }
    }
    // ANCHOR_END: start_watching_loop

    /// The check upstream's `startWatching` makes before a required list at an
    /// explicit version: the store's current revision
    /// (`GetCurrentResourceVersionFromStorage`) must have reached it, else
    /// `NewTooLargeResourceVersionError` (504, `ResourceVersionTooLarge`,
    /// Retry-After), and the client relists from `""`.
    async fn check_not_ahead(&self, initial_rev: u64) -> Result<(), StorageError> {
        let current = tokio::select! {
            current = super::current_revision(self.kv.as_ref(), self.key.clone()) => {
                current.map_err(interpret_watch_error)?
            }
            () = self.cancel.cancelled() => return Err(StorageError::Internal("cancelled".into())),
        };
        // Compared as `uint64`, as upstream's `uint64(wc.initialRev) >
        // currentStorageRV`.
        let current = resource_version_of(current);
        if initial_rev > current {
            return Err(StorageError::TooLargeResourceVersion {
                requested: initial_rev,
                current,
                // Upstream: `wait.Jitter(1*time.Second, 3)`, 1 to 4 s; its
                // lower bound here.
                retry_after_seconds: 1,
            });
        }
        Ok(())
    }

    // ANCHOR: sync
    /// Mirrors `watchChan.sync`: reads the current state (in pages of
    /// [`SYNC_PAGE_SIZE`], all at the revision of the first page) and queues
    /// every key as a create event. Returns that revision, after which the watch
    /// starts.
    async fn sync(
        &self,
        incoming: &mpsc::Sender<Event>,
    ) -> Result<i64, StorageError> {
        let mut request = RangeRequest {
            key: self.key.clone().into(),
            prefix: self.recursive,
            limit: SYNC_PAGE_SIZE,
            ..RangeRequest::default()
        };
        loop {
            let response = tokio::select! {
                response = self.kv.range(request.clone()) => {
                    response.map_err(interpret_watch_error)?
                }
                () = self.cancel.cancelled() => {
                    return Err(StorageError::Internal("cancelled".into()));
                }
            };
            if request.revision == 0 {
                request.revision = response.header_revision;
            }
            let last_key = response.kvs.last().map(|kv| kv.key.clone());
            for kv in &response.kvs {
                self.send_event(incoming, parse_kv(kv)).await;
            }
            match last_key {
                Some(last) if response.more => {
                    let mut next = last.to_vec();
                    next.push(0);
                    request.from_key = Some(next.into());
                }
                _ => return Ok(request.revision),
            }
        }
    }
    // ANCHOR_END: sync

    // ANCHOR: process_event
    /// Mirrors `watchChan.processEvent`: decodes and filters each incoming event and
    /// passes the result on, until cancelled.
    async fn process_event(
        self: Arc<Self>,
        mut incoming: mpsc::Receiver<Event>,
        errors: mpsc::Sender<StorageError>,
    ) {
        loop {
            let event = tokio::select! {
                event = incoming.recv() => event,
                () = self.cancel.cancelled() => return,
            };
            let Some(event) = event else { return };
            let result = match self.transform(event) {
                Ok(Some(result)) => result,
                Ok(None) => continue,
                Err(err) => {
                    self.send_error(&errors, err);
                    continue;
                }
            };
            if self.result_tx.capacity() == 0 {
                tracing::debug!(
                    key = %self.key,
                    "fast watcher, slow processing: the result channel is full"
                );
            }
            tokio::select! {
                sent = self.result_tx.send(Ok(result)) => if sent.is_err() { return },
                () = self.cancel.cancelled() => return,
            }
        }
    }
    // ANCHOR_END: process_event

    // ANCHOR: transform
    /// Mirrors `watchChan.transform`: a progress notification becomes a bookmark;
    /// otherwise the new and old objects are filtered by the predicate. New
    /// passes and old did not → Added; both → Modified; only old → Deleted (the
    /// old object, at the delete's revision); neither → nothing.
    pub fn transform(
        &self,
        e: Event,
    ) -> Result<Option<WatchEvent<Object>>, StorageError> {
        // ANCHOR: ex5-transform
        if e.is_progress_notify {
            let rv = e.rev.to_string();
            let bookmark = if e.is_initial_events_end_bookmark {
                Bookmark::initial_events_end(rv)
            } else {
                Bookmark::new(rv)
            };
            return Ok(Some(WatchEvent::Bookmark(bookmark)));
        }
        let (current, old) = self.prepare_objs(&e)?;
        let result = match (current, old) {
            (_, Some(old)) if e.is_deleted => {
                self.filter(&old).then_some(WatchEvent::Deleted(old))
            }
            (Some(current), _) if e.is_created => {
                self.filter(&current).then_some(WatchEvent::Added(current))
            }
            (Some(current), _) if self.accept_all() => {
                Some(WatchEvent::Modified(current))
            }
            (Some(current), old) => {
                let current_passes = self.filter(&current);
                let old_passes = old.as_ref().is_some_and(|old| self.filter(old));
                match (current_passes, old_passes, old) {
                    (true, true, _) => Some(WatchEvent::Modified(current)),
                    (true, false, _) => Some(WatchEvent::Added(current)),
                    (false, true, Some(old)) => Some(WatchEvent::Deleted(old)),
                    _ => None,
                }
            }
            (None, _) => None,
        };
        Ok(result)
        // ANCHOR_END: ex5-transform
    }
    // ANCHOR_END: transform

    /// Mirrors `watchChan.prepareObjs`: decodes the new object (unless deleted) and
    /// the old one (only when deleted or when the filter needs it), both at the
    /// event's revision.
    fn prepare_objs(&self, e: &Event) -> Result<DecodedObjects, StorageError> {
        let current = if e.is_deleted {
            None
        } else {
            Some(Arc::new(decode(&e.value, e.rev)?))
        };
        // The old object carries the revision of the change: a Deleted event's
        // object is the last state, stamped with the delete's revision.
        let old = if !e.prev_value.is_empty() && (e.is_deleted || !self.accept_all())
        {
            Some(Arc::new(decode(&e.prev_value, e.rev)?))
        } else {
            None
        };
        Ok((current, old))
    }

    fn filter(&self, obj: &Object) -> bool {
        self.internal_pred.is_everything()
            || self.internal_pred.matches(&self.info, obj)
    }

    fn accept_all(&self) -> bool {
        self.internal_pred.is_everything()
    }

    /// Mirrors `watchChan.sendEvent`: queues an event unless the watch is cancelled.
    async fn send_event(&self, incoming: &mpsc::Sender<Event>, event: Event) {
        if incoming.capacity() == 0 {
            tracing::debug!(key = %self.key, "fast watcher, slow processing: the incoming channel is full");
        }
        tokio::select! {
            _ = incoming.send(event) => {}
            () = self.cancel.cancelled() => {}
        }
    }

    /// Mirrors `watchChan.sendError`: the first error wins; later ones are dropped.
    fn send_error(&self, errors: &mpsc::Sender<StorageError>, err: StorageError) {
        let _ = errors.try_send(err);
    }
}

/// The new and the old object of an event, decoded when needed.
type DecodedObjects = (Option<Arc<Object>>, Option<Arc<Object>>);

// ANCHOR: interpret_watch_error
/// Mirrors `interpretWatchError` + `transformErrorToEvent`: compaction is 410
/// Expired, anything else is an internal error.
pub fn interpret_watch_error(err: KvError) -> StorageError {
    match err {
        KvError::Compacted { .. } => StorageError::Expired(
            "The resourceVersion for the provided watch is too old.".into(),
        ),
        other => StorageError::Internal(other.to_string()),
    }
}
// ANCHOR_END: interpret_watch_error

/// The consumer's end: the result channel, and the guard that cancels the watchChan
/// when the [`Watch`] drops it.
struct ResultStream {
    rx: mpsc::Receiver<WatchItem<Object>>,
    _cancel_on_drop: DropGuard,
}

impl Stream for ResultStream {
    type Item = WatchItem<Object>;

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::kv::EmbeddedKv;

    fn options(initial_rev: u64, force_initial_events: bool) -> WatchChanOptions {
        WatchChanOptions {
            initial_rev,
            force_initial_events,
            recursive: true,
            progress_notify: false,
            predicate: SelectionPredicate::default(),
            initial_events_end_bookmark: false,
            progress_registry: None,
        }
    }

    async fn kv_with_a_pod() -> Arc<dyn Kv> {
        let kv: Arc<dyn Kv> = Arc::new(EmbeddedKv::new());
        kv.put("/registry/pods/default/a".into(), "{}".into())
            .await
            .expect("put");
        kv
    }

    /// Versions at and beyond `i64::MAX`: `initial_rev + 1` would overflow (or,
    /// in Go, wrap to `i64::MIN`); the watch stays open and sees nothing.
    #[tokio::test(start_paused = true)]
    async fn a_watch_after_the_last_revision_stays_open_and_empty() {
        for rv in [i64::MAX as u64, i64::MAX as u64 + 1, u64::MAX] {
            let kv = kv_with_a_pod().await;
            let mut watch = WatchChan::start(
                Arc::clone(&kv),
                ResourceInfo::PODS,
                "/registry/pods/",
                options(rv, false),
            );
            kv.put("/registry/pods/default/b".into(), "{}".into())
                .await
                .expect("put");
            let next =
                tokio::time::timeout(Duration::from_secs(600), watch.next()).await;
            assert!(next.is_err(), "rv {rv}: {next:?}");
        }
    }

    /// A watch-list at a version the store has not reached is 504, with the
    /// requested version as parsed, compared as `uint64`.
    #[tokio::test]
    async fn a_watch_list_beyond_the_store_is_too_large_without_wrapping() {
        for rv in [3, i64::MAX as u64, u64::MAX] {
            let kv = kv_with_a_pod().await;
            let mut watch = WatchChan::start(
                kv,
                ResourceInfo::PODS,
                "/registry/pods/",
                options(rv, true),
            );
            let event = tokio::time::timeout(Duration::from_secs(10), watch.next())
                .await
                .expect("an event in time");
            match event {
                Some(Ok(WatchEvent::Error(status))) => {
                    assert_eq!(status.code, Some(504));
                    assert_eq!(
                        status.message.as_deref(),
                        Some(
                            format!(
                                "Timeout: Too large resource version: {rv}, current: 2"
                            )
                            .as_str()
                        )
                    );
                }
                other => panic!("rv {rv}: {other:?}"),
            }
        }
    }
}
