//! `EtcdKv`: the [`Kv`] over real etcd, through the `etcd-client` crate (cargo
//! feature `etcd`).
//!
//! Mirrors what the apiserver gets from `clientv3`: each call is one etcd RPC (a
//! `Txn` for [`Kv::txn`]), and each watch opens its own gRPC watch stream, so
//! dropping a [`KvWatch`] closes that stream and etcd cancels the watcher.
//!
//! ## Recovery
//!
//! Nothing is retried here; the storage layer above decides. Connection failures
//! become [`KvError::Unavailable`]. When the connection dies under an open watch,
//! the watch stream ends with one `Unavailable` item (it never hangs: HTTP/2
//! keep-alive detects a silent peer).

use std::sync::Arc;
use std::time::Duration;

use etcd_client::{
    Client, CompactionOptions, CompareOp, ConnectOptions, DeleteOptions, GetOptions,
    PutOptions, Txn, TxnOpResponse, WatchOptions, Watcher,
};
use futures::StreamExt;

use super::*;

/// How long connecting to an endpoint may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// HTTP/2 keep-alive: how often to ping, and how long a ping may go unanswered.
const KEEP_ALIVE: (Duration, Duration) =
    (Duration::from_secs(2), Duration::from_secs(3));
/// How long the probe that finds the compacted revision may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Mirrors the apiserver's `clientv3.Client` (KV and Watcher) as a [`Kv`] over real
/// etcd.
#[derive(Clone)]
pub struct EtcdKv {
    client: Client,
    /// Whether this etcd's progress notifications can be trusted, asked once.
    request_watch_progress: Arc<tokio::sync::OnceCell<bool>>,
}

impl fmt::Debug for EtcdKv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EtcdKv").finish_non_exhaustive()
    }
}

impl EtcdKv {
    /// Mirrors `clientv3.New`: a client for these endpoints (`http://127.0.0.1:2379`). The
    /// connection is made lazily; an unreachable etcd shows up as
    /// [`KvError::Unavailable`] on the first request.
    pub async fn connect<E: AsRef<str>, S: AsRef<[E]>>(
        endpoints: S,
    ) -> Result<EtcdKv, KvError> {
        let options = ConnectOptions::new()
            .with_connect_timeout(CONNECT_TIMEOUT)
            .with_keep_alive(KEEP_ALIVE.0, KEEP_ALIVE.1)
            .with_keep_alive_while_idle(true);
        let client = Client::connect(endpoints, Some(options))
            .await
            .map_err(map_error)?;
        Ok(EtcdKv {
            client,
            request_watch_progress: Arc::default(),
        })
    }

    /// Turns an etcd-client error into a [`KvError`], asking etcd for the revisions
    /// the error implies (etcd's gRPC messages do not carry them).
    async fn error(&self, error: etcd_client::Error) -> KvError {
        match map_error(error) {
            KvError::Compacted { .. } => KvError::Compacted {
                compacted: self.probe_compacted_revision().await,
            },
            KvError::FutureRevision { .. } => KvError::FutureRevision {
                current: self.probe_current_revision().await,
            },
            other => other,
        }
    }

    /// The store's current revision (0 if etcd does not answer).
    async fn probe_current_revision(&self) -> i64 {
        let mut kv = self.client.kv_client();
        let request = kv.get(
            b"\0".to_vec(),
            Some(GetOptions::new().with_count_only().with_keys_only()),
        );
        match tokio::time::timeout(PROBE_TIMEOUT, request).await {
            Ok(Ok(response)) => response.header().map_or(0, |h| h.revision()),
            _ => 0,
        }
    }

    /// The compacted revision, read the only way etcd tells it: a watch from
    /// revision 1 is cancelled with `compact_revision` (0 if that does not
    /// happen in time).
    async fn probe_compacted_revision(&self) -> i64 {
        let mut watch_client = self.client.watch_client();
        let probe = async move {
            let options = WatchOptions::new().with_start_revision(1);
            let (_watcher, mut stream) = watch_client
                .watch(b"\0compaction-probe".to_vec(), Some(options))
                .await
                .ok()?;
            let response = stream.message().await.ok()??;
            Some(response.compact_revision())
        };
        tokio::time::timeout(PROBE_TIMEOUT, probe)
            .await
            .ok()
            .flatten()
            .unwrap_or(0)
    }

