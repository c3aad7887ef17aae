//! A [`ListerWatcher`] over kube-client.
//!
//! Mirrors client-go's `NewFilteredListWatchFromClient` (in
//! [`tools/cache/listwatch.go`]): list and watch one resource through a client, with
//! fixed label and field selectors. It works against a real cluster and against
//! stage 5's server.
//!
//! # Wire details
//! - Requests are built with kube's `Request` from the `Api`'s URL, so namespaces
//!   and resource paths are kube's business.
//! - kube drops `resourceVersion=0` from a list that has a `limit`; client-go sends
//!   both (the watch cache then answers in full and ignores the limit). This lister
//!   puts it back.
//! - A watch `ERROR` event and an HTTP error body both become
//!   [`Error::from_status`], so a 410 or "too old resource version" is
//!   [`Error::Expired`] and other statuses keep their code.
//! - kube's default client retries 429, 503 and 504 by itself (up to 15 times,
//!   backing off to 1000 s). That hides 429 from the reflector's own backoff and
//!   turns a "too large resource version" (a 504) into minutes of retries instead of
//!   an immediate relist. Build the client with [`KubeListerWatcher::client`], which
//!   turns kube's retries off.
//! - Each watch event's object is checked for its `apiVersion` and `kind` before it
//!   is decoded; an object of another type becomes [`Error::UnexpectedType`], which
//!   the reflector skips. This reads the event twice (a quick scan for the two
//!   fields, then the decode).
//!
//! [`tools/cache/listwatch.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/cache/listwatch.go

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use futures::StreamExt;
use http::Request as HttpRequest;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ListMeta, Status, StatusCause, StatusDetails,
};
use kube::api::{Api, ListParams, VersionMatch, WatchParams};
use kube::core::Request;
use kube::core::response::StatusSummary;
use kube::{Client, Resource};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::error::Error;
use crate::listwatch::{ListPage, ListerWatcher};
use crate::watch::{Bookmark, Watch, WatchEvent, WatchItem};
use apimachinery::apis::meta::v1::{
    ListOptions, ResourceVersionMatch, WatchOptions,
};

/// Lists and watches `K` through a kube [`Client`], like client-go's
/// `NewFilteredListWatchFromClient`.
///
/// Build the client with [`KubeListerWatcher::client`]: kube's default client
/// retries 429, 503 and 504 by itself, which would hide them from the reflector.
/// Statuses the server sends become [`Error::from_status`] (so a 410 is
/// [`Error::Expired`]); a watch event whose object has another `apiVersion` or
/// `kind` becomes [`Error::UnexpectedType`]. A list from `"0"` with a limit sends
/// `resourceVersion=0`, as client-go does (kube alone would leave it out).
pub struct KubeListerWatcher<K> {
    client: Client,
    request: Request,
    label_selector: String,
    field_selector: String,
    expected: Arc<ExpectedType>,
    _object: PhantomData<fn() -> K>,
}

impl<K> Clone for KubeListerWatcher<K> {
    fn clone(&self) -> Self {
        KubeListerWatcher {
            client: self.client.clone(),
            request: Request::new(self.request.url_path.clone()),
            label_selector: self.label_selector.clone(),
            field_selector: self.field_selector.clone(),
            expected: Arc::clone(&self.expected),
            _object: PhantomData,
        }
    }
}

impl<K> fmt::Debug for KubeListerWatcher<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeListerWatcher")
            .field("url_path", &self.request.url_path)
            .field("label_selector", &self.label_selector)
            .field("field_selector", &self.field_selector)
            .finish_non_exhaustive()
    }
}

/// The `apiVersion` and `kind` watch events must carry.
#[derive(Debug)]
struct ExpectedType {
    api_version: String,
    kind: String,
}

