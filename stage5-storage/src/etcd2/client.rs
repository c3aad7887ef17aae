//! A small client for etcd's v2 keys API (`/v2/keys`), over hyper.
//!
//! Mirrors the parts of `github.com/coreos/etcd/client` (`KeysAPI`) that the 1.5
//! apiserver's etcd helper and [`etcdWatcher`](super::watcher) use: `Get`
//! (optionally recursive and quorum), `Watcher(key, AfterIndex).Next` (the long poll
//! `?wait=true&waitIndex=N`), and `Set`/`Create`/ `Delete` for tests.
//!
//! The wire format, as etcd 3.4 started with `--enable-v2=true` answers:
//!
//! ```text
//! PUT /v2/keys/registry/pods/default/a   value=...
//! 201 Created   X-Etcd-Index: 4
//! {"action":"set","node":{"key":"/registry/pods/default/a","value":"...","modifiedIndex":4,"createdIndex":4}}
//!
//! GET /v2/keys/registry?wait=true&waitIndex=2&recursive=true    (after more than 1000 writes)
//! 400 Bad Request
//! {"errorCode":401,"message":"The event in requested index is outdated and cleared",
//!  "cause":"the requested history has been cleared [112/2]","index":1111}
//! ```
//!
//! A long poll's headers arrive at once; the body arrives with the first event at or
//! after `waitIndex`. Dropping the future of [`EtcdClient::wait`] closes the
//! connection, which is how the watcher cancels a poll on stop.
//!
//! [keys API]: https://etcd.io/docs/v2.3/api/

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::{Deserialize, Serialize};

/// etcd's error code for a `waitIndex` older than the 1000 events of v2 history
/// (`EcodeEventIndexCleared`).
pub const ECODE_EVENT_INDEX_CLEARED: u64 = 401;
/// etcd's error code for a missing key (`EcodeKeyNotFound`).
pub const ECODE_KEY_NOT_FOUND: u64 = 100;

/// How long a non-waiting request (get, put, delete) may take before it fails.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

// ANCHOR: v2_response
/// Mirrors etcd client's `Response`: what every keys API call answers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    /// `get`, `set`, `create`, `update`, `delete`, `compareAndSwap`,
    /// `compareAndDelete` or `expire`.
    pub action: String,
    /// The node after the action (for a delete: only key and indexes). Absent in
    /// odd answers, which the watcher logs and skips.
    #[serde(default)]
    pub node: Option<Node>,
    /// The node before the action, when there was one.
    #[serde(default)]
    pub prev_node: Option<Node>,
    /// The `X-Etcd-Index` header: the store's index when the answer was made (not
    /// in the body).
    #[serde(skip)]
    pub index: u64,
}

/// Mirrors etcd client's `Node`: a key, or a directory with its children.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    /// The full key, e.g. `/registry/pods/default/web-0`.
    pub key: String,
    /// The value; empty for directories and in the node of a delete.
    #[serde(default)]
    pub value: String,
    /// Whether this is a directory.
    #[serde(default)]
    pub dir: bool,
    /// A directory's children (only with `recursive=true` below the first level).
    #[serde(default)]
    pub nodes: Vec<Node>,
    /// The index of the last change to this node.
    #[serde(default)]
    pub modified_index: u64,
    /// The index at which this node was created.
    #[serde(default)]
    pub created_index: u64,
    /// Seconds left to live, for a key with a TTL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<i64>,
    /// When a key with a TTL expires (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiration: Option<String>,
}
// ANCHOR_END: v2_response

// ANCHOR: v2_error
/// Mirrors etcd client's `Error`: the body of a failed keys API call.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, thiserror::Error,
)]
#[serde(rename_all = "camelCase")]
#[error("{error_code}: {message} ({cause}) [{index}]")]
pub struct EtcdError {
    /// etcd's error code, e.g. 100 (key not found) or 401 (index cleared).
    pub error_code: u64,
    /// What went wrong.
    #[serde(default)]
    pub message: String,
    /// The key, or more detail.
    #[serde(default)]
    pub cause: String,
    /// The store's index when the error happened.
    #[serde(default)]
    pub index: u64,
}
// ANCHOR_END: v2_error

