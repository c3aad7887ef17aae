//! Mirrors apiserver's `pkg/storage/etcd3/store.go`: one resource type's objects in
//! etcd.

use std::sync::Arc;

use crate::Watch;
use apimachinery::apis::meta::v1::{
    ListOptions, ResourceVersionMatch, WatchOptions,
};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use super::watcher::{ProgressRegistry, WatchChan, WatchChanOptions};
use super::{decode, encode};
use crate::kv::{Compare, KeyValue, Kv, KvError, RangeRequest, TxnOp};
use crate::{
    GetOptions, KeyScope, ListResult, Preconditions, Storage, StorageError,
    UpdateFn, parse_resource_version,
};
use crate::{Object, ResourceInfo, SelectionPredicate};
use crate::{resource_version_of, revision_of};

/// How often a guaranteed update retries a lost compare-and-swap before giving up
/// with 409.
const MAX_UPDATE_ATTEMPTS: usize = 64;

/// Mirrors `maxLimit`: the largest page a list asks etcd for when a selector filters
/// out most of a page and the store fetches more.
const MAX_LIST_LIMIT: i64 = 10_000;

/// The most keys one etcd range read of a list asks for, so that no answer can
/// outgrow the client's receive limit: one stored value is at most etcd's
/// `--max-request-bytes` (1.5 MiB, `DefaultMaxRequestBytes`) plus gRPC framing
/// (etcd allows 512 KiB, `grpcOverheadBytes`), and 1,000 × 2 MiB stays below
/// clientv3's `MaxCallRecvMsgSize` (`math.MaxInt32`). Upstream's `GetList` reads
/// `limit` keys at once (all of them without a limit) and relies on that receive
/// limit alone; here a list of any size is read in ranges of at most this many keys,
/// all at the first range's revision.
pub const DEFAULT_RANGE_PAGE_SIZE: i64 = 1_000;

// ANCHOR: etcd3_store
/// Mirrors `etcd3.store`: the objects of one resource type, JSON under
/// `/registry/<resource>/<namespace>/<name>`, with etcd's mod revision as
/// resourceVersion.
#[derive(Clone)]
pub struct Etcd3Store {
    kv: Arc<dyn Kv>,
    info: ResourceInfo,
    progress: Arc<ProgressRegistry>,
    /// The most keys one range read of a list asks etcd for.
    range_page_size: i64,
}
// ANCHOR_END: etcd3_store

impl std::fmt::Debug for Etcd3Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Etcd3Store")
            .field("resource", &self.info.plural)
            .finish_non_exhaustive()
    }
}

/// The state of a key as read: the object, its mod revision and its raw bytes.
#[derive(Clone)]
struct ObjState {
    obj: Arc<Object>,
    mod_revision: i64,
    data: Bytes,
}

/// What one attempt of [`Etcd3Store::compare_and_swap`] wants done with the current
/// state.
enum Swap {
    /// Nothing to write: answer this object (an update that changes nothing).
    Keep(Arc<Object>),
    /// Write this if the key is still at the state's revision, then answer the
    /// object, stamped with the write's revision.
    Write(TxnOp, Box<Object>),
}

impl Etcd3Store {
    /// Mirrors `etcd3.New`: a store of `info`'s objects over `kv`.
    pub fn new(kv: Arc<dyn Kv>, info: ResourceInfo) -> Self {
        Etcd3Store {
            kv,
            info,
            progress: Arc::new(ProgressRegistry::default()),
            range_page_size: DEFAULT_RANGE_PAGE_SIZE,
        }
    }

    /// The same store, reading lists from etcd in ranges of at most `keys` keys
    /// (default [`DEFAULT_RANGE_PAGE_SIZE`]; at least 1).
    #[must_use]
    pub fn with_range_page_size(mut self, keys: i64) -> Self {
        self.range_page_size = keys.max(1);
        self
    }