impl<K> KubeListerWatcher<K>
where
    K: Resource + DeserializeOwned + Send + Sync + 'static,
    K::DynamicType: Default,
{
    /// Lists and watches what `api` addresses (all namespaces, or one).
    pub fn new(api: Api<K>) -> Self {
        let dynamic_type = K::DynamicType::default();
        let request = Request::new(api.resource_url());
        KubeListerWatcher {
            client: api.into_client(),
            request,
            label_selector: String::new(),
            field_selector: String::new(),
            expected: Arc::new(ExpectedType {
                api_version: K::api_version(&dynamic_type).into_owned(),
                kind: K::kind(&dynamic_type).into_owned(),
            }),
            _object: PhantomData,
        }
    }

    /// A kube [`Client`] for reflectors: `config` with kube's own retry layer turned
    /// off (`Config::default_retry = false`), so that 429 and 504 reach the
    /// reflector.
    pub fn client(mut config: kube::Config) -> Result<Client, Error> {
        config.default_retry = false;
        Client::try_from(config)
            .map_err(|error| from_kube(error, "a client configuration"))
    }

    /// Restricts lists and watches to objects matching this label selector, unless
    /// the options of a call carry their own.
    #[must_use]
    pub fn label_selector(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = selector.into();
        self
    }

    /// Restricts lists and watches to objects matching this field selector, unless
    /// the options of a call carry their own.
    #[must_use]
    pub fn field_selector(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = selector.into();
        self
    }

    fn selector<'a>(
        &'a self,
        from_options: &'a str,
        own: &'a str,
    ) -> Option<String> {
        let selector = if from_options.is_empty() {
            own
        } else {
            from_options
        };
        (!selector.is_empty()).then(|| selector.to_string())
    }

    fn list_params(&self, options: &ListOptions) -> ListParams {
        ListParams {
            label_selector: self
                .selector(&options.label_selector, &self.label_selector),
            field_selector: self
                .selector(&options.field_selector, &self.field_selector),
            limit: (options.limit != 0).then_some(options.limit),
            continue_token: (!options.continue_token.is_empty())
                .then(|| options.continue_token.clone()),
            version_match: options.resource_version_match.map(version_match),
            resource_version: (!options.resource_version.is_empty())
                .then(|| options.resource_version.clone()),
            ..ListParams::default()
        }
    }

    fn watch_params(&self, options: &WatchOptions) -> Result<WatchParams, Error> {
        match options.resource_version_match {
            None => {}
            Some(ResourceVersionMatch::NotOlderThan)
                if options.send_initial_events => {}
            Some(other) => {
                return Err(Error::InvalidOptions {
                    message: format!(
                        "a watch accepts resource_version_match only as NotOlderThan with \
                         send_initial_events, not {other:?}"
                    ),
                });
            }
        }
        Ok(WatchParams {
            label_selector: self
                .selector(&options.label_selector, &self.label_selector),
            field_selector: self
                .selector(&options.field_selector, &self.field_selector),
            timeout: options.timeout_seconds,
            bookmarks: options.allow_watch_bookmarks,
            send_initial_events: options.send_initial_events,
        })
    }
}

impl<K> ListerWatcher<K> for KubeListerWatcher<K>
where
    K: Resource + DeserializeOwned + Send + Sync + 'static,
    K::DynamicType: Default,
{
    async fn list(&self, options: ListOptions) -> Result<ListPage<K>, Error> {
        let params = self.list_params(&options);
        let mut request =
            self.request
                .list(&params)
                .map_err(|source| Error::InvalidOptions {
                    message: source.to_string(),
                })?;
        if options.resource_version == "0"
            && params.limit.is_some()
            && params.continue_token.is_none()
        {
            // kube leaves `resourceVersion=0` out when there is a limit; client-go
            // does not.
            let mut uri = request.uri().to_string();
            uri.push_str("&resourceVersion=0");
            if let Some(version_match) = &options.resource_version_match {
                uri.push_str("&resourceVersionMatch=");
                uri.push_str(version_match.as_str());
            }
            *request.uri_mut() =
                uri.parse().map_err(|source| Error::InvalidOptions {
                    message: format!("cannot build the list URL {uri:?}: {source}"),
                })?;
        }
        let body: ListBody<K> = retry_on_closed_connection(|| {
            self.client.request(copy_request(&request))
        })
        .await
        .map_err(|error| from_kube(error, "a list response"))?;
        Ok(ListPage {
            items: body
                .items
                .unwrap_or_default()
                .into_iter()
                .map(Arc::new)
                .collect(),
            resource_version: body.metadata.resource_version.unwrap_or_default(),
            continue_token: body.metadata.continue_.unwrap_or_default(),
        })
    }

    async fn watch(&self, options: WatchOptions) -> Result<Watch<K>, Error> {
        let params = self.watch_params(&options)?;
        let request = self
            .request
            .watch(&params, &options.resource_version)
            .map_err(|source| Error::InvalidOptions {
                message: source.to_string(),
            })?;
        let events = retry_on_closed_connection(|| {
            self.client
                .request_events::<Box<RawValue>>(copy_request(&request))
        })
        .await
        .map_err(|error| from_kube(error, "a watch response"))?;
        let expected = Arc::clone(&self.expected);
        // Mirrors `StreamWatcher.receive`: a stream that breaks with a probable EOF
        // (a reset connection, an unexpected EOF) ends quietly, as if the
        // server had closed it, so the Reflector re-watches from its last
        // version instead of relisting.
        let events = events.take_while(|item| {
            let ends_quietly = matches!(item, Err(error) if is_probable_eof(error));
            if ends_quietly {
                tracing::debug!(
                    "the watch stream ended with a probable EOF; closing it quietly"
                );
            }
            std::future::ready(!ends_quietly)
        });
        Ok(Watch::new(
            events.map(move |item| decode_event::<K>(item, &expected)),
        ))
    }
}

