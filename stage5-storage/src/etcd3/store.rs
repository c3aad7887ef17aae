//! Mirrors apiserver's `pkg/storage/etcd3/store.go`: one resource type's objects in
//! etcd.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use stage3_reflector::{ListOptions, ResourceVersionMatch, Watch, WatchOptions};

use super::watcher::{ProgressRegistry, WatchChan, WatchChanOptions};
use super::{decode, encode};
use crate::kv::{Compare, KeyValue, Kv, KvError, RangeRequest, TxnOp};
use crate::{
    ListResult, Preconditions, Storage, StorageError, UpdateFn,
    parse_resource_version,
};
use crate::{Object, ResourceInfo, SelectionPredicate};

/// How often a guaranteed update retries a lost compare-and-swap before giving up
/// with 409.
const MAX_UPDATE_ATTEMPTS: usize = 64;

// ANCHOR: etcd3_store
/// Mirrors `etcd3.store`: the objects of one resource type, JSON under
/// `/registry/<resource>/<namespace>/<name>`, with etcd's mod revision as
/// resourceVersion.
#[derive(Clone)]
pub struct Etcd3Store {
    kv: Arc<dyn Kv>,
    info: ResourceInfo,
    progress: Arc<ProgressRegistry>,
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
        }
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
        Ok(u64::try_from(revision).unwrap_or(0))
    }

    fn state(&self, kv: &KeyValue) -> Result<ObjState, StorageError> {
        Ok(ObjState {
            obj: Arc::new(decode(&kv.value, kv.mod_revision)?),
            mod_revision: kv.mod_revision,
            data: kv.value.clone(),
        })
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
            plural: self.info.plural.to_string(),
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
                plural: self.info.plural.to_string(),
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
        match self.get_state(&key).await? {
            Some(state) => Ok(state.obj),
            None => Err(self.not_found(&key)),
        }
    }

    // ANCHOR: get_list
    /// Mirrors `store.GetList`: `""` reads the newest state, `"0"` any state (here
    /// also the newest), `Exact` (or a legacy version with a limit) reads at
    /// that revision, and `NotOlderThan` fails with 504 if etcd is behind. Pages
    /// follow `limit` and the continue token, which pins every page to the first
    /// page's revision. A compacted revision or an expired continue token is
    /// 410.
    pub async fn list_objects(
        &self,
        prefix: String,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> Result<ListResult, StorageError> {
        let mut prefix = prefix;
        if !prefix.ends_with('/') {
            prefix.push('/');
        }
        let from_rv = parse_resource_version(&options.resource_version)?;
        let limit = i64::from(options.limit);
        let mut with_rev: i64 = 0;
        let mut start_key: Bytes = prefix.clone().into();
        let continuing = !options.continue_token.is_empty();
        if continuing {
            if !options.resource_version.is_empty()
                && options.resource_version != "0"
            {
                return Err(StorageError::BadRequest(
                    "specifying resource version is not allowed when using continue"
                        .into(),
                ));
            }
            let (rv, start) = decode_continue(&options.continue_token)?;
            with_rev = rv;
            start_key = format!("{prefix}{start}").into();
        } else {
            match options.resource_version_match {
                Some(ResourceVersionMatch::Exact) => {
                    if from_rv == 0 {
                        return Err(StorageError::BadRequest(
                            "resourceVersionMatch \"Exact\" requires a resourceVersion other than \"\" and \"0\"".into(),
                        ));
                    }
                    with_rev = rv_i64(from_rv);
                }
                Some(ResourceVersionMatch::NotOlderThan) => {}
                None if from_rv > 0 && limit > 0 => with_rev = rv_i64(from_rv),
                None => {}
            }
        }

        let mut items = Vec::new();
        let mut next_start: Option<Bytes> = None;
        let mut remaining: Option<i64> = None;
        // When filtering, fetch more than asked so that few round trips fill a page.
        let mut fetch = if limit > 0 { limit } else { 0 };
        loop {
            let mut request =
                RangeRequest::prefix(prefix.clone()).at_revision(with_rev);
            request.from_key = Some(start_key.clone());
            request.limit = fetch;
            let response = self.kv.range(request).await.map_err(|err| match err {
                KvError::Compacted { .. } if continuing => StorageError::Expired(
                    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.".into(),
                ),
                KvError::Compacted { .. } => StorageError::Expired(
                    "The resourceVersion for the provided list is too old.".into(),
                ),
                KvError::FutureRevision { current } => StorageError::TooLargeResourceVersion {
                    requested: from_rv,
                    current: u64::try_from(current).unwrap_or(0),
                },
                other => internal(other),
            })?;
            if with_rev == 0 {
                with_rev = response.header_revision;
            }
            let fetched = response.kvs.len();
            for (i, kv) in response.kvs.iter().enumerate() {
                if limit > 0 && items.len() as i64 >= limit {
                    // The page is full and at least this key remains.
                    next_start = Some(kv.key.clone());
                    if predicate.is_everything() {
                        // `count` covers the range from this batch's first key.
                        remaining =
                            Some(response.count - i64::try_from(i).unwrap_or(0));
                    }
                    break;
                }
                let obj = decode(&kv.value, kv.mod_revision)?;
                if predicate.is_everything() || predicate.matches(&self.info, &obj) {
                    items.push(Arc::new(obj));
                }
            }
            if next_start.is_some() || !response.more || fetched == 0 {
                break;
            }
            // More keys remain and the page is not full: continue after the last key
            // read.
            let mut after = response.kvs[fetched - 1].key.to_vec();
            after.push(0);
            start_key = after.into();
            if limit > 0 && items.len() as i64 >= limit {
                next_start = Some(start_key.clone());
                break;
            }
            fetch = (fetch * 2).min(10_000);
        }
        let returned_rv = u64::try_from(with_rev).unwrap_or(0);
        if options.resource_version_match == Some(ResourceVersionMatch::NotOlderThan)
            && from_rv > returned_rv
        {
            return Err(StorageError::TooLargeResourceVersion {
                requested: from_rv,
                current: returned_rv,
            });
        }
        let continue_token = match next_start {
            Some(key) => {
                let start =
                    String::from_utf8_lossy(&key[prefix.len().min(key.len())..])
                        .into_owned();
                encode_continue(with_rev, &start)
            }
            None => String::new(),
        };
        Ok(ListResult {
            items,
            resource_version: returned_rv,
            remaining_item_count: if continue_token.is_empty() {
                None
            } else {
                remaining.filter(|n| *n > 0)
            },
            continue_token,
        })
    }
    // ANCHOR_END: get_list

    // ANCHOR: guaranteed_update
    /// Mirrors `store.GuaranteedUpdate`: read the current object, check the
    /// preconditions, let `update` compute the new one, and compare-and-swap on
    /// the mod revision. A lost swap retries from the state the transaction
    /// read; an unchanged object is not written.
    pub async fn update_object(
        &self,
        key: String,
        preconditions: Preconditions,
        mut update: UpdateFn,
    ) -> Result<Arc<Object>, StorageError> {
        self.compare_and_swap(&key, &preconditions, |state| {
            let mut new_obj = update(&state.obj)?;
            let data = encode(&mut new_obj)?;
            if data == state.data {
                return Ok(Swap::Keep(Arc::clone(&state.obj)));
            }
            Ok(Swap::Write(TxnOp::Put(data), Box::new(new_obj)))
        })
        .await
    }

    /// The loop `GuaranteedUpdate` and `conditionalDelete` share: from the current
    /// state, check the preconditions, ask `attempt` what to write, and write it
    /// only if the key is still at the state's mod revision. A lost swap retries
    /// from the state the transaction read back.
    async fn compare_and_swap(
        &self,
        key: &str,
        preconditions: &Preconditions,
        mut attempt: impl FnMut(&ObjState) -> Result<Swap, StorageError>,
    ) -> Result<Arc<Object>, StorageError> {
        let mut state = self.get_state(key).await?;
        for _ in 0..MAX_UPDATE_ATTEMPTS {
            let current = state.ok_or_else(|| self.not_found(key))?;
            preconditions.check(&self.info, &current.obj)?;
            let (op, mut answer) = match attempt(&current)? {
                Swap::Keep(obj) => return Ok(obj),
                Swap::Write(op, answer) => (op, answer),
            };
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
            plural: self.info.plural.to_string(),
            name: name_of(key).to_string(),
            message: "too many concurrent updates; please try again".into(),
        })
    }
    // ANCHOR_END: guaranteed_update

    /// Mirrors `store.Delete` (`conditionalDelete`): delete by compare-and-swap
    /// after checking the preconditions, retrying when the object changed
    /// meanwhile. Returns the last state at the delete's revision.
    pub async fn delete_object(
        &self,
        key: String,
        preconditions: Preconditions,
    ) -> Result<Arc<Object>, StorageError> {
        self.compare_and_swap(&key, &preconditions, |state| {
            Ok(Swap::Write(TxnOp::Delete, Box::new((*state.obj).clone())))
        })
        .await
    }

    /// Mirrors `store.Watch` → `watcher.Watch`: a watchChan over the prefix. `""`
    /// and `"0"` start with the current state as Added events; a version starts
    /// after it, unless the client asks for a watch-list
    /// (`sendInitialEvents=true`), which lists the current state first at any
    /// version. Bookmarks (from etcd progress notifications) are asked for when the
    /// client allows them.
    pub async fn watch_objects(
        &self,
        prefix: String,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> Result<Watch<Object>, StorageError> {
        let rv = parse_resource_version(&options.resource_version)?;
        let initial_rev = rv_i64(rv);
        Ok(WatchChan::start(
            Arc::clone(&self.kv),
            self.info.clone(),
            prefix,
            WatchChanOptions {
                initial_rev,
                // `areInitialEventsRequired`: the legacy "" / "0", or a watch-list
                // at any version.
                force_initial_events: initial_rev == 0
                    || options.send_initial_events,
                recursive: true,
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

    fn get(&self, key: String) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        self.get_object(key).boxed()
    }

    fn get_list(
        &self,
        prefix: String,
        options: ListOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<ListResult, StorageError>> {
        self.list_objects(prefix, options, predicate).boxed()
    }

    fn guaranteed_update(
        &self,
        key: String,
        preconditions: Preconditions,
        update: UpdateFn,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        self.update_object(key, preconditions, update).boxed()
    }

    fn delete(
        &self,
        key: String,
        preconditions: Preconditions,
    ) -> BoxFuture<'_, Result<Arc<Object>, StorageError>> {
        self.delete_object(key, preconditions).boxed()
    }

    fn watch(
        &self,
        prefix: String,
        options: WatchOptions,
        predicate: SelectionPredicate,
    ) -> BoxFuture<'_, Result<Watch<Object>, StorageError>> {
        self.watch_objects(prefix, options, predicate).boxed()
    }
}

fn internal(err: KvError) -> StorageError {
    StorageError::Internal(err.to_string())
}

fn rv_i64(rv: u64) -> i64 {
    i64::try_from(rv).unwrap_or(i64::MAX)
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
/// for a malformed token (a start key that escapes the prefix included).
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
    if token.rv <= 0 {
        return Err(bad(
            "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ));
    }
    if token.start.is_empty()
        || token.start.contains("..")
        || token.start.starts_with('/')
    {
        return Err(bad("path traversal attempt"));
    }
    Ok((token.rv, token.start))
}
