//! One HTTP/1.1 connection: mirrors Go's `net/http` `conn.serve` (the read
//! deadlines that `http.Server`'s `ReadHeaderTimeout` and `IdleTimeout` set around
//! each request, and the plain answers it writes itself for a request it cannot
//! read), with a Kubernetes `Status` body on those answers.
//!
//! hyper reads and writes through a [`TimedIo`], and axum's router is called
//! through a [`ConnService`]; the two share an [`Exchanges`] counter, so the IO
//! knows whether a request is in flight. Over HTTPS the [`TimedIo`] wraps the
//! decrypted stream, after the handshake (`tls`), so the phases and the `Status`
//! answers are the same:
//!
//! ```text
//! accept ─► Idle ─first byte─► ReadingHeaders ─router called─► Serving
//!            ▲ (idle_timeout)   (read_header_timeout)            │
//!            └───────── response done and flushed ◄──────────────┘
//! Idle, ReadingHeaders ─hyper writes its own 400/414/431─► Rejecting
//! ```
//!
//! The first request is the exception, as in Go's `conn.serve`: its header
//! deadline is set when the connection is accepted, not at its first byte, so a
//! client that connects and sends nothing is closed after the read header
//! timeout (32 s), and the idle timeout (90 s) only ever runs between requests.
//!
//! A watch is `Serving` for as long as it streams, so neither deadline applies to
//! it. hyper's own `header_read_timeout` is not used: it also runs while a
//! keep-alive connection waits for its next request, so it cannot be 32 s while the
//! idle timeout is 90 s.
//!
//! # Recovery
//! A deadline that passes closes the connection without an answer, as Go does: an
//! idle one as at end of file, a slow request line or header as a `TimedOut` read
//! error. When hyper rejects a request before routing it (a malformed request line
//! or header: 400; a request line or headers over `max_header_bytes`: 414 or 431),
//! its empty answer is replaced on the wire by the same code with a `Status` body,
//! and the connection lingers (write side shut, reads discarded for
//! [`LINGER`]) so the client reads the answer instead of a reset.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use apimachinery::runtime::serializer::streaming::encode_status;
use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response, StatusCode};
use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::time::{Instant, Sleep};

use crate::status::ApiError;

/// How long a rejected connection keeps reading (and discarding) what the client
/// still sends after its answer: Go's `rstAvoidanceDelay` (500 ms) in
/// `closeWriteAndWait`. Closing a socket with unread input sends a reset, which can
/// destroy the answer before the client reads it.
pub(super) const LINGER: Duration = Duration::from_millis(500);

/// The deadlines and the header limit of every connection.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    /// From a request's first byte to the end of its headers.
    pub read_header_timeout: Duration,
    /// From the end of a response (or the accept) to the next request's first byte.
    pub idle_timeout: Duration,
    /// The largest request line plus headers.
    pub max_header_bytes: usize,
}

/// How many requests of one connection the router started and finished; shared by
/// its [`TimedIo`] and [`ConnService`] (one task, so relaxed order is enough).
#[derive(Debug, Default)]
pub(super) struct Exchanges {
    started: AtomicU64,
    finished: AtomicU64,
}

/// Where a connection is between requests: the state machine in the module docs.
#[derive(Debug)]
enum Phase {
    /// No request in flight, waiting for a first byte (`idle_timeout`).
    Idle,
    /// A request's first byte came, not yet all its headers
    /// (`read_header_timeout`).
    /// `line_ended`: a `\n` was seen, so the request line itself fitted.
    ReadingHeaders { line_ended: bool },
    /// The router has a request and its response is not yet flushed: no deadline.
    Serving,
    /// hyper answered by itself (a request it could not read); that answer is
    /// swallowed and `answer` (a `Status`) is written instead.
    Rejecting(Rejection),
}

/// hyper's own answer being replaced.
#[derive(Debug)]
struct Rejection {
    /// Whether the request line had ended (431 stays 431, else it becomes 414).
    line_ended: bool,
    /// The start of what hyper wrote (enough for its status line).
    from_hyper: Vec<u8>,
    /// The replacement, once built; `written` bytes of it are out.
    answer: Option<Bytes>,
    written: usize,
}