    async fn range_inner(
        &self,
        request: RangeRequest,
    ) -> Result<RangeResponse, KvError> {
        let mut options = GetOptions::new();
        let key: Vec<u8> = if request.prefix {
            options = match prefix_range_end(&request.key) {
                Some(end) => options.with_range(end),
                None => options.with_from_key(),
            };
            request.from_key.as_ref().unwrap_or(&request.key).to_vec()
        } else {
            request.key.to_vec()
        };
        if request.revision > 0 {
            options = options.with_revision(request.revision);
        }
        if request.limit > 0 {
            options = options.with_limit(request.limit);
        }
        if request.count_only {
            options = options.with_count_only();
        }
        let mut kv = self.client.kv_client();
        let mut response = match kv.get(key, Some(options)).await {
            Ok(response) => response,
            Err(error) => return Err(self.error(error).await),
        };
        Ok(RangeResponse {
            header_revision: response.header().map_or(0, |h| h.revision()),
            more: response.more(),
            count: response.count(),
            kvs: response.take_kvs().into_iter().map(convert_kv).collect(),
        })
    }

    async fn put_inner(
        &self,
        key: Bytes,
        value: Bytes,
    ) -> Result<(i64, Option<KeyValue>), KvError> {
        let mut kv = self.client.kv_client();
        let request = kv.put(
            key.to_vec(),
            value.to_vec(),
            Some(PutOptions::new().with_prev_key()),
        );
        let mut response = match request.await {
            Ok(response) => response,
            Err(error) => return Err(self.error(error).await),
        };
        Ok((
            response.header().map_or(0, |h| h.revision()),
            response.take_prev_key().map(convert_kv),
        ))
    }

    async fn delete_inner(
        &self,
        key: Bytes,
    ) -> Result<(i64, Option<KeyValue>), KvError> {
        let mut kv = self.client.kv_client();
        let request =
            kv.delete(key.to_vec(), Some(DeleteOptions::new().with_prev_key()));
        let mut response = match request.await {
            Ok(response) => response,
            Err(error) => return Err(self.error(error).await),
        };
        Ok((
            response.header().map_or(0, |h| h.revision()),
            response.take_prev_kvs().into_iter().next().map(convert_kv),
        ))
    }

    async fn txn_inner(
        &self,
        key: Bytes,
        compare: Compare,
        op: TxnOp,
    ) -> Result<TxnResponse, KvError> {
        let Compare::ModRevision(expected) = compare;
        let key = key.to_vec();
        let then = match op {
            TxnOp::Put(value) => {
                etcd_client::TxnOp::put(key.clone(), value.to_vec(), None)
            }
            TxnOp::Delete => etcd_client::TxnOp::delete(
                key.clone(),
                Some(DeleteOptions::new().with_prev_key()),
            ),
        };
        let txn = Txn::new()
            .when([etcd_client::Compare::mod_revision(
                key.clone(),
                CompareOp::Equal,
                expected,
            )])
            .and_then([then])
            .or_else([etcd_client::TxnOp::get(key, None)]);
        let mut kv = self.client.kv_client();
        let response = match kv.txn(txn).await {
            Ok(response) => response,
            Err(error) => return Err(self.error(error).await),
        };
        let kv = response
            .op_responses()
            .into_iter()
            .find_map(|op| match op {
                TxnOpResponse::Get(mut get) => get.take_kvs().into_iter().next(),
                TxnOpResponse::Delete(mut delete) => {
                    delete.take_prev_kvs().into_iter().next()
                }
                TxnOpResponse::Put(_) | TxnOpResponse::Txn(_) => None,
            })
            .map(convert_kv);
        Ok(TxnResponse {
            succeeded: response.succeeded(),
            header_revision: response.header().map_or(0, |h| h.revision()),
            kv,
        })
    }

    async fn compact_inner(&self, revision: i64) -> Result<(), KvError> {
        let mut kv = self.client.kv_client();
        let request =
            kv.compact(revision, Some(CompactionOptions::new().with_physical()));
        match request.await {
            Ok(_) => Ok(()),
            Err(error) => Err(self.error(error).await),
        }
    }

