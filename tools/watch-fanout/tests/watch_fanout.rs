//! A bounded smoke run of the watch load tool (the `watch_fanout` library, the
//! `watch-fanout` binary's logic) against an in-process server on loopback: every
//! event reaches every watcher that selects it, and no watch breaks. With the watch
//! cache and without it, and with the `spec.nodeName` selector; and over HTTPS
//! (a `--secure`-style self-signed certificate) with its CA file or `--insecure`.

use std::time::Duration;

use stage5_apiserver::{Server, ServerConfig};
use watch_fanout as fanout;
use watch_fanout::{FanoutConfig, FanoutReport};

async fn smoke(
    server_config: ServerConfig,
    fanout_config: impl Fn(String) -> FanoutConfig,
) -> FanoutReport {
    let server = Server::start(server_config).await.expect("server starts");
    let mut config = fanout_config(server.url());
    config.open_timeout = Duration::from_secs(20);
    config.drain_timeout = Duration::from_secs(10);
    let report = tokio::time::timeout(Duration::from_secs(60), fanout::run(&config))
        .await
        .expect("the run ends in time")
        .expect("the run can be made");
    tokio::time::timeout(Duration::from_secs(10), server.shutdown())
        .await
        .expect("the server stops");
    report
}

fn assert_complete(report: &FanoutReport, expected: u64) {
    assert_eq!(report.writes_acked, 40, "{}", report.table());
    assert_eq!(report.events_expected, expected, "{}", report.table());
    assert_eq!(report.events_delivered, expected, "{}", report.table());
    assert_eq!(report.watches_established, 20, "{}", report.table());
    assert_eq!(report.watches_broken, 0, "{}", report.table());
    assert_eq!(report.errors, 0, "{}", report.table());
    assert!(report.complete(), "{}", report.table());
    assert!(report.latency.max_ms >= report.latency.p99_ms);
    assert!(report.latency.p99_ms >= report.latency.p50_ms);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_watchers_see_every_write_through_the_watch_cache() {
    let report = smoke(ServerConfig::for_tests(), |url| {
        FanoutConfig::new(url)
            .watchers(20)
            .writes(20, Duration::from_secs(2))
    })
    .await;
    // 40 writes, each seen by all 20 watchers.
    assert_complete(&report, 40 * 20);
    let json = serde_json::to_value(&report).expect("json");
    assert_eq!(json["events_delivered"], 800);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_selected_watchers_see_only_their_node_without_the_cache() {
    let report = smoke(ServerConfig::for_tests().watch_cache(false), |url| {
        FanoutConfig::new(url)
            .watchers(20)
            .node_selector(4)
            .writes(20, Duration::from_secs(2))
    })
    .await;
    // 40 writes over 20 pods; each pod's node is selected by 20 / 4 = 5 watchers.
    assert_complete(&report, 40 * 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_https_with_the_ca_file_or_insecure() {
    let generated = stage5_apiserver::secure_serving::loopback_self_signed()
        .expect("a certificate");
    let dir = tempfile::tempdir().expect("tempdir");
    let ca_file = dir.path().join("ca.crt");
    std::fs::write(&ca_file, &generated.ca_pem).expect("write the CA");
    let tls = ServerConfig::for_tests().tls(generated.serving);
    let report = smoke(tls.clone(), |url| {
        assert!(url.starts_with("https://"), "{url}");
        let mut config = FanoutConfig::new(url)
            .watchers(20)
            .writes(20, Duration::from_secs(2));
        config.certificate_authority = Some(ca_file.clone());
        config
    })
    .await;
    assert_complete(&report, 40 * 20);
    let report = smoke(tls, |url| {
        let mut config = FanoutConfig::new(url)
            .watchers(20)
            .writes(20, Duration::from_secs(2));
        config.insecure = true;
        config
    })
    .await;
    assert_complete(&report, 40 * 20);
}

#[tokio::test]
async fn an_untrusted_certificate_is_refused() {
    let generated = stage5_apiserver::secure_serving::loopback_self_signed()
        .expect("a certificate");
    let server = Server::start(ServerConfig::for_tests().tls(generated.serving))
        .await
        .expect("server starts");
    let mut config = FanoutConfig::new(server.url()).watchers(1);
    config.open_timeout = Duration::from_secs(5);
    let outcome =
        tokio::time::timeout(Duration::from_secs(30), fanout::run(&config))
            .await
            .expect("the run ends in time");
    // No CA file and not insecure: the system roots do not know this CA.
    match outcome {
        Err(_) => {}
        Ok(report) => assert!(!report.complete(), "{}", report.table()),
    }
    server.shutdown().await;
}

#[tokio::test]
async fn refuses_a_remote_server_before_connecting() {
    let error = fanout::run(&FanoutConfig::new("http://192.0.2.1:8080"))
        .await
        .expect_err("refused");
    assert!(error.to_string().contains("--allow-remote"), "{error}");
}