/// Why a keys API call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// etcd answered with an error body.
    #[error("etcd: {0}")]
    Etcd(#[from] EtcdError),
    /// The endpoint or key does not form a valid URL.
    #[error("invalid request to etcd: {0}")]
    InvalidRequest(String),
    /// The connection failed or broke (etcd down, killed, or unreachable).
    #[error("etcd connection failed: {0}")]
    Connection(String),
    /// etcd answered something that is not a keys API response.
    #[error("unexpected answer from etcd (HTTP {status}): {detail}")]
    UnexpectedResponse {
        /// The HTTP status.
        status: u16,
        /// What could not be understood.
        detail: String,
    },
    /// A non-waiting request took longer than its timeout.
    #[error("etcd request timed out after {0:?}")]
    Timeout(Duration),
}

impl ClientError {
    /// The etcd error code, if etcd answered with an error body.
    pub fn etcd_code(&self) -> Option<u64> {
        match self {
            ClientError::Etcd(error) => Some(error.error_code),
            _ => None,
        }
    }
}

/// Mirrors etcdutil's `IsEtcdWatchExpired`: etcd error 401, the `waitIndex` is older
/// than the v2 history.
pub fn is_etcd_watch_expired(error: &ClientError) -> bool {
    error.etcd_code() == Some(ECODE_EVENT_INDEX_CLEARED)
}

/// Mirrors etcdutil's `IsEtcdNotFound`: etcd error 100.
pub fn is_etcd_not_found(error: &ClientError) -> bool {
    error.etcd_code() == Some(ECODE_KEY_NOT_FOUND)
}

/// Mirrors etcd client's `GetOptions` (the parts the apiserver uses).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GetOptions {
    /// Return a directory's whole subtree.
    pub recursive: bool,
    /// Read through raft (linearizable) instead of from the local member.
    pub quorum: bool,
}

/// Mirrors etcd client's `SetOptions` (the parts tests use).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetOptions {
    /// `Some(false)`: only create (answer action `create`, error 105 if the key
    /// exists); `Some(true)`: only update (action `update`).
    pub prev_exist: Option<bool>,
    /// Compare-and-swap on the current value (action `compareAndSwap`).
    pub prev_value: Option<String>,
    /// Compare-and-swap on the current modified index (action `compareAndSwap`).
    pub prev_index: Option<u64>,
    /// Time to live in seconds; the key then expires (action `expire` in watches).
    pub ttl: Option<u64>,
}

/// Mirrors etcd client's `KeysAPI` over one endpoint. Cheap to clone (the connection
/// pool is shared).
#[derive(Clone)]
pub struct EtcdClient {
    endpoint: String,
    http: Client<HttpConnector, Full<Bytes>>,
    request_timeout: Duration,
}

impl fmt::Debug for EtcdClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EtcdClient")
            .field("endpoint", &self.endpoint)
            .field("request_timeout", &self.request_timeout)
            .finish()
    }
}