/// The connection's byte stream, with the deadline of its [`Phase`] on every read
/// and hyper's own answers replaced by `Status` answers.
#[derive(Debug)]
pub(super) struct TimedIo<T> {
    io: T,
    limits: Limits,
    exchanges: Arc<Exchanges>,
    /// `exchanges.started` when last looked at.
    started_seen: u64,
    phase: Phase,
    /// The deadline of `Idle` or `ReadingHeaders`.
    deadline: Pin<Box<Sleep>>,
    /// Whether a `Status` answer was written: the connection should linger.
    rejected: bool,
    /// No byte read yet: the deadline running is the first request's header
    /// deadline, set at the accept.
    first_request: bool,
}

impl<T> TimedIo<T>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    /// A freshly accepted connection: no request yet, the first request's header
    /// deadline running from now (Go sets it before reading the first request).
    pub(super) fn new(io: T, limits: Limits, exchanges: Arc<Exchanges>) -> Self {
        TimedIo {
            io,
            limits,
            exchanges,
            started_seen: 0,
            phase: Phase::Idle,
            deadline: Box::pin(tokio::time::sleep(limits.read_header_timeout)),
            rejected: false,
            first_request: true,
        }
    }

    /// After hyper is done: when a `Status` rejection was written, shut the write
    /// side and discard input for [`LINGER`], so the client reads the answer.
    pub(super) async fn linger_if_rejected(mut self) {
        if !self.rejected {
            return;
        }
        close_write_and_wait(&mut self.io).await;
    }

    /// Steps the phase on what the router did since the last call: a started
    /// request means `Serving`.
    fn sync(&mut self) {
        let started = self.exchanges.started.load(Ordering::Relaxed);
        if started != self.started_seen {
            self.started_seen = started;
            if !matches!(self.phase, Phase::Rejecting(_)) {
                self.phase = Phase::Serving;
            }
        }
    }

    fn restart_deadline(&mut self, after: Duration) {
        self.deadline.as_mut().reset(Instant::now() + after);
    }

    /// Bytes came in while no request was in flight; `newline`: among them.
    fn on_read(&mut self, newline: bool) {
        match &mut self.phase {
            Phase::Idle => {
                self.phase = Phase::ReadingHeaders {
                    line_ended: newline,
                };
                // The first request's deadline has run since the accept.
                if !std::mem::take(&mut self.first_request) {
                    self.restart_deadline(self.limits.read_header_timeout);
                }
            }
            Phase::ReadingHeaders { line_ended } => *line_ended |= newline,
            Phase::Serving | Phase::Rejecting(_) => {}
        }
    }

    /// hyper writes while no request is in flight: its own answer. Returns whether
    /// the bytes were taken here (else they go to the socket).
    fn intercept(&mut self, buf: &[u8]) -> bool {
        let line_ended = match &self.phase {
            Phase::Serving => return false,
            Phase::Idle => false,
            Phase::ReadingHeaders { line_ended } => *line_ended,
            Phase::Rejecting(rejection) => rejection.line_ended,
        };
        if !matches!(self.phase, Phase::Rejecting(_)) {
            self.phase = Phase::Rejecting(Rejection {
                line_ended,
                from_hyper: Vec::new(),
                answer: None,
                written: 0,
            });
        }
        if let Phase::Rejecting(rejection) = &mut self.phase
            && rejection.answer.is_none()
        {
            let room = 64usize.saturating_sub(rejection.from_hyper.len());
            rejection
                .from_hyper
                .extend_from_slice(&buf[..buf.len().min(room)]);
        }
        true
    }

    /// Writes the replacement answer of a rejection, then flushes.
    fn poll_write_rejection(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        let limit = self.limits.max_header_bytes;
        if let Phase::Rejecting(rejection) = &mut self.phase {
            let answer = rejection.answer.get_or_insert_with(|| {
                rejection_answer(&rejection.from_hyper, rejection.line_ended, limit)
            });
            while rejection.written < answer.len() {
                let n = ready!(
                    Pin::new(&mut self.io)
                        .poll_write(cx, &answer[rejection.written..])
                )?;
                if n == 0 {
                    return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                }
                rejection.written += n;
            }
            self.rejected = true;
        }
        Pin::new(&mut self.io).poll_flush(cx)
    }
}

/// The `Status` answer for hyper's own answer `from_hyper` (its status line), or
/// hyper's bytes unchanged when they are not a status line this knows.
fn rejection_answer(from_hyper: &[u8], line_ended: bool, limit: usize) -> Bytes {
    let code = from_hyper
        .strip_prefix(b"HTTP/1.1 ")
        .or_else(|| from_hyper.strip_prefix(b"HTTP/1.0 "))
        .and_then(|rest| rest.get(..3))
        .and_then(|code| std::str::from_utf8(code).ok())
        .and_then(|code| code.parse::<u16>().ok());
    let error = match code {
        Some(431) if line_ended => ApiError::request_header_fields_too_large(limit),
        Some(414 | 431) => ApiError::request_uri_too_long(limit),
        Some(400) => ApiError::bad_request(
            "the request line or a header could not be parsed as HTTP/1.1",
        ),
        _ => return Bytes::copy_from_slice(from_hyper),
    };
    status_answer(&error)
}

