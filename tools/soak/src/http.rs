//! Plain HTTP to the server through kube's client (`Client::send`), as
//! watch-fanout talks to it: JSON bodies, no typed API in between, kube's own
//! retries off so that every failure is seen. Every call here is bounded by
//! [`REQUEST_TIMEOUT`]; watches use [`open`] and read their body themselves.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::{Method, Request, StatusCode, Uri};
use kube::client::Body;

/// The longest one request (not a watch) may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A client of `server`: one connection pool, retries off, no read timeout (a
/// watch is read for as long as it lasts).
pub fn client(server: &Uri) -> Result<kube::Client, String> {
    let mut config = kube::Config::new(server.clone());
    config.default_retry = false;
    config.read_timeout = None;
    config.disable_compression = true;
    kube::Client::try_from(config).map_err(|error| error.to_string())
}

fn request(
    method: Method,
    path: &str,
    body: Vec<u8>,
    content_type: &str,
) -> Result<Request<Body>, String> {
    Request::builder()
        .method(method)
        .uri(path)
        .header(hyper::header::CONTENT_TYPE, content_type)
        .header(hyper::header::ACCEPT, "application/json")
        .body(Body::from(body))
        .map_err(|error| format!("bad request for {path}: {error}"))
}

/// Sends a request and returns the response once its headers are in, if its
/// status is one of `expect`; otherwise the status and the start of the body.
pub async fn open(
    client: &kube::Client,
    method: Method,
    path: &str,
    body: Vec<u8>,
    content_type: &str,
    expect: &[StatusCode],
) -> Result<hyper::Response<Body>, String> {
    let request = request(method, path, body, content_type)?;
    let response = client.send(request).await.map_err(|e| e.to_string())?;
    if expect.contains(&response.status()) {
        return Ok(response);
    }
    let status = response.status();
    let body = tokio::time::timeout(REQUEST_TIMEOUT, response.into_body().collect())
        .await
        .ok()
        .and_then(Result::ok)
        .map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
        .unwrap_or_default();
    let message: String = body.chars().take(300).collect();
    Err(format!("{status}: {message}"))
}

/// One whole request and its body, within [`REQUEST_TIMEOUT`].
pub async fn call(
    client: &kube::Client,
    method: Method,
    path: &str,
    body: Vec<u8>,
    content_type: &str,
    expect: &[StatusCode],
) -> Result<Bytes, String> {
    let exchange = async {
        let response =
            open(client, method, path, body, content_type, expect).await?;
        response
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .map_err(|e| e.to_string())
    };
    tokio::time::timeout(REQUEST_TIMEOUT, exchange)
        .await
        .map_err(|_| format!("no answer within {REQUEST_TIMEOUT:?}"))?
}

/// `GET path`, expecting 200.
pub async fn get(client: &kube::Client, path: &str) -> Result<Bytes, String> {
    call(
        client,
        Method::GET,
        path,
        Vec::new(),
        "application/json",
        &[StatusCode::OK],
    )
    .await
}
