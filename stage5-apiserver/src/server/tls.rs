//! The TLS handshake of one connection: mirrors the TLS part of Go's `net/http`
//! `conn.serve`, which apiserver's `secure_serving.go` relies on:
//!
//! - the handshake has `tlsHandshakeTimeout()` as its read and write deadline: the
//!   smallest of `ReadHeaderTimeout`, `ReadTimeout` and `WriteTimeout`, so here
//!   the read header timeout (32 s by default). A client that opens TCP and never
//!   sends its ClientHello is closed then, without an answer;
//! - a client that speaks plain HTTP to the TLS port (Go's
//!   `tlsRecordHeaderLooksLikeHTTP`: the first five bytes are `GET /`, `HEAD `,
//!   `POST `, `PUT /` or `OPTIO`) is answered `400` "Client sent an HTTP request to
//!   an HTTPS server." on the raw connection, here with a `Status` body, as every
//!   answer of this server before routing;
//! - any other failed handshake closes the connection (Go logs
//!   `http: TLS handshake error`; here at debug level).
//!
//! The five bytes are read here first (hence [`Rewind`], which hands them to rustls
//! after all): rustls would answer them with a TLS alert, not HTTP.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_util::sync::CancellationToken;

use super::conn;
use crate::status::ApiError;

/// Go's text for plain HTTP on a TLS port (`net/http/server.go`).
pub(super) const PLAIN_HTTP_MESSAGE: &str =
    "Client sent an HTTP request to an HTTPS server.";

/// How a handshake ended.
enum Handshake<T> {
    Done(Box<TlsStream<Rewind<T>>>),
    PlainHttp(T),
    Failed(io::Error),
}

/// Runs the server side of the handshake within `timeout`; `None` when the
/// connection is done (closed, answered, timed out, or the server shuts down).
pub(super) async fn handshake<T>(
    mut io: T,
    acceptor: &TlsAcceptor,
    timeout: Duration,
    shutdown: &CancellationToken,
) -> Option<TlsStream<Rewind<T>>>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    let attempt = async {
        let mut head = [0u8; 5];
        if let Err(error) = io.read_exact(&mut head).await {
            return Handshake::Failed(error);
        }
        if looks_like_http(&head) {
            return Handshake::PlainHttp(io);
        }
        match acceptor.accept(Rewind::new(head, io)).await {
            Ok(tls) => Handshake::Done(Box::new(tls)),
            Err(error) => Handshake::Failed(error),
        }
    };
    let outcome = tokio::select! {
        outcome = tokio::time::timeout(timeout, attempt) => outcome,
        () = shutdown.cancelled() => return None,
    };
    match outcome {
        Ok(Handshake::Done(tls)) => Some(*tls),
        Ok(Handshake::PlainHttp(mut io)) => {
            tracing::debug!("plain HTTP on the TLS port");
            let answer =
                conn::status_answer(&ApiError::bad_request(PLAIN_HTTP_MESSAGE));
            let written = tokio::time::timeout(timeout, io.write_all(&answer)).await;
            if matches!(written, Ok(Ok(()))) {
                conn::close_write_and_wait(&mut io).await;
            }
            None
        }
        Ok(Handshake::Failed(error)) => {
            tracing::debug!(%error, "TLS handshake error");
            None
        }
        Err(_) => {
            tracing::debug!("closing a connection slow to finish its TLS handshake");
            None
        }
    }
}

/// Mirrors Go's `tlsRecordHeaderLooksLikeHTTP`.
fn looks_like_http(head: &[u8; 5]) -> bool {
    matches!(head, b"GET /" | b"HEAD " | b"POST " | b"PUT /" | b"OPTIO")
}

/// A stream whose first bytes were already read: they are read again first.
#[derive(Debug)]
pub(super) struct Rewind<T> {
    head: [u8; 5],
    consumed: usize,
    io: T,
}

impl<T> Rewind<T> {
    fn new(head: [u8; 5], io: T) -> Self {
        Rewind {
            head,
            consumed: 0,
            io,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Rewind<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let rest = &this.head[this.consumed..];
        if !rest.is_empty() {
            let n = rest.len().min(buf.remaining());
            buf.put_slice(&rest[..n]);
            this.consumed += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Rewind<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secure_serving::{loopback_self_signed, tls_acceptor};
    use tokio::time::Instant;

    #[test]
    fn http_methods_look_like_http_and_a_client_hello_does_not() {
        assert!(looks_like_http(b"GET /"));
        assert!(looks_like_http(b"OPTIO"));
        // A TLS handshake record: content type 22, version 3.1.
        assert!(!looks_like_http(&[22, 3, 1, 0, 200]));
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_client_is_closed_after_the_timeout() {
        let acceptor = tls_acceptor(&loopback_self_signed().expect("cert").serving)
            .expect("tls");
        let (_client, server) = tokio::io::duplex(1024);
        let started = Instant::now();
        let timeout = Duration::from_secs(32);
        let tls =
            handshake(server, &acceptor, timeout, &CancellationToken::new()).await;
        assert!(tls.is_none());
        assert_eq!(started.elapsed(), timeout);
    }

    #[tokio::test]
    async fn rewind_replays_its_head_first() {
        let (mut client, server) = tokio::io::duplex(64);
        client.write_all(b" tail").await.expect("write");
        drop(client);
        let mut rewound = Rewind::new(*b"head:", server);
        let mut all = String::new();
        rewound.read_to_string(&mut all).await.expect("read");
        assert_eq!(all, "head: tail");
    }
}