/// Mirrors Go's `closeWriteAndWait`: shuts the write side, then reads and discards
/// what the client still sends for [`LINGER`], so it reads the answer before the
/// close.
pub(super) async fn close_write_and_wait<T>(io: &mut T)
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    // Errors here only mean the client is gone already.
    let _ = io.shutdown().await;
    let mut sink = [0u8; 4096];
    let _ = tokio::time::timeout(LINGER, async {
        while let Ok(1..) = io.read(&mut sink).await {}
    })
    .await;
}

/// A whole HTTP/1.1 answer carrying `error`'s `Status`, closing the connection.
pub(super) fn status_answer(error: &ApiError) -> Bytes {
    let code = StatusCode::from_u16(error.code()).unwrap_or(StatusCode::BAD_REQUEST);
    let body = encode_status(&error.status);
    let mut answer = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        code.as_u16(),
        code.canonical_reason().unwrap_or(""),
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(&body);
    Bytes::from(answer)
}

impl<T> AsyncRead for TimedIo<T>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.sync();
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let read = &buf.filled()[before..];
                if !read.is_empty()
                    && matches!(
                        this.phase,
                        Phase::Idle | Phase::ReadingHeaders { .. }
                    )
                {
                    let newline = read.contains(&b'\n');
                    this.on_read(newline);
                }
                return Poll::Ready(Ok(()));
            }
            Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
            Poll::Pending => {}
        }
        match this.phase {
            Phase::Idle => {
                ready!(this.deadline.as_mut().poll(cx));
                tracing::debug!("closing an idle connection");
                // As end of file: hyper closes the connection quietly.
                Poll::Ready(Ok(()))
            }
            Phase::ReadingHeaders { .. } => {
                ready!(this.deadline.as_mut().poll(cx));
                tracing::debug!("closing a connection slow to send its headers");
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "request headers not read within the read header timeout",
                )))
            }
            Phase::Serving | Phase::Rejecting(_) => Poll::Pending,
        }
    }
}

impl<T> AsyncWrite for TimedIo<T>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.sync();
        if this.intercept(buf) {
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut this.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.sync();
        if matches!(this.phase, Phase::Serving) {
            return Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        }
        let mut taken = 0;
        for buf in bufs {
            this.intercept(buf);
            taken += buf.len();
        }
        Poll::Ready(Ok(taken))
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.sync();
        if matches!(this.phase, Phase::Rejecting(_)) {
            return this.poll_write_rejection(cx);
        }
        ready!(Pin::new(&mut this.io).poll_flush(cx))?;
        // Everything hyper wrote is out: when the router's last response is done,
        // the connection is idle from now on.
        if matches!(this.phase, Phase::Serving)
            && this.exchanges.finished.load(Ordering::Relaxed) == this.started_seen
        {
            this.phase = Phase::Idle;
            this.restart_deadline(this.limits.idle_timeout);
            // hyper may not read again before the client sends (its last read was
            // while serving), so the deadline must wake this task by itself.
            if this.deadline.as_mut().poll(cx).is_ready() {
                cx.waker().wake_by_ref();
            }
        }
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if matches!(this.phase, Phase::Rejecting(_)) {
            ready!(this.poll_write_rejection(cx))?;
        }
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

/// axum's router as hyper's service, counting requests in [`Exchanges`]: a request
/// is finished when its response body is (dropped after its last frame).
#[derive(Clone, Debug)]
pub(super) struct ConnService {
    router: TowerToHyperService<Router>,
    exchanges: Arc<Exchanges>,
}

impl ConnService {
    pub(super) fn new(router: Router, exchanges: Arc<Exchanges>) -> Self {
        ConnService {
            router: TowerToHyperService::new(router),
            exchanges,
        }
    }
}

/// Counts a request finished when dropped.
#[derive(Debug)]
struct Finished(Arc<Exchanges>);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0.finished.fetch_add(1, Ordering::Relaxed);
    }
}

/// A response body that marks its request finished when dropped.
#[derive(Debug)]
pub(super) struct TrackedBody {
    body: Body,
    _finished: Finished,
}