/// A list response: `metadata` and `items`, without kube's `ObjectList`'s
/// `#[serde(flatten)]`, which would buffer the whole response before decoding it.
#[derive(Deserialize)]
#[serde(bound(deserialize = "K: DeserializeOwned"))]
struct ListBody<K> {
    #[serde(default)]
    metadata: ListMeta,
    #[serde(default)]
    items: Option<Vec<K>>,
}

/// Just the type fields of an object.
#[derive(Deserialize)]
struct TypeProbe<'a> {
    #[serde(rename = "apiVersion", borrow, default)]
    api_version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
}

fn decode_event<K: DeserializeOwned>(
    item: Result<kube::core::WatchEvent<Box<RawValue>>, kube::Error>,
    expected: &ExpectedType,
) -> WatchItem<K> {
    use kube::core::WatchEvent as Wire;
    let event = item.map_err(|error| from_kube(error, "a watch event"))?;
    Ok(match event {
        Wire::Added(raw) => WatchEvent::Added(decode_object(&raw, expected)?),
        Wire::Modified(raw) => WatchEvent::Modified(decode_object(&raw, expected)?),
        Wire::Deleted(raw) => WatchEvent::Deleted(decode_object(&raw, expected)?),
        Wire::Bookmark(bookmark) => WatchEvent::Bookmark(Bookmark {
            resource_version: bookmark.metadata.resource_version,
            annotations: bookmark.metadata.annotations,
        }),
        Wire::Error(status) => {
            WatchEvent::Error(Box::new(status_from_kube(*status)))
        }
    })
}

// ANCHOR: decode_object
/// Checks the object's type, then decodes it.
fn decode_object<K: DeserializeOwned>(
    raw: &RawValue,
    expected: &ExpectedType,
) -> Result<Arc<K>, Error> {
    let decode_error = |source: serde_json::Error| Error::Decode {
        what: "a watch event object",
        source: Box::new(source),
    };
    let probe: TypeProbe<'_> =
        serde_json::from_str(raw.get()).map_err(decode_error)?;
    let api_version = probe
        .api_version
        .as_deref()
        .unwrap_or(&expected.api_version);
    let kind = probe.kind.as_deref().unwrap_or(&expected.kind);
    if api_version != expected.api_version || kind != expected.kind {
        return Err(Error::UnexpectedType {
            expected: format!("{}/{}", expected.api_version, expected.kind),
            actual: format!("{api_version}/{kind}"),
        });
    }
    serde_json::from_str(raw.get())
        .map(Arc::new)
        .map_err(decode_error)
}
// ANCHOR_END: decode_object

fn version_match(version_match: ResourceVersionMatch) -> VersionMatch {
    match version_match {
        ResourceVersionMatch::NotOlderThan => VersionMatch::NotOlderThan,
        ResourceVersionMatch::Exact => VersionMatch::Exact,
    }
}

/// Mirrors the retry Go's `http.Transport` makes for client-go
/// (`persistConn.shouldRetryRequest`): a replayable request (a `GET` without a
/// body) sent on a kept-alive connection that the server, or a load balancer
/// before it, had closed is sent once more on a new connection. kube's hyper
/// client retries only a request it never wrote, so without this a list or a
/// watch on such a connection would fail with a reset, and a Reflector would
/// relist after a watch that never started. Once, and only on a probable EOF.
async fn retry_on_closed_connection<T, F, Fut>(mut send: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    match send().await {
        Err(error) if is_probable_eof(&error) => {
            tracing::debug!(%error, "the connection was closed; sending the request again");
            send().await
        }
        other => other,
    }
}

