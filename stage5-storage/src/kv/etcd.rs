//! `EtcdKv`: the [`Kv`] over real etcd, through the `etcd-client` crate (cargo
//! feature `etcd`).
//!
//! Mirrors what the apiserver gets from `clientv3`: each call is one etcd RPC (a
//! `Txn` for [`Kv::txn`]), and each watch opens its own gRPC watch stream, so
//! dropping a [`KvWatch`] closes that stream and etcd cancels the watcher.
//!
//! ## Recovery
//!
//! The client balances over every endpoint it is given (one tonic channel per
//! member, etcd-client's `balance_channel`); a dead member stays in the balance
//! and fails each call sent its way at connect time. Mirroring clientv3's retry
//! interceptor (`client/v3/retry_interceptor.go`, `retry.go`), a call that failed
//! with gRPC `Unavailable` is tried again, on whichever member the balancer picks,
//! up to [`UNARY_MAX_RETRIES`] times with [`BACKOFF_WAIT_BETWEEN`] after each round
//! over a quorum: reads (`Range`, `Compact`, opening a watch) on any
//! `Unavailable`, writes (`Put`, `DeleteRange`, `Txn`) only when the request never
//! left the client (no connection to that member), so a write is applied at most
//! once. A write that etcd refused for want of a leader (`etcdserver: no leader`),
//! or whose connection broke in flight, fails with [`KvError::Unavailable`]; the
//! caller decides, as kube-apiserver leaves it to its client. When the connection
//! dies under an open watch, the watch stream ends with one `Unavailable` item (it
//! never hangs: HTTP/2 keep-alive detects a silent peer), and the caller opens a
//! new one, which reaches a live member.

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
/// Mirrors kube-apiserver's etcd client (`keepaliveTime` 30 s, `keepaliveTimeout`
/// 10 s in the apiserver's `storagebackend/factory/etcd3.go`). etcd closes the
/// connection of a client that pings more often than every 5 s
/// (`--grpc-keepalive-min-time`), which would end every watch on it.
const KEEP_ALIVE: (Duration, Duration) =
    (Duration::from_secs(30), Duration::from_secs(10));
/// How long the probe that finds the compacted revision may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// Mirrors clientv3's `defaultUnaryMaxRetries` (100): how often one call is tried
/// again after a retryable failure.
const UNARY_MAX_RETRIES: u32 = 100;
/// Mirrors clientv3's `defaultBackoffWaitBetween` (25 ms): the wait after each round
/// of retries over a quorum of the endpoints (`roundRobinQuorumBackoff`; clientv3
/// adds 10 % jitter, left out here).
const BACKOFF_WAIT_BETWEEN: Duration = Duration::from_millis(25);
/// Mirrors clientv3's `defaultMaxCallSendMsgSize` (2 MiB, `client/v3/options.go`),
/// which kube-apiserver keeps (its `newETCD3Client` sets no `MaxCallSendMsgSize`):
/// the largest request the client sends. etcd refuses more than its
/// `--max-request-bytes` (1.5 MiB) anyway.
pub const DEFAULT_MAX_CALL_SEND_MSG_SIZE: usize = 2 * 1024 * 1024;
/// Mirrors clientv3's `defaultMaxCallRecvMsgSize` (`math.MaxInt32`,
/// `client/v3/options.go`), which kube-apiserver keeps: the largest response the
/// client accepts, on ranges and on watch streams. tonic's own default is 4 MiB
/// ("decoded message length too large"), less than one list of 3,000 pods; etcd
/// sends up to `math.MaxInt32` (`maxSendBytes`, `server/etcdserver/api/v3rpc/grpc.go`).
pub const DEFAULT_MAX_CALL_RECV_MSG_SIZE: usize = i32::MAX as usize;

/// Mirrors the apiserver's `clientv3.Client` (KV and Watcher) as a [`Kv`] over real
/// etcd.
#[derive(Clone)]
pub struct EtcdKv {
    client: Client,
    /// How many endpoints the client balances over (for the retry backoff).
    endpoints: usize,
    /// The gRPC message limits every call runs with.
    call_limits: CallLimits,
    /// Whether this etcd's progress notifications can be trusted, asked once.
    request_watch_progress: Arc<tokio::sync::OnceCell<bool>>,
}

impl fmt::Debug for EtcdKv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EtcdKv").finish_non_exhaustive()
    }
}