    /// The backend.
    pub fn kv(&self) -> &Arc<dyn Kv> {
        &self.kv
    }

    /// Mirrors `store.RequestWatchProgress`: asks this store's open watches (those
    /// that asked for bookmarks) for a progress notification. Returns how many
    /// were asked.
    pub async fn request_watch_progress(&self) -> usize {
        self.progress.request_progress().await
    }

    /// Mirrors `store.GetCurrentResourceVersion`: etcd's current revision, read with
    /// a count-only range of this type's prefix.
    pub async fn current_resource_version(&self) -> Result<u64, StorageError> {
        let revision =
            super::current_revision(self.kv.as_ref(), self.info.key_prefix())
                .await
                .map_err(internal)?;
        Ok(resource_version_of(revision))
    }

    fn state(&self, kv: &KeyValue) -> Result<ObjState, StorageError> {
        Ok(ObjState {
            obj: Arc::new(decode(&kv.value, kv.mod_revision)?),
            mod_revision: kv.mod_revision,
            data: kv.value.clone(),
        })
    }

    /// The state of a missing key for `ignoreNotFound`: an empty object of the type
    /// (upstream's `newFunc()`), mod revision 0, no bytes.
    fn empty_state(&self) -> ObjState {
        ObjState {
            obj: Arc::new(Object::empty(&self.info)),
            mod_revision: 0,
            data: Bytes::new(),
        }
    }

    async fn get_state(&self, key: &str) -> Result<Option<ObjState>, StorageError> {
        let response = self
            .kv
            .range(RangeRequest::key(key.to_string()))
            .await
            .map_err(internal)?;
        response.kvs.first().map(|kv| self.state(kv)).transpose()
    }

    fn not_found(&self, key: &str) -> StorageError {
        StorageError::NotFound {
            plural: self.info.qualified_resource(),
            name: name_of(key).to_string(),
        }
    }

    // ANCHOR: create
    /// Mirrors `store.Create`: a transaction that puts the object only if the key
    /// does not exist (mod revision 0), else AlreadyExists. The returned object
    /// carries the new revision.
    pub async fn create_object(
        &self,
        key: String,
        mut obj: Object,
    ) -> Result<Arc<Object>, StorageError> {
        if !obj.resource_version().is_empty() {
            return Err(StorageError::BadRequest(
                "resourceVersion should not be set on objects to be created".into(),
            ));
        }
        let data = encode(&mut obj)?;
        check_request_size(&key, &data)?;
        let response = self
            .kv
            .txn(
                key.clone().into(),
                Compare::ModRevision(0),
                TxnOp::Put(data),
            )
            .await
            .map_err(internal)?;
        if !response.succeeded {
            return Err(StorageError::AlreadyExists {
                plural: self.info.qualified_resource(),
                name: name_of(&key).to_string(),
            });
        }
        obj.metadata.resource_version = Some(response.header_revision.to_string());
        Ok(Arc::new(obj))
    }
    // ANCHOR_END: create

    /// Mirrors `store.Get`.
    pub async fn get_object(
        &self,
        key: String,
    ) -> Result<Arc<Object>, StorageError> {
        match self
            .get_object_with(key.clone(), GetOptions::default())
            .await?
        {
            Some(obj) => Ok(obj),
            None => Err(self.not_found(&key)),
        }
    }

    /// Mirrors `store.Get` with its options: the newest state, which must be at
    /// least as new as the options' resource version
    /// (`validateMinimumResourceVersion`: else 504); a missing object is NotFound,
    /// or `None` with `ignore_not_found`.
    pub async fn get_object_with(
        &self,
        key: String,
        options: GetOptions,
    ) -> Result<Option<Arc<Object>>, StorageError> {
        let minimum = parse_resource_version(&options.resource_version)?;
        let response = self
            .kv
            .range(RangeRequest::key(key.clone()))
            .await
            .map_err(internal)?;
        validate_minimum_resource_version(minimum, response.header_revision)?;
        match response.kvs.first() {
            Some(kv) => Ok(Some(self.state(kv)?.obj)),
            None if options.ignore_not_found => Ok(None),
            None => Err(self.not_found(&key)),
        }
    }

