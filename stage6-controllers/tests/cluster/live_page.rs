//! The controller manager's live page (`/debug/ui`, stage 4's `InformerPage`
//! over the manager's informer factory), read as the page reads it: its HTML,
//! then the server-sent event stream, whose views name every informer the
//! controllers asked for and follow them until each has synced and watches.
//! The page in a browser is tested in stage 5's tests; here the stream. Every
//! read is bounded.

use serde_json::Value;
use stage6_controllers::app::options::{
    DEPLOYMENT_CONTROLLER, REPLICASET_CONTROLLER,
};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

use crate::common::{Cluster, WAIT};

async fn get(addr: std::net::SocketAddr, path: &str) -> TcpStream {
    let mut stream = timeout(WAIT, TcpStream::connect(addr))
        .await
        .expect("connect in time")
        .expect("connect");
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("send");
    stream
}

/// The informers of a view, by name: (phase, synced).
fn informers(view: &Value) -> Vec<(String, String, bool)> {
    view["informers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| {
            (
                i["name"].as_str().unwrap_or("").to_string(),
                i["phase"].as_str().unwrap_or("").to_string(),
                i["hasSynced"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_managers_page_follows_its_informers_until_they_watch() {
    let cluster =
        Cluster::start(&[REPLICASET_CONTROLLER, DEPLOYMENT_CONTROLLER]).await;
    let stop = CancellationToken::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let router = cluster.manager.page_router(stop.clone());
    let serve = axum::serve(listener, router)
        .with_graceful_shutdown(stop.clone().cancelled_owned());
    let serving = tokio::spawn(async move { serve.await });

    let mut page = String::new();
    let mut html = get(addr, "/debug/ui").await;
    timeout(WAIT, html.read_to_string(&mut page))
        .await
        .expect("page in time")
        .expect("page");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("text/html") && page.contains("function livePage"));

    let stream = get(addr, "/debug/ui/events").await;
    let mut lines = BufReader::new(stream).lines();
    let all_watching = timeout(WAIT, async {
        loop {
            let line = lines.next_line().await.expect("read").expect("open stream");
            let Some(data) = line.strip_prefix("data: ") else {
                continue;
            };
            let view: Value = serde_json::from_str(data).expect("a JSON view");
            let informers = informers(&view);
            if informers
                .iter()
                .all(|(_, phase, synced)| phase == "watching" && *synced)
            {
                return informers;
            }
        }
    })
    .await
    .expect("every informer synced and watching in time");
    let names: Vec<&str> = all_watching.iter().map(|(n, _, _)| n.as_str()).collect();
    for kind in ["Deployment", "Pod", "ReplicaSet"] {
        assert!(names.contains(&kind), "{kind} in {names:?}");
    }

    stop.cancel();
    timeout(WAIT, serving)
        .await
        .expect("the page server stops")
        .expect("task")
        .expect("serve");
    cluster.stop().await;
}