    async fn watch_inner(&self, request: WatchRequest) -> Result<KvWatch, KvError> {
        let mut options = WatchOptions::new();
        if request.prefix {
            options = match prefix_range_end(&request.key) {
                Some(end) => options.with_range(end),
                None => options.with_from_key(),
            };
        }
        if request.start_revision > 0 {
            options = options.with_start_revision(request.start_revision);
        }
        if request.prev_kv {
            options = options.with_prev_key();
        }
        if request.progress_notify {
            options = options.with_progress_notify();
        }
        let mut watch_client = self.client.watch_client();
        let (watcher, stream) = watch_client
            .watch(request.key.to_vec(), Some(options))
            .await
            .map_err(map_error)?;
        // The stream keeps the watcher (the request half of the gRPC stream) alive:
        // the watch lasts until both the responses and the progress handle
        // are dropped.
        let watcher = Arc::new(tokio::sync::Mutex::new(watcher));
        let state = WatchState {
            stream,
            _watcher: Arc::clone(&watcher),
            finished: false,
        };
        let responses = futures::stream::unfold(state, |mut state| async move {
            let item = state.next().await?;
            Some((item, state))
        })
        .boxed();
        Ok(KvWatch {
            responses,
            progress: Arc::new(EtcdProgress { watcher }),
        })
    }
}

/// One open etcd watch stream.
struct WatchState {
    stream: etcd_client::WatchStream,
    _watcher: Arc<tokio::sync::Mutex<Watcher>>,
    finished: bool,
}

impl WatchState {
    /// The next message: skips the `created` acknowledgement, ends after a cancel,
    /// and turns a broken or closed stream into one `Unavailable` item.
    async fn next(&mut self) -> Option<Result<WatchResponse, KvError>> {
        loop {
            if self.finished {
                return None;
            }
            match self.stream.next().await {
                None => {
                    self.finished = true;
                    return Some(Err(KvError::Unavailable(
                        "etcd closed the watch stream".into(),
                    )));
                }
                Some(Err(error)) => {
                    self.finished = true;
                    return Some(Err(map_error(error)));
                }
                Some(Ok(response)) => {
                    if response.created()
                        && response.events().is_empty()
                        && !response.canceled()
                    {
                        continue;
                    }
                    let response = convert_watch_response(&response);
                    self.finished = response.canceled;
                    return Some(Ok(response));
                }
            }
        }
    }
}

/// Whether an etcd of this version (`3.5.12`, as `Status` reports it) sends a
/// requested progress notification only after the events below its revision. Mirrors
/// the version check of `pkg/storage/feature/feature_support_checker.go`: etcd
/// before 3.4.31 and 3.5.13 could send it ahead of them (etcd issue 15220), and a
/// cache that trusted it would answer a consistent read without the newest writes.
fn request_watch_progress_supported(version: &str) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor, patch) = (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    );
    match (major, minor) {
        (3, 4) => patch >= 31,
        (3, 5) => patch >= 13,
        (3, m) => m >= 6,
        (m, _) => m > 3,
    }
}

/// Mirrors `clientv3.Watcher.RequestProgress` for one etcd watch stream.
struct EtcdProgress {
    watcher: Arc<tokio::sync::Mutex<Watcher>>,
}

impl ProgressRequester for EtcdProgress {
    fn request_progress(&self) -> BoxFuture<'_, Result<(), KvError>> {
        Box::pin(async move {
            self.watcher
                .lock()
                .await
                .request_progress()
                .await
                .map_err(map_error)
        })
    }
}

fn convert_kv(kv: etcd_client::KeyValue) -> KeyValue {
    let (create_revision, mod_revision, version) =
        (kv.create_revision(), kv.mod_revision(), kv.version());
    let (key, value) = kv.into_key_value();
    KeyValue {
        key: Bytes::from(key),
        value: Bytes::from(value),
        create_revision,
        mod_revision,
        version,
    }
}