    /// Mirrors `store.Count`: how many keys lie under `key` + `/`, read with a
    /// count-only range.
    pub async fn count_objects(&self, key: String) -> Result<i64, StorageError> {
        let mut key = key;
        if !key.ends_with('/') {
            key.push('/');
        }
        let mut request = RangeRequest::prefix(key);
        request.count_only = true;
        Ok(self.kv.range(request).await.map_err(internal)?.count)
    }

    /// Mirrors `store.GetList` for a prefix (`Recursive: true`); see
    /// [`list_objects_in`](Self::list_objects_in).
    pub async fn list_objects(
        &self,
        prefix: String,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> Result<ListResult, StorageError> {
        self.list_objects_in(prefix, KeyScope::Prefix, options, predicate)
            .await
    }

    /// Mirrors `store.GetList`: `""` reads the newest state, `"0"` any state (here
    /// also the newest), `Exact` (or a legacy version with a limit) reads at that
    /// revision, and any other version must not be newer than etcd (else 504).
    /// Pages follow `limit`: a selector that filters out much of a page makes the
    /// store fetch twice as many keys, up to 10,000. Each range read asks for at
    /// most [`with_range_page_size`](Self::with_range_page_size) keys (1,000), so a
    /// page, or a list without a limit, of any size is read in several ranges at
    /// one revision and no etcd answer outgrows the client's receive limit. The
    /// continue token starts
    /// just after the last key read and pins every page to the first page's
    /// revision (a negative revision continues at the newest). A compacted
    /// revision is 410; a compacted continue token is 410 with a token that goes
    /// on, inconsistently, at the newest revision. [`KeyScope::Object`] reads one
    /// key.
    ///
    /// ## Recovery
    ///
    /// A list's later ranges read at its first range's revision; should etcd compact
    /// that revision meanwhile (kube-apiserver compacts what is 5 minutes old),
    /// the list fails with 410 Expired, as a paged list does, and the client lists
    /// again.
    // ANCHOR: get_list_options
    pub async fn list_objects_in(
        &self,
        key: String,
        scope: KeyScope,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> Result<ListResult, StorageError> {
        let recursive = scope == KeyScope::Prefix;
        let mut key_prefix = key;
        if recursive && !key_prefix.ends_with('/') {
            key_prefix.push('/');
        }
        let from_rv = parse_resource_version(&options.resource_version)?;
        let limit = i64::from(options.limit);
        let paging = recursive && limit > 0;
        let mut with_rev: i64 = 0;
        let mut start_key: Bytes = key_prefix.clone().into();
        let continue_key = if recursive && !options.continue_token.is_empty() {
            if !options.resource_version.is_empty()
                && options.resource_version != "0"
            {
                return Err(StorageError::BadRequest(
                    "specifying resource version is not allowed when using continue"
                        .into(),
                ));
            }
            let (rv, start) = decode_continue(&options.continue_token)?;
            // A positive revision pins the page; a negative one is the newest.
            with_rev = rv.max(0);
            start_key = format!("{key_prefix}{start}").into();
            Some(start)
        } else {
            match options.resource_version_match {
                Some(ResourceVersionMatch::Exact) => {
                    if from_rv == 0 {
                        return Err(StorageError::BadRequest(
                            "resourceVersionMatch \"Exact\" requires a \
                             resourceVersion other than \"\" and \"0\""
                                .into(),
                        ));
                    }
                    // A version no revision reaches reads the newest state,
                    // which `validate_minimum_resource_version` then finds too
                    // old: 504 (upstream's `int64(*fromRV)` wraps to a negative
                    // revision, which etcd reads as the newest: the same 504).
                    with_rev = revision_of(from_rv).unwrap_or(0);
                }
                Some(ResourceVersionMatch::NotOlderThan) => {}
                None if paging && from_rv > 0 => {
                    with_rev = revision_of(from_rv).unwrap_or(0);
                }
                None => {}
            }
            None
        };
        // ANCHOR_END: get_list_options

        // ANCHOR: get_list_range
        let mut items = Vec::new();
        let mut last_key: Option<Bytes> = None;
        let mut has_more;
        let mut last_count;
        // How many keys of the last range read were looked at.
        let mut last_read;
        let mut fetch = if paging { limit } else { 0 };
        loop {
            let mut request = if recursive {
                RangeRequest::prefix(key_prefix.clone())
                    .starting_at(start_key.clone())
            } else {
                RangeRequest::key(key_prefix.clone())
            };
            request.revision = with_rev;
            if recursive {
                request.limit = range_limit(fetch, self.range_page_size);
            }
            let response =
                self.kv.range(request).await.map_err(|err| match err {
                    KvError::Compacted { .. } => match &continue_key {
                        Some(start) => StorageError::InconsistentContinue {
                            continue_token: encode_continue(-1, start),
                        },
                        None => StorageError::Expired(
                            "The resourceVersion for the provided list is too old."
                                .into(),
                        ),
                    },
                    KvError::FutureRevision { current } => {
                        StorageError::TooLargeResourceVersion {
                            requested: resource_version_of(with_rev),
                            current: resource_version_of(current),
                            retry_after_seconds: 0,
                        }
                    }
                    other => internal(other),
                })?;
            validate_minimum_resource_version(from_rv, response.header_revision)?;
            has_more = response.more;
            last_count = response.count;
            if response.kvs.is_empty() && response.more {
                return Err(StorageError::Internal(
                    "no results were found, but etcd indicated there were more \
                     values remaining"
                        .into(),
                ));
            }
            if with_rev == 0 {
                with_rev = response.header_revision;
            }
            // ANCHOR_END: get_list_range
            // ANCHOR: get_list_page
            // Take keys until the page is full, filtering as we go.
            last_read = 0;
            for kv in &response.kvs {
                if paging && items.len() as i64 >= limit {
                    has_more = true;
                    break;
                }
                last_read += 1;
                last_key = Some(kv.key.clone());
                let obj = decode(&kv.value, kv.mod_revision)?;
                if predicate.is_everything() || predicate.matches(&self.info, &obj) {
                    items.push(Arc::new(obj));
                }
            }
            // Nothing more, or a full page: done. Without a limit, read on.
            if !has_more || (paging && items.len() as i64 >= limit) {
                break;
            }
            if paging {
                // The selector dropped objects (or the range was capped): fetch
                // more at once next time.
                fetch = (fetch * 2).min(MAX_LIST_LIMIT);
            }
            let Some(last) = &last_key else { break };
            start_key = after(last);
        }
        let (continue_token, remaining_item_count) = match &last_key {
            Some(last) if has_more => {
                let next = after(last);
                let start = String::from_utf8_lossy(
                    &next[key_prefix.len().min(next.len())..],
                )
                .into_owned();
                // etcd's count covers the last range read, from its first key;
                // for a selector it would count objects the selector drops, so
                // there is none.
                let remaining =
                    predicate.is_everything().then_some(last_count - last_read);
                (encode_continue(with_rev, &start), remaining)
            }
            _ => (String::new(), None),
        };
        Ok(ListResult {
            items,
            resource_version: resource_version_of(with_rev),
            continue_token,
            remaining_item_count,
        })
    }
    // ANCHOR_END: get_list_page

    // ANCHOR: guaranteed_update
    /// Mirrors `store.GuaranteedUpdate`: read the current object, check the
    /// preconditions, let `update` compute the new one, and compare-and-swap on
    /// the mod revision. A lost swap retries from the state the transaction
    /// read; an unchanged object is not written.
    pub async fn update_object(
        &self,
        key: String,
        preconditions: Preconditions,
        update: UpdateFn,
    ) -> Result<Arc<Object>, StorageError> {
        self.update_object_with(key, false, preconditions, update)
            .await
    }

    /// [`update_object`](Self::update_object) with `ignoreNotFound`: a missing key
    /// is updated from an empty object of the type (at mod revision 0, so the
    /// swap creates it).
    pub async fn update_object_with(
        &self,
        key: String,
        ignore_not_found: bool,
        preconditions: Preconditions,
        mut update: UpdateFn,
    ) -> Result<Arc<Object>, StorageError> {
        let missing = ignore_not_found.then(|| self.empty_state());
        self.compare_and_swap(&key, &preconditions, missing, |state| {
            let mut new_obj = update(&state.obj)?;
            let data = encode(&mut new_obj)?;
            if data == state.data {
                return Ok(Swap::Keep(Arc::clone(&state.obj)));
            }
            Ok(Swap::Write(TxnOp::Put(data), Box::new(new_obj)))
        })
        .await
    }
    // ANCHOR_END: guaranteed_update

    // ANCHOR: compare_and_swap
    /// The loop `GuaranteedUpdate` and `conditionalDelete` share: from the current
    /// state (`missing` when the key does not exist, else NotFound), check the
    /// preconditions, ask `attempt` what to write, and write it only if the key is
    /// still at the state's mod revision. A lost swap retries from the state the
    /// transaction read back.
    async fn compare_and_swap(
        &self,
        key: &str,
        preconditions: &Preconditions,
        missing: Option<ObjState>,
        mut attempt: impl FnMut(&ObjState) -> Result<Swap, StorageError>,
    ) -> Result<Arc<Object>, StorageError> {
        let mut state = self.get_state(key).await?;
        for _ in 0..MAX_UPDATE_ATTEMPTS {
            let current = match (state, &missing) {
                (Some(current), _) => current,
                (None, Some(missing)) => missing.clone(),
                (None, None) => return Err(self.not_found(key)),
            };
            preconditions.check(&self.info, &current.obj)?;
            let (op, mut answer) = match attempt(&current)? {
                Swap::Keep(obj) => return Ok(obj),
                Swap::Write(op, answer) => (op, answer),
            };
            if let TxnOp::Put(data) = &op {
                check_request_size(key, data)?;
            }
            let compare = Compare::ModRevision(current.mod_revision);
            let response = self
                .kv
                .txn(key.to_string().into(), compare, op)
                .await
                .map_err(internal)?;
            if response.succeeded {
                let revision = response.header_revision.to_string();
                answer.metadata.resource_version = Some(revision);
                return Ok(Arc::from(answer));
            }
            // Someone else wrote first: retry from what the transaction read.
            state = response.kv.map(|kv| self.state(&kv)).transpose()?;
        }
        Err(StorageError::Conflict {
            plural: self.info.qualified_resource(),
            name: name_of(key).to_string(),
            message: "too many concurrent updates; please try again".into(),
        })
    }
    // ANCHOR_END: compare_and_swap

    /// Mirrors `store.Delete` (`conditionalDelete`): delete by compare-and-swap
    /// after checking the preconditions, retrying when the object changed
    /// meanwhile. Returns the last state at the delete's revision.
    pub async fn delete_object(
        &self,
        key: String,
        preconditions: Preconditions,
    ) -> Result<Arc<Object>, StorageError> {
        self.compare_and_swap(&key, &preconditions, None, |state| {
            Ok(Swap::Write(TxnOp::Delete, Box::new((*state.obj).clone())))
        })
        .await
    }

    /// Mirrors `store.Watch` for a prefix (`Recursive: true`); see
    /// [`watch_objects_in`](Self::watch_objects_in).
    pub async fn watch_objects(
        &self,
        prefix: String,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> Result<Watch<Object>, StorageError> {
        self.watch_objects_in(prefix, KeyScope::Prefix, options, predicate)
            .await
    }

    /// Mirrors `store.Watch` → `watcher.Watch`: a watchChan over the prefix (or the
    /// one key). `""` and `"0"` start with the current state as Added events; a
    /// version starts after it, unless the client asks for a watch-list
    /// (`sendInitialEvents=true`), which lists the current state first at any
    /// version. Bookmarks (from etcd progress notifications) are asked for when the
    /// client allows them.
    pub async fn watch_objects_in(
        &self,
        key: String,
        scope: KeyScope,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> Result<Watch<Object>, StorageError> {
        let initial_rev = parse_resource_version(&options.resource_version)?;
        Ok(WatchChan::start(
            Arc::clone(&self.kv),
            self.info.clone(),
            key,
            WatchChanOptions {
                initial_rev,
                // `areInitialEventsRequired`: the legacy "" / "0", or a watch-list
                // at any version.
                force_initial_events: initial_rev == 0
                    || options.send_initial_events,
                recursive: scope == KeyScope::Prefix,
                progress_notify: options.allow_watch_bookmarks,
                predicate,
                initial_events_end_bookmark: options.send_initial_events
                    && options.allow_watch_bookmarks,
                progress_registry: options
                    .allow_watch_bookmarks
                    .then(|| Arc::clone(&self.progress)),
            },
        ))
    }
}

impl Storage for Etcd3Store {
    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn create(
        &self,
        key: String,
        obj: Object,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        self.create_object(key, obj).boxed()
    }

    fn get_with(
        &self,
        key: String,
        options: GetOptions,
    ) -> BoxFuture<'_, Result<Option<Arc<Object>>, StorageError>> {
        self.get_object_with(key, options).boxed()
    }

    fn get_list_scoped(
        &self,
        key: String,
        scope: KeyScope,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<ListResult, StorageError>> {
        self.list_objects_in(key, scope, options, predicate).boxed()
    }

    fn guaranteed_update_with(
        &self,
        key: String,
        ignore_not_found: bool,
        preconditions: Preconditions,
        update: UpdateFn,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        self.update_object_with(key, ignore_not_found, preconditions, update)
            .boxed()
    }

    fn delete(
        &self,
        key: String,
        preconditions: Preconditions,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        self.delete_object(key, preconditions).boxed()
    }

    fn watch_scoped(
        &self,
        key: String,
        scope: KeyScope,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<Watch<Object>, StorageError>> {
        self.watch_objects_in(key, scope, options, predicate)
            .boxed()
    }

    fn count(&self, key: String) -> BoxFuture<'_, Result<i64, StorageError>> {
        self.count_objects(key).boxed()
    }

    fn get_current_resource_version(
        &self,
    ) -> BoxFuture<'_, Result<u64, StorageError>> {
        self.current_resource_version().boxed()
    }
}

fn internal(err: KvError) -> StorageError {
    match err {
        KvError::RequestTooLarge => StorageError::RequestTooLarge,
        err => StorageError::Internal(err.to_string()),
    }
}

/// etcd's default `--max-request-bytes` (`embed.DefaultMaxRequestBytes`, 1.5
/// MiB): the largest write etcd takes. Both backends refuse a larger key and
/// value here, before the transaction, as etcd refuses it
/// ([`StorageError::RequestTooLarge`]); etcd measures its whole raft request,
/// a few dozen bytes more than the key and the value.
pub const MAX_REQUEST_BYTES: usize = 1536 * 1024;

/// Refuses a write that etcd would refuse for its size.
fn check_request_size(key: &str, data: &[u8]) -> Result<(), StorageError> {
    if key.len() + data.len() > MAX_REQUEST_BYTES {
        return Err(StorageError::RequestTooLarge);
    }
    Ok(())
}

/// Mirrors `validateMinimumResourceVersion`: a requested version newer than etcd's
/// revision is 504 `ResourceVersionTooLarge`, compared as `uint64` (so every
/// version up to `u64::MAX` is simply too large), without a retry delay
/// (`NewTooLargeResourceVersionError(minimumRV, actualRevision, 0)`).
fn validate_minimum_resource_version(
    minimum: u64,
    actual: i64,
) -> Result<(), StorageError> {
    let actual = resource_version_of(actual);
    if minimum > actual {
        return Err(StorageError::TooLargeResourceVersion {
            requested: minimum,
            current: actual,
            retry_after_seconds: 0,
        });
    }
    Ok(())
}

/// How many keys the next range read of a list asks for: what the page still
/// wants (`fetch`, 0 for "everything"), at most `page_size`.
fn range_limit(fetch: i64, page_size: i64) -> i64 {
    if fetch > 0 {
        fetch.min(page_size)
    } else {
        page_size
    }
}

/// The smallest key after `key`: `key` + NUL (where the next page starts).
fn after(key: &[u8]) -> Bytes {
    let mut next = key.to_vec();
    next.push(0);
    next.into()
}

/// The name part of a key: the text after the last `/`.
fn name_of(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

#[derive(Serialize, Deserialize)]
struct ContinueToken {
    v: String,
    rv: i64,
    start: String,
}

/// Mirrors `storage.EncodeContinue`: base64 of
/// `{"v":"meta.k8s.io/v1","rv":N,"start":KEY}`, where `KEY` is the next key relative
/// to the list's prefix.
pub fn encode_continue(rv: i64, start: &str) -> String {
    let token = ContinueToken {
        v: "meta.k8s.io/v1".into(),
        rv,
        start: start.to_string(),
    };
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(&token).unwrap_or_default())
}

/// Mirrors `storage.DecodeContinue`: the revision and the relative start key, or 400
/// for a malformed token. Revision 0 is invalid; a negative revision means "the
/// newest". The start key may begin with `/`, but must be a clean path: no `.` or
/// `..` segment, no empty segment (no escaping the prefix).
pub fn decode_continue(token: &str) -> Result<(i64, String), StorageError> {
    let bad = |why: &str| {
        StorageError::BadRequest(format!("continue key is not valid: {why}"))
    };
    let data = URL_SAFE_NO_PAD
        .decode(token.trim_end_matches('='))
        .map_err(|_| {
            bad("incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
        })?;
    let token: ContinueToken = serde_json::from_slice(&data)
        .map_err(|_| bad("incorrect encoded start resourceVersion"))?;
    if token.v != "meta.k8s.io/v1" {
        return Err(bad("server does not recognize this encoded version"));
    }
    if token.rv == 0 {
        return Err(bad(
            "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ));
    }
    if token.start.is_empty() {
        return Err(bad("encoded start key empty (version meta.k8s.io/v1)"));
    }
    // `path.Clean("/" + start)` must leave it unchanged.
    let start = token.start.strip_prefix('/').unwrap_or(&token.start);
    let clean = !start.is_empty()
        && start
            .split('/')
            .all(|segment| !matches!(segment, "" | "." | ".."));
    if !clean {
        return Err(bad(&token.start));
    }
    Ok((token.rv, start.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::observed::ObservedKv;
    use crate::{list_prefix, object_key};

    fn key(name: &str) -> String {
        object_key(&ResourceInfo::PODS, Some("ns"), name)
    }

    /// A store over an [`ObservedKv`] holding pods `p00`, `p01`, … (every other
    /// one labelled `app=web`), reading ranges of at most `page` keys.
    async fn store_with(count: usize, page: i64) -> (Arc<ObservedKv>, Etcd3Store) {
        let kv = Arc::new(ObservedKv::default());
        let store =
            Etcd3Store::new(Arc::clone(&kv) as Arc<dyn Kv>, ResourceInfo::PODS)
                .with_range_page_size(page);
        for n in 0..count {
            let name = format!("p{n:02}");
            let app = if n % 2 == 0 { "web" } else { "db" };
            let pod = Object::new(&ResourceInfo::PODS, Some("ns"), &name)
                .with_labels([("app", app)]);
            store.create_object(key(&name), pod).await.expect("create");
        }
        kv.clear_ranges();
        (kv, store)
    }

    fn names(list: &ListResult) -> Vec<String> {
        list.items.iter().map(|o| o.name().to_string()).collect()
    }

    #[tokio::test]
    async fn a_list_without_a_limit_reads_ranges_of_a_page_at_one_revision() {
        let (kv, store) = store_with(25, 10).await;
        // A write lands between the first range and the next: the list must not
        // see it.
        kv.write_after_next_range(
            key("p07a").into(),
            serde_json::to_vec(&Object::new(
                &ResourceInfo::PODS,
                Some("ns"),
                "p07a",
            ))
            .expect("encode")
            .into(),
        );
        let list = store
            .list_objects(
                list_prefix(&ResourceInfo::PODS, Some("ns")),
                ListOptions::default(),
                SelectionPredicate::default(),
            )
            .await
            .expect("list");
        let expected: Vec<String> = (0..25).map(|n| format!("p{n:02}")).collect();
        assert_eq!(names(&list), expected);
        assert_eq!(list.continue_token, "");
        assert_eq!(list.remaining_item_count, None);
        let ranges = kv.ranges();
        let revision = i64::try_from(list.resource_version).expect("revision");
        assert_eq!(ranges, [(10, 0), (10, revision), (10, revision)]);
    }

    #[tokio::test]
    async fn a_page_larger_than_a_range_is_read_in_several_and_continues() {
        let (kv, store) = store_with(30, 10).await;
        let prefix = list_prefix(&ResourceInfo::PODS, Some("ns"));
        let first = store
            .list_objects(
                prefix.clone(),
                ListOptions {
                    limit: 25,
                    ..ListOptions::default()
                },
                SelectionPredicate::default(),
            )
            .await
            .expect("first page");
        assert_eq!(first.items.len(), 25);
        assert_eq!(first.remaining_item_count, Some(5));
        assert!(kv.ranges().iter().all(|&(limit, _)| limit == 10));
        let rest = store
            .list_objects(
                prefix,
                ListOptions {
                    limit: 25,
                    continue_token: first.continue_token.clone(),
                    ..ListOptions::default()
                },
                SelectionPredicate::default(),
            )
            .await
            .expect("second page");
        assert_eq!(names(&rest), ["p25", "p26", "p27", "p28", "p29"]);
        assert_eq!(rest.continue_token, "");
        assert_eq!(rest.resource_version, first.resource_version);
    }

    #[tokio::test]
    async fn a_selector_fills_its_page_from_ranges_no_larger_than_a_page() {
        let (kv, store) = store_with(30, 3).await;
        let web = SelectionPredicate::parse(&ResourceInfo::PODS, "app=web", "")
            .expect("selector");
        let list = store
            .list_objects(
                list_prefix(&ResourceInfo::PODS, Some("ns")),
                ListOptions {
                    limit: 4,
                    ..ListOptions::default()
                },
                web,
            )
            .await
            .expect("list");
        assert_eq!(names(&list), ["p00", "p02", "p04", "p06"]);
        assert!(!list.continue_token.is_empty());
        assert_eq!(list.remaining_item_count, None);
        let limits: Vec<i64> = kv.ranges().iter().map(|r| r.0).collect();
        assert_eq!(limits, [3, 3, 3]);
    }

    #[test]
    fn a_range_asks_for_what_the_page_wants_but_never_more_than_a_range_page() {
        assert_eq!(range_limit(0, 1_000), 1_000);
        assert_eq!(range_limit(500, 1_000), 500);
        assert_eq!(range_limit(10_000, 1_000), 1_000);
    }
}