/// A copy of a request kube built (`http::Request` is not `Clone`): its method,
/// URI, headers and body.
fn copy_request(request: &HttpRequest<Vec<u8>>) -> HttpRequest<Vec<u8>> {
    let mut copy = HttpRequest::new(request.body().clone());
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.headers_mut() = request.headers().clone();
    *copy.version_mut() = request.version();
    copy
}

// ANCHOR: is_probable_eof
/// Mirrors apimachinery's `net.IsProbableEOF` (`pkg/util/net/http.go`): whether an
/// error while reading a watch body means only that the connection went away (an I/O
/// error of kind `ConnectionReset`, `ConnectionAborted`, `BrokenPipe` or
/// `UnexpectedEof` anywhere in its source chain, or one of the messages upstream
/// matches). client-go's `StreamWatcher` closes the watch quietly on such an error;
/// any other error becomes an error event.
pub fn is_probable_eof(error: &(dyn std::error::Error + 'static)) -> bool {
    use std::io::ErrorKind;
    const MESSAGES: [&str; 7] = [
        "connection reset by peer",
        "unexpected eof",
        "use of closed network connection",
        "http2: server sent goaway",
        "broken pipe",
        "connection closed before message completed",
        "end of file before message length reached",
    ];
    let mut current = Some(error);
    while let Some(error) = current {
        if let Some(io) = error.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::BrokenPipe
                    | ErrorKind::UnexpectedEof
            )
        {
            return true;
        }
        let message = error.to_string().to_ascii_lowercase();
        if MESSAGES.iter().any(|m| message.contains(m)) {
            return true;
        }
        current = error.source();
    }
    false
}
// ANCHOR_END: is_probable_eof

/// Maps kube's errors onto this crate's: statuses are classified, decode failures
/// stay decode failures, and everything else is transport, with kube's error as the
/// source.
fn from_kube(error: kube::Error, what: &'static str) -> Error {
    match error {
        kube::Error::Api(status) => Error::from_status(status_from_kube(*status)),
        kube::Error::SerdeError(source) => Error::Decode {
            what,
            source: Box::new(source),
        },
        kube::Error::BuildRequest(source) => Error::InvalidOptions {
            message: source.to_string(),
        },
        other => Error::Transport {
            source: Box::new(other),
        },
    }
}

/// kube decodes statuses into its own type; this is the same status as k8s-openapi's
/// `Status`, field by field.
fn status_from_kube(status: kube::core::Status) -> Status {
    fn non_empty(value: String) -> Option<String> {
        (!value.is_empty()).then_some(value)
    }
    Status {
        code: (status.code != 0).then_some(i32::from(status.code)),
        message: non_empty(status.message),
        reason: non_empty(status.reason),
        status: status.status.map(|summary| {
            match summary {
                StatusSummary::Success => "Success",
                StatusSummary::Failure => "Failure",
            }
            .to_string()
        }),
        metadata: status.metadata.unwrap_or_default(),
        details: status.details.map(|details| StatusDetails {
            name: non_empty(details.name),
            group: non_empty(details.group),
            kind: non_empty(details.kind),
            uid: non_empty(details.uid),
            retry_after_seconds: (details.retry_after_seconds != 0).then(|| {
                i32::try_from(details.retry_after_seconds).unwrap_or(i32::MAX)
            }),
            causes: (!details.causes.is_empty()).then(|| {
                details
                    .causes
                    .into_iter()
                    .map(|cause| StatusCause {
                        reason: non_empty(cause.reason),
                        message: non_empty(cause.message),
                        field: non_empty(cause.field),
                    })
                    .collect()
            }),
        }),
    }
}

impl<K> KubeListerWatcher<K>
where
    K: Resource + DeserializeOwned + Send + Sync + 'static,
    K::DynamicType: Default,
    K::Scope: 'static,
{
    /// Lists and watches `K` through `client`: in `namespace` when it is given and
    /// `K` is namespaced, across the cluster otherwise. The factory (stage 4)
    /// uses this so that one generic call serves namespaced and cluster-scoped
    /// types, as client-go's generated informers do.
    pub fn for_namespace(client: Client, namespace: Option<&str>) -> Self {
        let namespaced = std::any::TypeId::of::<K::Scope>()
            == std::any::TypeId::of::<k8s_openapi::NamespaceResourceScope>();
        let namespace = namespace.filter(|ns| namespaced && !ns.is_empty());
        let mut lister_watcher = Self::new(Api::all(client));
        lister_watcher.request =
            Request::new(K::url_path(&K::DynamicType::default(), namespace));
        lister_watcher
    }
}
