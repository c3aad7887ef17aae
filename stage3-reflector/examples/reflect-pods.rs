//! Runs a Reflector for Pods into a DeltaFIFO over kube-client, and prints every
//! delta it pops.
//!
//! ```text
//! cargo run -p stage3-reflector --example reflect-pods -- [--server URL] [--namespace NS]
//! ```
//!
//! Without `--server` it uses your kubeconfig (or the in-cluster configuration), as
//! `kubectl` does. With `--server http://127.0.0.1:8080` it talks plain HTTP to that address, for example to
//! stage 5's server or a `kubectl proxy`. Stop it with Ctrl-C. It logs only warnings
//! and errors; `RUST_LOG=info` adds the reflector's start and stop, and
//! `RUST_LOG=debug` its decisions (relists, backoffs, bookmarks).
//!
//! This is client-go's controller loop without the informer: the reflector lists and
//! watches into the queue (stage 2), and this program pops from it into a store of
//! its own, which the queue knows as its known objects, as an informer's indexer is
//! (stage 4 pops into an indexer and calls handlers instead). Without known objects
//! the queue would drop the deletion of a pod that is no longer queued.

use std::error::Error;
use std::sync::Arc;
use workspace_allocator as _;

use k8s_openapi::api::core::v1::Pod;
use kube::{Api, Config};
use stage1_store::{Cache, Store, StoreError, meta_namespace_key_func, new_store};
use stage2_deltafifo::{
    DeletedFinalStateUnknown, DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType,
    Deltas, PopError,
};
use stage3_reflector::{KubeListerWatcher, Reflector, ReflectorOptions};
use tokio_util::sync::CancellationToken;

const USAGE: &str = "\
usage: reflect-pods [--server URL] [--namespace NS]

  --server URL      talk plain HTTP to this API server (default: kubeconfig or in-cluster)
  --namespace NS    only pods in this namespace (default: all namespaces)";

/// The command line.
struct Args {
    server: Option<String>,
    namespace: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        server: None,
        namespace: None,
    };
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        match word.as_str() {
            "--server" => {
                args.server = Some(words.next().ok_or("--server needs a URL")?)
            }
            "--namespace" | "-n" => {
                args.namespace =
                    Some(words.next().ok_or("--namespace needs a name")?);
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    Ok(args)
}

/// One line per delta: `Added default/web-0 (rv 1234)`.
fn describe(deltas: &Deltas<Pod>) -> Vec<String> {
    deltas
        .0
        .iter()
        .map(|delta| {
            let what = match &delta.object {
                DeltaObject::Object(pod) => format!(
                    "{}/{} (rv {})",
                    pod.metadata.namespace.as_deref().unwrap_or(""),
                    pod.metadata.name.as_deref().unwrap_or("<no name>"),
                    pod.metadata.resource_version.as_deref().unwrap_or("?")
                ),
                DeltaObject::Tombstone(tombstone) => {
                    format!("{} (deleted while not watching)", tombstone.key)
                }
                other => format!("{other:?}"),
            };
            format!("{:?} {what}", delta.delta_type)
        })
        .collect()
}

/// Applies popped deltas to `store`, as an informer applies them to its indexer: the
/// newest state of each pod, or its removal.
fn apply(store: &Cache<Pod>, deltas: &Deltas<Pod>) -> Result<(), StoreError> {
    for delta in &deltas.0 {
        match (&delta.delta_type, &delta.object) {
            (DeltaType::Deleted, DeltaObject::Object(pod))
            | (
                DeltaType::Deleted,
                DeltaObject::Tombstone(DeletedFinalStateUnknown {
                    obj: Some(pod),
                    ..
                }),
            ) => store.delete(Arc::clone(pod))?,
            (_, DeltaObject::Object(pod)) => store.update(Arc::clone(pod))?,
            _ => {}
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("reflect-pods: {message}\n");
            }
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };

    let config = match &args.server {
        Some(url) => Config::new(url.parse()?),
        None => Config::infer().await?,
    };
    let client = KubeListerWatcher::<Pod>::client(config)?;
    let api: Api<Pod> = match &args.namespace {
        Some(namespace) => Api::namespaced(client, namespace),
        None => Api::all(client),
    };

    // The pods popped so far, kept up to date by `apply`: the queue's known objects.
    let known = Arc::new(new_store::<Pod>(Arc::new(meta_namespace_key_func::<Pod>)));
    let fifo = Arc::new(DeltaFifo::new(
        DeltaFifoOptions::new(Arc::new(meta_namespace_key_func::<Pod>))
            .known_objects(known.clone()),
    ));
    let reflector = Arc::new(Reflector::new(
        KubeListerWatcher::new(api),
        Arc::clone(&fifo),
        ReflectorOptions::default().name("reflect-pods"),
    ));

    // The reflector runs until shutdown; Ctrl-C triggers it and closes the queue,
    // which ends the pop loop below.
    let shutdown = CancellationToken::new();
    let running = tokio::spawn({
        let reflector = Arc::clone(&reflector);
        let shutdown = shutdown.clone();
        async move { reflector.run(shutdown).await }
    });
    let interrupt = tokio::spawn({
        let shutdown = shutdown.clone();
        let fifo = Arc::clone(&fifo);
        async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = shutdown.cancelled() => {}
            }
            shutdown.cancel();
            fifo.close();
        }
    });

    let mut initial = 0usize;
    let mut announced = false;
    loop {
        let popped = fifo
            .pop(|deltas, is_in_initial_list| {
                for line in describe(&deltas) {
                    println!("{line}");
                }
                apply(&known, &deltas).map(|()| is_in_initial_list)
            })
            .await;
        match popped {
            Ok(true) => initial += 1,
            Ok(false) => {}
            Err(PopError::Closed) => break,
            Err(PopError::Process(error)) => eprintln!("reflect-pods: {error}"),
        }
        if !announced && fifo.has_synced() {
            announced = true;
            println!(
                "synced: {initial} pods from the initial list (resource version {})",
                reflector.last_sync_resource_version()
            );
        }
    }

    shutdown.cancel();
    running.await?;
    interrupt.await?;
    println!("stopped");
    Ok(())
}
