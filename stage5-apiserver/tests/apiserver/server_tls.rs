//! HTTPS, as kube-apiserver serves it: a server with `--secure`'s material (a
//! generated CA and serving certificate) and the kubeconfig it writes, used
//! unchanged by kube-client (`kube::Config::from_custom_kubeconfig`: create, list,
//! watch a pod) and by kubectl (`--kubeconfig FILE get pods`); plain HTTP on the TLS
//! port answered at once with Go's message in a `Status`; and a client that opens
//! TCP but never sends its ClientHello closed after the read header timeout (Go's
//! `tlsHandshakeTimeout`). Every wait is bounded by [`WAIT`].

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{Value, json};
use stage5_apiserver::secure_serving::loopback_self_signed;
use stage5_apiserver::{RunningServer, Server, ServerConfig, kubeconfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout};

use super::server_informer_watch_reset::pod;
use super::server_kubectl::{kubectl_or_skip, output_in_time};

const WAIT: Duration = Duration::from_secs(20);

/// A TLS server with `--secure`'s material, and the kubeconfig written for it.
struct Secure {
    server: RunningServer,
    kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

async fn start_secure(config: ServerConfig) -> Secure {
    let generated = loopback_self_signed().expect("a certificate");
    let server = Server::start(config.tls(generated.serving))
        .await
        .expect("server starts");
    assert!(server.url().starts_with("https://"), "{}", server.url());
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("kubeconfig");
    kubeconfig::write_kubeconfig(&path, &server.url(), &generated.ca_pem, None)
        .expect("write the kubeconfig");
    Secure {
        server,
        kubeconfig: path,
        _dir: dir,
    }
}

#[tokio::test]
async fn kube_client_through_the_kubeconfig_creates_lists_and_watches() {
    let secure = start_secure(ServerConfig::for_tests()).await;
    let kubeconfig = Kubeconfig::read_from(&secure.kubeconfig).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &KubeConfigOptions::default(),
    )
    .await
    .expect("config");
    assert_eq!(config.cluster_url.scheme_str(), Some("https"));
    let client = kube::Client::try_from(config).expect("client");
    let pods: Api<Pod> = Api::namespaced(client, "default");

    timeout(WAIT, async {
        let created = pods
            .create(&PostParams::default(), &pod("tls-0"))
            .await
            .expect("create over TLS");
        let version = created.metadata.resource_version.clone().expect("rv");
        let listed = pods.list(&ListParams::default()).await.expect("list");
        assert_eq!(listed.items.len(), 1);
        assert_eq!(listed.items[0].metadata.name.as_deref(), Some("tls-0"));

        let mut watch = pods
            .watch(&WatchParams::default(), &version)
            .await
            .expect("watch")
            .boxed();
        pods.create(&PostParams::default(), &pod("tls-1"))
            .await
            .expect("second create");
        match watch.try_next().await.expect("a watch event") {
            Some(WatchEvent::Added(pod)) => {
                assert_eq!(pod.metadata.name.as_deref(), Some("tls-1"));
            }
            other => panic!("expected ADDED tls-1, got {other:?}"),
        }
    })
    .await
    .expect("create, list and watch in time");
    secure.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_through_the_kubeconfig_gets_pods() {
    let Some(bin) = kubectl_or_skip("kubectl_through_the_kubeconfig_gets_pods")
    else {
        return;
    };
    let secure = start_secure(ServerConfig::for_tests()).await;
    let cache = secure.kubeconfig.with_file_name("cache");
    let mut command = Command::new(bin);
    command
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBECONFIG")
        .arg("--kubeconfig")
        .arg(&secure.kubeconfig)
        .arg("--cache-dir")
        .arg(&cache)
        .arg("--request-timeout=15s")
        .args(["get", "pods", "-o", "json"])
        .stdin(Stdio::null());
    let output = output_in_time(command).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "kubectl failed: {stderr}");
    let list: Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(list["kind"], "List", "{list}");
    assert_eq!(list["items"], json!([]), "{list}");
    secure.server.shutdown().await;
}

#[tokio::test]
async fn plain_http_on_the_tls_port_is_answered_400_at_once() {
    let secure = start_secure(ServerConfig::for_tests()).await;
    let mut tcp = timeout(WAIT, TcpStream::connect(secure.server.local_addr()))
        .await
        .expect("connect in time")
        .expect("connect");
    tcp.write_all(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .expect("write");
    let mut received = Vec::new();
    timeout(WAIT, tcp.read_to_end(&mut received))
        .await
        .expect("answered and closed in time")
        .expect("read");
    let text = String::from_utf8_lossy(&received);
    assert!(text.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{text}");
    let body: Value = serde_json::from_str(
        text.split_once("\r\n\r\n")
            .map(|(_, body)| body)
            .unwrap_or(""),
    )
    .expect("a JSON body");
    assert_eq!(body["kind"], "Status", "{body}");
    assert_eq!(body["reason"], "BadRequest", "{body}");
    assert_eq!(
        body["message"], "Client sent an HTTP request to an HTTPS server.",
        "{body}"
    );
    secure.server.shutdown().await;
}

#[tokio::test]
async fn a_client_that_never_sends_its_client_hello_gets_the_header_timeout() {
    let header_timeout = Duration::from_millis(300);
    let secure = start_secure(
        ServerConfig::for_tests()
            .read_header_timeout(header_timeout)
            .idle_timeout(Duration::from_secs(60)),
    )
    .await;
    let mut tcp = timeout(WAIT, TcpStream::connect(secure.server.local_addr()))
        .await
        .expect("connect in time")
        .expect("connect");
    let opened = Instant::now();
    let mut received = Vec::new();
    // Closed (end of file or a reset) without a byte of answer.
    let read = timeout(WAIT, tcp.read_to_end(&mut received))
        .await
        .expect("closed in time");
    let waited = opened.elapsed();
    assert!(received.is_empty(), "{read:?} {received:?}");
    assert!(waited >= header_timeout, "closed after {waited:?}");
    // The idle timeout (60 s) would be far later than the WAIT bound.
    secure.server.shutdown().await;
}
