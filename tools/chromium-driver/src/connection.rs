//! The one websocket to Chromium: commands go out through a shared writer, and a
//! reader task routes each answer to the command waiting for it and each event to
//! its subscribers.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex as StdMutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{
    MaybeTlsStream, WebSocketStream, connect_async_with_config,
};

use crate::{Error, lock};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long a command may wait for its answer (and a page for its load).
pub(crate) const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest message or frame accepted: a big screenshot is many MiB of base64.
const MAX_MESSAGE: usize = 256 << 20;

/// An event Chromium sent: its method, the session it belongs to, its params.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    /// The event's name, e.g. `Page.loadEventFired`.
    pub(crate) method: String,
    /// The session (tab) it came from; none for the browser's own events.
    pub(crate) session: Option<String>,
    /// Its parameters.
    pub(crate) params: Value,
}

/// Sees every event; returns false once it wants no more.
pub(crate) type Subscriber = Box<dyn FnMut(&Event) -> bool + Send>;

/// A command's answer: its result, or the error message Chromium gave.
type Answer = Result<Value, String>;

/// Who waits for what; `closed` once the reader has stopped.
#[derive(Default)]
struct Routes {
    pending: HashMap<u64, oneshot::Sender<Answer>>,
    subscribers: Vec<Subscriber>,
    closed: bool,
}

/// The shared half of the connection: the writer, the ids and the routes.
pub(crate) struct Connection {
    writer: Mutex<SplitSink<Socket, Message>>,
    next_id: AtomicU64,
    routes: StdMutex<Routes>,
}

impl Connection {
    /// Connects to `url` (the browser's `ws://` address) and spawns the reader task.
    pub(crate) async fn connect(
        url: &str,
    ) -> Result<(Arc<Self>, JoinHandle<()>), Error> {
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        let connect = connect_async_with_config(url, Some(config), true);
        let (socket, _) = tokio::time::timeout(COMMAND_TIMEOUT, connect)
            .await
            .map_err(|_| Error::Timeout { method: "connect" })??;
        let (writer, reader) = socket.split();
        let connection = Arc::new(Self {
            writer: Mutex::new(writer),
            next_id: AtomicU64::new(1),
            routes: StdMutex::new(Routes::default()),
        });
        let task = tokio::spawn(read_loop(Arc::clone(&connection), reader));
        Ok((connection, task))
    }

    /// Sends `method` (to `session`, if any) and waits up to 30 s for its result.
    pub(crate) async fn call(
        &self,
        session: Option<&str>,
        method: &'static str,
        params: Value,
    ) -> Result<Value, Error> {
        self.call_within(session, method, params, COMMAND_TIMEOUT)
            .await
    }

    /// Sends `method` and waits up to `limit` for its result.
    pub(crate) async fn call_within(
        &self,
        session: Option<&str>,
        method: &'static str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let answer = self.register(id)?;
        let _forget = Forget {
            connection: self,
            id,
        };
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let exchange = async {
            self.send(message).await?;
            answer.await.map_err(|_| Error::Closed)
        };
        match tokio::time::timeout(limit, exchange).await {
            Err(_) => Err(Error::Timeout { method }),
            Ok(Err(error)) => Err(error),
            Ok(Ok(Err(message))) => Err(Error::Cdp { method, message }),
            Ok(Ok(Ok(result))) => Ok(result),
        }
    }

    /// Adds `subscriber`, which then sees every event until it returns false.
    pub(crate) fn subscribe(&self, subscriber: Subscriber) -> Result<(), Error> {
        let mut routes = lock(&self.routes);
        if routes.closed {
            return Err(Error::Closed);
        }
        routes.subscribers.push(subscriber);
        Ok(())
    }

    /// The events of `session` from now on, until the receiver is dropped.
    pub(crate) fn events(
        &self,
        session: &str,
    ) -> Result<mpsc::UnboundedReceiver<Event>, Error> {
        let (sender, receiver) = mpsc::unbounded_channel();
        let session = session.to_owned();
        self.subscribe(Box::new(move |event| {
            if event.session.as_deref() == Some(session.as_str()) {
                return sender.send(event.clone()).is_ok();
            }
            !sender.is_closed()
        }))?;
        Ok(receiver)
    }

    /// Marks the connection closed: waiting commands and subscribers are let go.
    pub(crate) fn close(&self) {
        let mut routes = lock(&self.routes);
        routes.closed = true;
        routes.pending.clear();
        routes.subscribers.clear();
    }

    /// Makes a place for the answer to command `id`.
    fn register(&self, id: u64) -> Result<oneshot::Receiver<Answer>, Error> {
        let mut routes = lock(&self.routes);
        if routes.closed {
            return Err(Error::Closed);
        }
        let (sender, receiver) = oneshot::channel();
        routes.pending.insert(id, sender);
        Ok(receiver)
    }

    /// Writes one message to the socket.
    async fn send(&self, message: Value) -> Result<(), Error> {
        let text = Message::text(message.to_string());
        self.writer.lock().await.send(text).await?;
        Ok(())
    }

    /// Routes one message from Chromium: an answer to its command, an event to
    /// the subscribers.
    fn dispatch(&self, message: Value) {
        let mut routes = lock(&self.routes);
        if let Some(id) = message.get("id").and_then(Value::as_u64) {
            if let Some(sender) = routes.pending.remove(&id) {
                // The command may have given up waiting; then nobody wants this.
                let _ = sender.send(answer_of(message));
            }
        } else if let Some(event) = event_of(message) {
            routes
                .subscribers
                .retain_mut(|subscriber| subscriber(&event));
        }
    }
}

/// Forgets a command's place when its call ends, answered or not.
struct Forget<'a> {
    connection: &'a Connection,
    id: u64,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        lock(&self.connection.routes).pending.remove(&self.id);
    }
}

/// Reads Chromium's messages until the socket ends, then closes the connection.
async fn read_loop(connection: Arc<Connection>, mut reader: SplitStream<Socket>) {
    while let Some(Ok(message)) = reader.next().await {
        match message {
            Message::Text(text) => {
                if let Ok(value) = serde_json::from_str(text.as_str()) {
                    connection.dispatch(value);
                }
            }
            Message::Close(_) => break,
            _ => {}
        }
    }
    connection.close();
}

/// The result of an answer, or its error's message (and data, if any).
fn answer_of(mut message: Value) -> Answer {
    if let Some(error) = message.get("error") {
        let text = error.get("message").and_then(Value::as_str);
        let text = text.unwrap_or("unknown error").to_owned();
        return Err(match error.get("data").and_then(Value::as_str) {
            Some(data) => format!("{text} ({data})"),
            None => text,
        });
    }
    Ok(message
        .get_mut("result")
        .map(Value::take)
        .unwrap_or(Value::Null))
}

/// The event in a message that has a `method`.
fn event_of(mut message: Value) -> Option<Event> {
    let method = message.get("method")?.as_str()?.to_owned();
    let session = message
        .get("sessionId")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let params = message
        .get_mut("params")
        .map(Value::take)
        .unwrap_or(Value::Null);
    Some(Event {
        method,
        session,
        params,
    })
}