fn convert_watch_response(response: &etcd_client::WatchResponse) -> WatchResponse {
    let events = response
        .events()
        .iter()
        .filter_map(|event| {
            let kind = match event.event_type() {
                etcd_client::EventType::Put => KvEventType::Put,
                etcd_client::EventType::Delete => KvEventType::Delete,
            };
            Some(KvEvent {
                kind,
                kv: convert_kv(event.kv()?.clone()),
                prev_kv: event.prev_kv().cloned().map(convert_kv),
            })
        })
        .collect();
    WatchResponse {
        header_revision: response.header().map_or(0, |h| h.revision()),
        events,
        compact_revision: response.compact_revision(),
        canceled: response.canceled(),
        cancel_reason: response.cancel_reason().to_string(),
    }
}

/// Maps an etcd-client error by etcd's messages (`rpctypes.ErrCompacted`,
/// `ErrFutureRev`) and gRPC codes. The revisions are filled in by [`EtcdKv::error`]
/// where it can ask etcd.
fn map_error(error: etcd_client::Error) -> KvError {
    match error {
        etcd_client::Error::GRpcStatus(status) => {
            let message = status.message();
            if message.contains("required revision has been compacted") {
                KvError::Compacted { compacted: 0 }
            } else if message.contains("required revision is a future revision") {
                KvError::FutureRevision { current: 0 }
            } else {
                // tonic's codes: 1 Cancelled, 4 DeadlineExceeded, 14 Unavailable;
                // transport failures inside a call surface as 2
                // Unknown with an h2/io error message.
                let code = i32::from(status.code());
                if matches!(code, 1 | 2 | 4 | 14) {
                    KvError::Unavailable(message.to_string())
                } else {
                    KvError::Request(message.to_string())
                }
            }
        }
        etcd_client::Error::TransportError(error) => {
            KvError::Unavailable(error.to_string())
        }
        etcd_client::Error::IoError(error) => {
            KvError::Unavailable(error.to_string())
        }
        etcd_client::Error::WatchError(message) => KvError::Unavailable(message),
        other => KvError::Request(other.to_string()),
    }
}

impl Kv for EtcdKv {
    fn range(
        &self,
        request: RangeRequest,
    ) -> BoxFuture<'_, Result<RangeResponse, KvError>> {
        Box::pin(self.range_inner(request))
    }

    fn put(
        &self,
        key: Bytes,
        value: Bytes,
    ) -> BoxFuture<'_, Result<(i64, Option<KeyValue>), KvError>> {
        Box::pin(self.put_inner(key, value))
    }

    fn delete(
        &self,
        key: Bytes,
    ) -> BoxFuture<'_, Result<(i64, Option<KeyValue>), KvError>> {
        Box::pin(self.delete_inner(key))
    }

    fn txn(
        &self,
        key: Bytes,
        compare: Compare,
        op: TxnOp,
    ) -> BoxFuture<'_, Result<TxnResponse, KvError>> {
        Box::pin(self.txn_inner(key, compare, op))
    }

    fn compact(&self, revision: i64) -> BoxFuture<'_, Result<(), KvError>> {
        Box::pin(self.compact_inner(revision))
    }

    fn watch(
        &self,
        request: WatchRequest,
    ) -> BoxFuture<'_, Result<KvWatch, KvError>> {
        Box::pin(self.watch_inner(request))
    }

    /// Asks etcd's `Status` for its version once; until an answer comes (etcd
    /// down), the answer is "no", so a cache sends consistent reads to etcd.
    fn supports_request_watch_progress(&self) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            let asked = self.request_watch_progress.get_or_try_init(|| async {
                let status = tokio::time::timeout(
                    PROBE_TIMEOUT,
                    self.client.maintenance_client().status(),
                )
                .await;
                match status {
                    Ok(Ok(status)) => {
                        Ok(request_watch_progress_supported(status.version()))
                    }
                    _ => Err(()),
                }
            });
            asked.await.copied().unwrap_or(false)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::request_watch_progress_supported as supported;

    #[test]
    fn progress_requests_are_trusted_from_the_etcd_releases_that_fixed_them() {
        for old in ["3.4.23", "3.4.30", "3.5.0", "3.5.12", "3.3.27", "garbage"] {
            assert!(!supported(old), "{old}");
        }
        for fixed in ["3.4.31", "3.4.37", "3.5.13", "3.5.21", "3.6.0", "4.0.0"] {
            assert!(supported(fixed), "{fixed}");
        }
    }
}