impl EtcdKv {
    /// Mirrors `clientv3.New`: a client for these endpoints (`http://127.0.0.1:2379`,
    /// or every member of a cluster, as kube-apiserver's `--etcd-servers`), balanced
    /// over all of them. The connection is made lazily; an unreachable etcd shows up
    /// as [`KvError::Unavailable`] on the first request. No endpoint is a
    /// [`KvError::Request`].
    pub async fn connect<E: AsRef<str>, S: AsRef<[E]>>(
        endpoints: S,
    ) -> Result<EtcdKv, KvError> {
        let options = ConnectOptions::new()
            .with_connect_timeout(CONNECT_TIMEOUT)
            .with_keep_alive(KEEP_ALIVE.0, KEEP_ALIVE.1)
            // clientv3's `PermitWithoutStream` is false: pings only while a call
            // or a watch is open (etcd counts other pings against the client).
            .with_keep_alive_while_idle(false);
        let count = endpoints.as_ref().len();
        if count == 0 {
            return Err(KvError::Request("no etcd endpoint given".into()));
        }
        let client = Client::connect(endpoints, Some(options))
            .await
            .map_err(map_error)?;
        Ok(EtcdKv {
            client,
            endpoints: count,
            call_limits: CallLimits::default(),
            request_watch_progress: Arc::default(),
        })
    }

    /// Mirrors `clientv3.Config.MaxCallSendMsgSize`: the largest request this client
    /// sends (default [`DEFAULT_MAX_CALL_SEND_MSG_SIZE`]).
    #[must_use]
    pub fn with_max_call_send_msg_size(mut self, bytes: usize) -> Self {
        self.call_limits.send = bytes;
        self
    }

    /// Mirrors `clientv3.Config.MaxCallRecvMsgSize`: the largest response this client
    /// accepts (default [`DEFAULT_MAX_CALL_RECV_MSG_SIZE`]). A larger answer fails
    /// the range, or ends the watch, with tonic's "decoded message length too
    /// large" as a [`KvError::Request`].
    #[must_use]
    pub fn with_max_call_recv_msg_size(mut self, bytes: usize) -> Self {
        self.call_limits.recv = bytes;
        self
    }

    /// A KV client with this client's message limits (clientv3's `callOpts`).
    fn kv_client(&self) -> etcd_client::KvClient {
        self.client
            .kv_client()
            .max_encoding_message_size(self.call_limits.send)
            .max_decoding_message_size(self.call_limits.recv)
    }

    /// A watch client with this client's receive limit (clientv3's `callOpts`).
    fn watch_client(&self) -> etcd_client::WatchClient {
        self.client
            .watch_client()
            .max_decoding_message_size(self.call_limits.recv)
    }