impl EtcdClient {
    /// A client of the etcd at `endpoint`, e.g. `http://127.0.0.1:2379`.
    pub fn new(endpoint: impl Into<String>) -> Self {
        let endpoint = endpoint.into().trim_end_matches('/').to_string();
        EtcdClient {
            endpoint,
            http: Client::builder(TokioExecutor::new()).build_http(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
        }
    }

    /// The same client with another timeout for non-waiting requests.
    #[must_use]
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Mirrors `KeysAPI.Get`: one key, or a directory (with `recursive`, its whole
    /// subtree).
    pub async fn get(
        &self,
        key: &str,
        options: GetOptions,
    ) -> Result<Response, ClientError> {
        let mut query = vec![];
        if options.recursive {
            query.push(("recursive", "true".to_string()));
        }
        if options.quorum {
            query.push(("quorum", "true".to_string()));
        }
        self.timed(self.call(Method::GET, key, &query, None)).await
    }

    /// Mirrors one `Watcher.Next` of a watcher made with `AfterIndex = wait_index -
    /// 1`: the long poll `?wait=true&waitIndex=N` for the first change at or
    /// after `wait_index` under `key`.
    ///
    /// Waits as long as it takes (no timeout); cancel it by dropping the future.
    /// `Ok(None)` is an empty answer (etcd closed the poll without an event):
    /// poll again with the same index.
    pub async fn wait(
        &self,
        key: &str,
        wait_index: u64,
        recursive: bool,
    ) -> Result<Option<Response>, ClientError> {
        let mut query = vec![
            ("wait", "true".to_string()),
            ("waitIndex", wait_index.to_string()),
        ];
        if recursive {
            query.push(("recursive", "true".to_string()));
        }
        match self.call(Method::GET, key, &query, None).await {
            Err(ClientError::UnexpectedResponse {
                status: 200,
                detail,
            }) if detail.is_empty() => Ok(None),
            other => other.map(Some),
        }
    }

    /// Mirrors `KeysAPI.Set`: writes `value` under `key` (actions `set`, `create`,
    /// `update` or `compareAndSwap`, by the options).
    pub async fn set(
        &self,
        key: &str,
        value: &str,
        options: &SetOptions,
    ) -> Result<Response, ClientError> {
        let mut query = vec![];
        if let Some(prev_exist) = options.prev_exist {
            query.push(("prevExist", prev_exist.to_string()));
        }
        if let Some(prev_value) = &options.prev_value {
            query.push(("prevValue", prev_value.clone()));
        }
        if let Some(prev_index) = options.prev_index {
            query.push(("prevIndex", prev_index.to_string()));
        }
        if let Some(ttl) = options.ttl {
            query.push(("ttl", ttl.to_string()));
        }
        let body = format!("value={}", percent_encode(value, false));
        self.timed(self.call(Method::PUT, key, &query, Some(body)))
            .await
    }

    /// Mirrors `KeysAPI.Create`: `set` with `prevExist=false` (action `create`).
    pub async fn create(
        &self,
        key: &str,
        value: &str,
    ) -> Result<Response, ClientError> {
        let options = SetOptions {
            prev_exist: Some(false),
            ..SetOptions::default()
        };
        self.set(key, value, &options).await
    }

    /// Mirrors `KeysAPI.Delete` of one key (action `delete`, or `compareAndDelete`
    /// with `prev_index`).
    pub async fn delete(
        &self,
        key: &str,
        prev_index: Option<u64>,
    ) -> Result<Response, ClientError> {
        let mut query = vec![];
        if let Some(prev_index) = prev_index {
            query.push(("prevIndex", prev_index.to_string()));
        }
        self.timed(self.call(Method::DELETE, key, &query, None))
            .await
    }

    async fn timed(
        &self,
        call: impl Future<Output = Result<Response, ClientError>>,
    ) -> Result<Response, ClientError> {
        tokio::time::timeout(self.request_timeout, call)
            .await
            .map_err(|_| ClientError::Timeout(self.request_timeout))?
    }

    /// One request to `/v2/keys<key>`: an event body is a [`Response`] (its `index`
    /// from the `X-Etcd-Index` header), an error body an [`EtcdError`].
    async fn call(
        &self,
        method: Method,
        key: &str,
        query: &[(&str, String)],
        form: Option<String>,
    ) -> Result<Response, ClientError> {
        let mut uri =
            format!("{}/v2/keys{}", self.endpoint, percent_encode_key(key));
        for (i, (name, value)) in query.iter().enumerate() {
            uri.push(if i == 0 { '?' } else { '&' });
            uri.push_str(name);
            uri.push('=');
            uri.push_str(&percent_encode(value, false));
        }
        let mut request = Request::builder().method(method).uri(&uri);
        if form.is_some() {
            request =
                request.header("content-type", "application/x-www-form-urlencoded");
        }
        let request = request
            .body(Full::new(Bytes::from(form.unwrap_or_default())))
            .map_err(|e| ClientError::InvalidRequest(format!("{uri}: {e}")))?;
        let response = self
            .http
            .request(request)
            .await
            .map_err(|e| ClientError::Connection(error_chain(&e)))?;
        let status = response.status();
        let index = response
            .headers()
            .get("x-etcd-index")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| ClientError::Connection(error_chain(&e)))?
            .to_bytes();
        decode_answer(status, index, &body)
    }
}

/// Turns one HTTP answer into a [`Response`] or an error.
fn decode_answer(
    status: StatusCode,
    index: u64,
    body: &[u8],
) -> Result<Response, ClientError> {
    if status.is_success() {
        return match serde_json::from_slice::<Response>(body) {
            Ok(mut response) => {
                response.index = index;
                Ok(response)
            }
            Err(e) => Err(ClientError::UnexpectedResponse {
                status: status.as_u16(),
                detail: if body.iter().all(u8::is_ascii_whitespace) {
                    String::new()
                } else {
                    format!("{e}: {}", String::from_utf8_lossy(body))
                },
            }),
        };
    }
    match serde_json::from_slice::<EtcdError>(body) {
        Ok(error) => Err(ClientError::Etcd(error)),
        Err(_) => Err(ClientError::UnexpectedResponse {
            status: status.as_u16(),
            detail: String::from_utf8_lossy(body).into_owned(),
        }),
    }
}

/// An error and its sources, `a: b: c`, so that "connection refused" is not hidden.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

/// Percent-encodes a key for the URL path: every byte but unreserved characters and
/// `/`.
fn percent_encode_key(key: &str) -> String {
    let key = if key.starts_with('/') {
        key.to_string()
    } else {
        format!("/{key}")
    };
    percent_encode(&key, true)
}

/// Percent-encodes everything but RFC 3986 unreserved characters (and `/` when
/// `keep_slash`).
fn percent_encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        let keep = byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'_' | b'.' | b'~')
            || (keep_slash && byte == b'/');
        if keep {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_decode_with_the_header_index() {
        let body = br#"{"action":"compareAndSwap","node":{"key":"/a","value":"y","modifiedIndex":5,"createdIndex":4},"prevNode":{"key":"/a","value":"x","modifiedIndex":4,"createdIndex":4}}"#;
        let response =
            decode_answer(StatusCode::OK, 5, body).expect("a valid answer");
        assert_eq!(response.action, "compareAndSwap");
        assert_eq!(response.index, 5);
        let node = response.node.expect("a node");
        assert_eq!((node.modified_index, node.created_index), (5, 4));
        assert_eq!(response.prev_node.map(|n| n.value), Some("x".to_string()));
    }

    #[test]
    fn error_bodies_become_etcd_errors() {
        let body = br#"{"errorCode":401,"message":"The event in requested index is outdated and cleared","cause":"the requested history has been cleared [112/2]","index":1111}"#;
        let error = decode_answer(StatusCode::BAD_REQUEST, 1111, body)
            .expect_err("an error");
        assert!(is_etcd_watch_expired(&error), "{error}");
        assert!(
            error.to_string().contains("outdated and cleared"),
            "{error}"
        );
        let body = br#"{"errorCode":100,"message":"Key not found","cause":"/nope","index":4}"#;
        assert!(is_etcd_not_found(
            &decode_answer(StatusCode::NOT_FOUND, 4, body).expect_err("an error")
        ));
        let error = decode_answer(StatusCode::BAD_GATEWAY, 0, b"proxy down")
            .expect_err("error");
        assert!(matches!(
            error,
            ClientError::UnexpectedResponse { status: 502, .. }
        ));
    }

    #[test]
    fn an_empty_success_body_is_recognised() {
        let error =
            decode_answer(StatusCode::OK, 7, b"").expect_err("not a response");
        assert!(matches!(
            error,
            ClientError::UnexpectedResponse { status: 200, ref detail } if detail.is_empty()
        ));
    }

    #[test]
    fn keys_and_values_are_percent_encoded() {
        assert_eq!(
            percent_encode_key("registry/pods/a b"),
            "/registry/pods/a%20b"
        );
        assert_eq!(percent_encode(r#"{"a":1}"#, false), "%7B%22a%22%3A1%7D");
    }
}