impl hyper::body::Body for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

type ResponseFuture =
    Pin<Box<dyn Future<Output = Result<Response<TrackedBody>, Infallible>> + Send>>;

impl hyper::service::Service<Request<Incoming>> for ConnService {
    type Response = Response<TrackedBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        self.exchanges.started.fetch_add(1, Ordering::Relaxed);
        // Dropped with the response body, or with this future if hyper drops it.
        let finished = Finished(Arc::clone(&self.exchanges));
        let response = self.router.call(request);
        Box::pin(async move {
            let response = response.await?;
            Ok(response.map(|body| TrackedBody {
                body,
                _finished: finished,
            }))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use tokio::io::DuplexStream;
    use tokio_util::sync::CancellationToken;

    const LIMITS: Limits = Limits {
        read_header_timeout: Duration::from_secs(32),
        idle_timeout: Duration::from_secs(90),
        max_header_bytes: 8192,
    };

    /// One connection served over an in-memory pipe; the client's end.
    fn serve_one() -> DuplexStream {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let router = Router::new().route("/", get(|| async { "ok" }));
        tokio::spawn(super::super::serve_connection(
            server,
            router,
            LIMITS,
            None,
            CancellationToken::new(),
            None,
        ));
        client
    }

    /// Reads until end of file; returns what came and when it ended. Bounded: a
    /// connection never closed fails after an hour of (paused) time.
    async fn read_to_end(client: &mut DuplexStream) -> (Vec<u8>, Instant) {
        let mut received = Vec::new();
        let read = client.read_to_end(&mut received);
        let _ = tokio::time::timeout(Duration::from_secs(3600), read)
            .await
            .expect("the server closes the connection");
        (received, Instant::now())
    }

    /// Sends one whole request and reads its whole answer (the body is `ok`).
    async fn one_exchange(client: &mut DuplexStream) {
        client
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(3600), async {
            while !answer.ends_with(b"\r\n\r\nok") {
                let mut byte = [0u8; 1];
                client.read_exact(&mut byte).await.unwrap();
                answer.push(byte[0]);
            }
        })
        .await
        .expect("an answer");
        assert!(answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_silent_connection_is_closed_after_the_read_header_timeout() {
        let opened = Instant::now();
        let mut client = serve_one();
        let (received, closed) = read_to_end(&mut client).await;
        assert!(received.is_empty());
        assert_eq!(closed - opened, LIMITS.read_header_timeout);
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_request_header_deadline_runs_from_the_accept() {
        let opened = Instant::now();
        let mut client = serve_one();
        // Half a request after 20 s: the deadline is still the accept's.
        tokio::time::sleep(Duration::from_secs(20)).await;
        client.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
        let (received, closed) = read_to_end(&mut client).await;
        assert!(received.is_empty());
        assert_eq!(closed - opened, LIMITS.read_header_timeout);
    }

    #[tokio::test(start_paused = true)]
    async fn later_headers_get_the_read_header_timeout_from_their_first_byte() {
        let mut client = serve_one();
        one_exchange(&mut client).await;
        // Idle for most of the idle timeout, then half a request.
        tokio::time::sleep(Duration::from_secs(60)).await;
        client
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        let started = Instant::now();
        let (received, closed) = read_to_end(&mut client).await;
        assert!(received.is_empty());
        assert_eq!(closed - started, LIMITS.read_header_timeout);
    }

    #[tokio::test(start_paused = true)]
    async fn after_a_response_the_idle_timeout_starts_again() {
        let mut client = serve_one();
        one_exchange(&mut client).await;
        let answered = Instant::now();
        let (_, closed) = read_to_end(&mut client).await;
        assert_eq!(closed - answered, LIMITS.idle_timeout);
    }

    #[test]
    fn hyper_answers_are_replaced_by_status_answers() {
        let answer = rejection_answer(b"HTTP/1.1 431 Request Header", false, 8192);
        assert!(answer.starts_with(b"HTTP/1.1 414 URI Too Long\r\n"));
        let answer = rejection_answer(b"HTTP/1.1 431 Request Header", true, 8192);
        assert!(
            answer.starts_with(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
        );
        let text = String::from_utf8_lossy(&answer);
        assert!(text.contains("\"kind\":\"Status\""), "{text}");
        // Something unknown passes unchanged.
        assert_eq!(
            &rejection_answer(b"HTTP/1.1 501 X", true, 1)[..],
            b"HTTP/1.1 501 X"
        );
    }
}