    /// Mirrors clientv3's `retryUnaryInvoker`: runs `call` until it succeeds, fails
    /// in a way `policy` does not retry, or has been retried [`UNARY_MAX_RETRIES`]
    /// times; after each round over a quorum of the endpoints it waits
    /// [`BACKOFF_WAIT_BETWEEN`] (`roundRobinQuorumBackoff`).
    async fn with_retry<T, F, Fut>(
        &self,
        policy: RetryPolicy,
        mut call: F,
    ) -> Result<T, etcd_client::Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        let quorum = u32::try_from(self.endpoints / 2 + 1).unwrap_or(u32::MAX);
        let mut attempt = 0;
        loop {
            match call().await {
                Err(error)
                    if attempt < UNARY_MAX_RETRIES && policy.retries(&error) =>
                {
                    attempt += 1;
                    tracing::debug!(%error, attempt, "retrying etcd call");
                    if attempt % quorum == 0 {
                        tokio::time::sleep(BACKOFF_WAIT_BETWEEN).await;
                    }
                }
                result => return result,
            }
        }
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
        let mut kv = self.kv_client();
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
        let mut watch_client = self.watch_client();
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
        let get = || {
            let (mut kv, key, options) =
                (self.kv_client(), key.clone(), options.clone());
            async move { kv.get(key, Some(options)).await }
        };
        let mut response = match self.with_retry(RetryPolicy::Repeatable, get).await
        {
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
        let put = || {
            let mut kv = self.kv_client();
            let (key, value) = (key.to_vec(), value.to_vec());
            async move {
                kv.put(key, value, Some(PutOptions::new().with_prev_key()))
                    .await
            }
        };
        let mut response =
            match self.with_retry(RetryPolicy::NonRepeatable, put).await {
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
        let delete = || {
            let (mut kv, key) = (self.kv_client(), key.to_vec());
            async move {
                kv.delete(key, Some(DeleteOptions::new().with_prev_key()))
                    .await
            }
        };
        let mut response =
            match self.with_retry(RetryPolicy::NonRepeatable, delete).await {
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
        let key = key.to_vec();
        let condition = match compare {
            Compare::ModRevision(expected) => etcd_client::Compare::mod_revision(
                key.clone(),
                CompareOp::Equal,
                expected,
            ),
            Compare::Version(expected) => etcd_client::Compare::version(
                key.clone(),
                CompareOp::Equal,
                expected,
            ),
        };
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
            .when([condition])
            .and_then([then])
            .or_else([etcd_client::TxnOp::get(key, None)]);
        let call = || {
            let (mut kv, txn) = (self.kv_client(), txn.clone());
            async move { kv.txn(txn).await }
        };
        let response = match self.with_retry(RetryPolicy::NonRepeatable, call).await
        {
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
        let compact = || {
            let mut kv = self.kv_client();
            async move {
                kv.compact(revision, Some(CompactionOptions::new().with_physical()))
                    .await
            }
        };
        match self.with_retry(RetryPolicy::Repeatable, compact).await {
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
        let open = || {
            let mut watch_client = self.watch_client();
            let (key, options) = (request.key.to_vec(), options.clone());
            async move { watch_client.watch(key, Some(options)).await }
        };
        let (watcher, stream) = self
            .with_retry(RetryPolicy::Repeatable, open)
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

/// Mirrors clientv3's `retryPolicy`: which failures of a call may be retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RetryPolicy {
    /// `repeatable` (`Range`, `Compact`, a watch's opening): any `Unavailable`
    /// (`isSafeRetryImmutableRPC`).
    Repeatable,
    /// `nonRepeatable` (`Put`, `DeleteRange`, `Txn`): `Unavailable` only when no
    /// connection carried the request (`isSafeRetryMutableRPC`: "there is no
    /// connection available"), so a write is never applied twice.
    NonRepeatable,
}

impl RetryPolicy {
    /// Mirrors clientv3's `Client.shouldRetry` for this policy.
    fn retries(self, error: &etcd_client::Error) -> bool {
        let etcd_client::Error::GRpcStatus(status) = error else {
            return false;
        };
        if status.code() != tonic::Code::Unavailable {
            return false;
        }
        match self {
            RetryPolicy::Repeatable => true,
            RetryPolicy::NonRepeatable => never_sent(status),
        }
    }
}

/// Whether the call failed while connecting to its member (tonic's
/// `ConnectError` in the error's source chain): the request never left.
fn never_sent(status: &tonic::Status) -> bool {
    let mut source = std::error::Error::source(status);
    while let Some(error) = source {
        if error.is::<tonic::ConnectError>() {
            return true;
        }
        source = error.source();
    }
    false
}

/// The gRPC message limits of clientv3's `Config` (`MaxCallSendMsgSize`,
/// `MaxCallRecvMsgSize`), with clientv3's defaults.
#[derive(Clone, Copy, Debug)]
struct CallLimits {
    send: usize,
    recv: usize,
}

impl Default for CallLimits {
    fn default() -> Self {
        CallLimits {
            send: DEFAULT_MAX_CALL_SEND_MSG_SIZE,
            recv: DEFAULT_MAX_CALL_RECV_MSG_SIZE,
        }
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
/// requested progress notification, and only after the events below its
/// revision. Mirrors the version check of
/// `pkg/storage/feature/feature_support_checker.go` (since Kubernetes 1.31),
/// which requires 3.4.31 or 3.5.13 because of two etcd bugs. Before 3.4.25 and
/// 3.5.8 etcd could send the notification ahead of the events (etcd issue 15220),
/// and a cache that trusted it would answer a consistent read without the newest
/// writes. Before 3.4.31 and 3.5.13 it could send none to a watch that had
/// received no events (etcd issue 17507), and a quiet cache would wait in vain.
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
            } else if message == "etcdserver: request is too large"
                || message.contains("larger than max")
            {
                // etcd's own refusal (InvalidArgument), or gRPC's message
                // limit (ResourceExhausted): `isTooLargeError`'s two cases.
                KvError::RequestTooLarge
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
