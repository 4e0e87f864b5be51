//! Our connection to one Redis server: every reply must arrive whole within
//! the read timeout and within `redislock.max_reply_size` bytes.
//!
//! The `redis` crate's sync `Connection` reads replies straight off its
//! socket: its read timeout restarts with every byte, and nothing limits a
//! reply's size, so a broken or hostile server can hold a call forever by
//! drip-feeding bytes, or stream gigabytes until the process dies. Here the
//! socket is ours: a reply is read into an [`Inbox`] against one deadline
//! and the size bound, and past either the call fails and the connection is
//! done (the stream is out of step). Where a reply ends, and what it says,
//! `resp.rs` finds (a peer that is not Redis, an HTTP proxy or a TLS port
//! spoken to in plain text, is quoted by its first line); the crate still
//! packs commands and runs the cluster logic (`ClusterConnection<Wire>`).
//!
//! The handshake is AUTH, SELECT and nothing else, in RESP2: what every
//! engine script here was written against.

use std::cell::{Cell, RefCell};
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::cluster::Connect;
use redis::{
    ConnectionAddr, ConnectionInfo, ConnectionLike, ErrorKind, IntoConnectionInfo, RedisError,
    RedisResult, TlsCertificates, Value,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

use crate::{resp, signals};

/// What a connection needs beyond its `ConnectionInfo`: the certificates
/// (the crate keeps its own in a private field) and the reply bound.
#[derive(Clone)]
pub struct Limits {
    pub tls: Option<Arc<TlsCertificates>>,
    pub max_reply: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            tls: None,
            max_reply: crate::config::DEFAULT_MAX_REPLY,
        }
    }
}

thread_local! {
    /// The limits of the cluster whose call runs on this thread: the
    /// cluster client opens node connections through [`Connect::connect`],
    /// which gets nothing but the node's address.
    static CLUSTER: RefCell<Limits> = RefCell::new(Limits::default());
}

/// The limits of cluster node connections opened on this thread while it
/// lives; the previous ones come back when it drops.
pub struct ClusterScope(Limits);

impl ClusterScope {
    pub fn enter(limits: Limits) -> ClusterScope {
        ClusterScope(CLUSTER.with(|c| std::mem::replace(&mut *c.borrow_mut(), limits)))
    }
}

impl Drop for ClusterScope {
    fn drop(&mut self) {
        let previous = std::mem::take(&mut self.0);
        CLUSTER.with(|c| *c.borrow_mut() = previous);
    }
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Stream {
    fn set_read_timeout(&self, read: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(read),
            Stream::Unix(s) => s.set_read_timeout(read),
            Stream::Tls(s) => s.sock.set_read_timeout(read),
        }
    }

    fn set_write_timeout(&self, write: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(write),
            Stream::Unix(s) => s.set_write_timeout(write),
            Stream::Tls(s) => s.sock.set_write_timeout(write),
        }
    }

    /// An I/O error in words. A socket timeout reads as EAGAIN: `late` says
    /// what did not come in time. Over TLS before the handshake is done, a
    /// timeout or an answer that is not TLS (rustls' word for a plaintext
    /// `-ERR`) most likely means a server that does not speak TLS.
    fn named(&self, err: io::Error, late: &str) -> io::Error {
        let timeout = matches!(
            err.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        );
        if matches!(self, Stream::Tls(s) if s.conn.is_handshaking()) {
            let not_tls = err
                .get_ref()
                .and_then(|e| e.downcast_ref::<rustls::Error>())
                .is_some_and(|e| {
                    matches!(
                        e,
                        rustls::Error::InvalidMessage(_)
                            | rustls::Error::InappropriateMessage { .. }
                            | rustls::Error::InappropriateHandshakeMessage { .. }
                    )
                });
            let what = if timeout {
                "no TLS handshake within the timeout".to_owned()
            } else if not_tls {
                format!("an answer that is not TLS ({err})")
            } else {
                return err;
            };
            return io::Error::new(
                err.kind(),
                format!("{what}: is the server at this address speaking TLS?"),
            );
        }
        if timeout {
            io::Error::new(io::ErrorKind::TimedOut, late)
        } else {
            err
        }
    }

    fn fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(s) => s.sock.as_raw_fd(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// Bytes read off the socket that no reply has taken yet: the rest of the
/// reply being read, and what the server sent after it (the next replies
/// of a pipeline). `buf[start..end]` holds them; `buf` is zero-filled once,
/// when it grows.
#[derive(Default)]
struct Inbox {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// What the inbox starts with, and goes back to after a larger reply.
const INBOX: usize = 16 * 1024;

impl Inbox {
    fn held(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Gives up the first `n` held bytes (a reply that was read).
    fn take(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            // A large reply's room is not kept for a process's lifetime.
            if self.buf.len() > 4 * INBOX {
                *self = Inbox::default();
            }
            self.start = 0;
            self.end = 0;
        }
    }

    /// Room for at least one more byte after what is held.
    fn room(&mut self) -> &mut [u8] {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else {
                let len = (self.buf.len() * 2).max(INBOX);
                self.buf.resize(len, 0);
            }
        }
        &mut self.buf[self.end..]
    }
}

const READ_LATE: &str = "no whole reply within the read timeout";
const WRITE_LATE: &str = "no whole request written within the write timeout";

fn timed_out() -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, READ_LATE)
}

/// How long a blocking command's reply may be late before the server is
/// nudged (see [`Wire::blocking`]), and how many nudges it gets, each twice
/// as late as the one before (1, 2, 4 ... 64 ms: past a default cron tick).
const NUDGE: Duration = Duration::from_millis(1);
const NUDGES: u32 = 7;
const PING: &[u8] = b"*1\r\n$4\r\nPING\r\n";

/// A connection to one server. See the module comment.
pub struct Wire {
    stream: Stream,
    inbox: Inbox,
    db: i64,
    open: bool,
    read_timeout: Cell<Option<Duration>>,
    write_timeout: Cell<Option<Duration>>,
    max_reply: u64,
    /// Whether the scripts run as functions on this server (see
    /// `Conn::functions`): set by the connection's handshake, None when
    /// that got no answer (the first script call asks again).
    pub functions: Option<bool>,
}

impl Wire {
    /// Connects and authenticates, all within `timeout`.
    pub fn open(info: &ConnectionInfo, limits: &Limits, timeout: Duration) -> RedisResult<Wire> {
        let start = Instant::now();
        let stream = match info.addr() {
            ConnectionAddr::Tcp(host, port) => Stream::Tcp(tcp(host, *port, timeout)?),
            ConnectionAddr::TcpTls {
                host,
                port,
                insecure,
                ..
            } => {
                if *insecure {
                    return Err(RedisError::from((
                        ErrorKind::InvalidClientConfig,
                        "TLS without certificate verification is not supported",
                    )));
                }
                let name = ServerName::try_from(host.clone()).map_err(|e| {
                    RedisError::from((
                        ErrorKind::InvalidClientConfig,
                        "not a TLS server name",
                        e.to_string(),
                    ))
                })?;
                let tls = rustls::ClientConnection::new(tls_config(limits.tls.as_deref())?, name)
                    .map_err(io::Error::other)?;
                let sock = tcp(host, *port, timeout)?;
                Stream::Tls(Box::new(rustls::StreamOwned::new(tls, sock)))
            }
            ConnectionAddr::Unix(path) => Stream::Unix(UnixStream::connect(path)?),
            _ => {
                return Err(RedisError::from((
                    ErrorKind::InvalidClientConfig,
                    "unsupported address",
                )));
            }
        };
        let mut wire = Wire {
            stream,
            inbox: Inbox::default(),
            db: info.redis_settings().db(),
            open: true,
            read_timeout: Cell::new(None),
            write_timeout: Cell::new(None),
            max_reply: limits.max_reply.max(1),
            functions: None,
        };
        // The handshake too stays within the connect timeout.
        let left = timeout
            .saturating_sub(start.elapsed())
            .max(Duration::from_millis(1));
        wire.set_read_timeout(Some(left))?;
        wire.set_write_timeout(Some(left))?;
        let redis = info.redis_settings();
        if let Some(password) = redis.password() {
            let mut auth = redis::cmd("AUTH");
            if let Some(user) = redis.username() {
                auth.arg(user);
            }
            match auth.arg(password).query::<()>(&mut wire) {
                // Any error reply (WRONGPASS, or ERR from an older server).
                Err(e) if e.code().is_some() => {
                    return Err(RedisError::from((
                        ErrorKind::AuthenticationFailed,
                        "Password authentication failed",
                    )));
                }
                other => other?,
            }
        }
        if wire.db != 0 {
            redis::cmd("SELECT").arg(wire.db).query::<()>(&mut wire)?;
        }
        Ok(wire)
    }

    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> RedisResult<()> {
        self.stream.set_read_timeout(timeout)?;
        self.read_timeout.set(timeout);
        Ok(())
    }

    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> RedisResult<()> {
        self.stream.set_write_timeout(timeout)?;
        self.write_timeout.set(timeout);
        Ok(())
    }

    /// Sends a blocking command (BLPOP) whose own timeout is `nap`, and reads
    /// its reply within the read timeout after the nap.
    ///
    /// A server answers a blocked client whose timeout has passed only when
    /// its event loop turns, which on an idle server is its next cron tick
    /// (every 100 ms at the default `hz`), however short the timeout. So
    /// when the nap is over and no reply has come, a PING follows on the
    /// same connection: the server reads it (it runs nothing else for a
    /// blocked client), its loop turns and finds the timeout passed, and it
    /// answers the command, then the PING. Nothing is lost or taken for
    /// another reply: the command's reply comes first whatever it is, and
    /// every PONG is read after it.
    pub fn blocking(&mut self, cmd: &[u8], nap: Duration) -> RedisResult<Value> {
        self.send(cmd)?;
        let (mut pings, mut wait) = (0, nap + NUDGE);
        while pings < NUDGES && !self.readable(wait)? {
            self.send(PING)?;
            pings += 1;
            wait = NUDGE * (1 << pings);
        }
        let reply = self.receive()?;
        for _ in 0..pings {
            // A PONG that does not come leaves the stream out of step: the
            // connection is done (receive() says so), the reply is still
            // the command's.
            if self.receive().is_err() {
                break;
            }
        }
        Ok(reply)
    }

    /// Whether a reply starts to arrive within `wait` (nothing is read).
    fn readable(&mut self, wait: Duration) -> RedisResult<bool> {
        if !self.inbox.held().is_empty() {
            return Ok(true);
        }
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let ms = i32::try_from(left.as_micros().div_ceil(1000)).unwrap_or(i32::MAX);
            let mut fd = libc::pollfd {
                fd: self.stream.fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, for a socket this Wire owns.
            match unsafe { libc::poll(&mut fd, 1, ms) } {
                0 => return Ok(false),
                // Readable, or closed or failed: the read tells which.
                n if n > 0 => return Ok(true),
                _ => {
                    let err = io::Error::last_os_error();
                    if err.kind() == io::ErrorKind::Interrupted && signals::resume() {
                        continue;
                    }
                    // A signal ends the wait (or poll failed): the reply
                    // is unread, the stream out of step.
                    self.open = false;
                    return Err(err.into());
                }
            }
        }
    }

    fn send(&mut self, bytes: &[u8]) -> RedisResult<()> {
        let sent = self.send_within(bytes);
        if sent.is_err() {
            self.open = false;
        }
        sent
    }

    /// Writes `bytes` within one write timeout in all (a server that reads
    /// a byte at a time does not hold the call either).
    fn send_within(&mut self, mut bytes: &[u8]) -> RedisResult<()> {
        let timeout = self.write_timeout.get();
        let deadline = timeout.map(|t| Instant::now() + t);
        let (mut first, mut shortened) = (true, false);
        while !bytes.is_empty() {
            if !first && let Some(deadline) = deadline {
                let left = deadline
                    .checked_duration_since(Instant::now())
                    .filter(|d| !d.is_zero())
                    .ok_or_else(|| io::Error::new(io::ErrorKind::TimedOut, WRITE_LATE))?;
                self.stream.set_write_timeout(Some(left))?;
                shortened = true;
            }
            first = false;
            match self.stream.write(bytes) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero).into()),
                Ok(n) => bytes = &bytes[n..],
                // A signal's handler ran before anything was written.
                Err(e) if e.kind() == io::ErrorKind::Interrupted && signals::resume() => {}
                Err(e) => return Err(self.stream.named(e, WRITE_LATE).into()),
            }
        }
        loop {
            match self.stream.flush() {
                Err(e) if e.kind() == io::ErrorKind::Interrupted && signals::resume() => {}
                flushed => break flushed.map_err(|e| self.stream.named(e, WRITE_LATE))?,
            }
        }
        // The socket's timeout is set again only when a partial write cut it.
        if shortened {
            self.stream.set_write_timeout(timeout)?;
        }
        Ok(())
    }

    /// Reads one reply: it must arrive whole within the read timeout and
    /// within `max_reply` bytes. An error leaves the stream out of step:
    /// the connection is done.
    fn receive(&mut self) -> RedisResult<Value> {
        self.receive_with(resp::decode)
    }

    /// Sends `cmd` and gives its reply, one whole reply's bytes, to `read`;
    /// a reply `read` does not take (None: an error reply, another shape)
    /// is decoded as a `Value` instead. For a reply of many values that
    /// `read` turns into the caller's type without a `Value` each.
    pub fn request_read<T>(
        &mut self,
        cmd: &[u8],
        read: fn(&[u8]) -> Option<T>,
    ) -> RedisResult<Result<T, Value>> {
        self.send(cmd)?;
        self.receive_with(|frame| match read(frame) {
            Some(value) => Ok(Ok(value)),
            None => resp::decode(frame).map(Err),
        })
    }

    /// Reads one reply and decodes it with `decode` (see [`Wire::receive`]).
    fn receive_with<R>(
        &mut self,
        decode: impl FnOnce(&[u8]) -> Result<R, resp::NotResp>,
    ) -> RedisResult<R> {
        let timeout = self.read_timeout.get();
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut frame = resp::Frame::default();
        let mut reads = 0;
        let len = loop {
            let held = self.inbox.held();
            match frame.end(held) {
                Ok(Some(len)) => break Ok(len),
                // A bulk string that says it is larger than the bound is
                // refused now, not after the read timeout.
                Ok(None) if frame.wants() as u64 > self.max_reply => {
                    break Err(too_large(self.max_reply).into());
                }
                Ok(None) => {}
                Err(resp::NotResp) => break Err(resp::not_redis(held)),
            }
            if let Err(e) = self.fill(deadline, &mut reads) {
                break Err(e.into());
            }
        };
        let reply = len.and_then(|len| {
            let held = self.inbox.held();
            let reply = decode(&held[..len]).map_err(|_| resp::not_redis(held));
            self.inbox.take(len);
            reply
        });
        if reply.is_err() {
            self.open = false;
            self.inbox = Inbox::default();
        } else if reads > 1 && timeout.is_some() {
            self.stream.set_read_timeout(timeout)?;
        }
        reply
    }

    /// Reads what the socket has, at least a byte, into the inbox. The
    /// socket's own timeout covers a reply's first read; later reads get
    /// what is left until `deadline`.
    fn fill(&mut self, deadline: Option<Instant>, reads: &mut u32) -> io::Result<()> {
        let held = self.inbox.held().len() as u64;
        if held >= self.max_reply {
            return Err(too_large(self.max_reply));
        }
        let bound = usize::try_from(self.max_reply - held).unwrap_or(usize::MAX);
        loop {
            if *reads > 0
                && let Some(deadline) = deadline
            {
                let left = deadline
                    .checked_duration_since(Instant::now())
                    .filter(|d| !d.is_zero())
                    .ok_or_else(timed_out)?;
                self.stream.set_read_timeout(Some(left))?;
            }
            *reads += 1;
            let room = self.inbox.room();
            let take = room.len().min(bound);
            match self.stream.read(&mut room[..take]) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                Ok(n) => {
                    self.inbox.end += n;
                    return Ok(());
                }
                // A signal's handler ran; the reply is still coming.
                Err(e) if e.kind() == io::ErrorKind::Interrupted && signals::resume() => {}
                Err(e) => return Err(self.stream.named(e, READ_LATE)),
            }
        }
    }
}

/// A reply past `redislock.max_reply_size`.
fn too_large(max_reply: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("a reply larger than {max_reply} bytes (redislock.max_reply_size)"),
    )
}

fn tcp(host: &str, port: u16, timeout: Duration) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{host} has no address"));
    for addr in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(sock) => {
                sock.set_nodelay(true)?;
                return Ok(sock);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn tls_config(certs: Option<&TlsCertificates>) -> RedisResult<Arc<rustls::ClientConfig>> {
    let bad = |what: &'static str, e: &dyn std::fmt::Display| {
        RedisError::from((ErrorKind::InvalidClientConfig, what, e.to_string()))
    };
    let mut roots = rustls::RootCertStore::empty();
    match certs.and_then(|c| c.root_cert.as_ref()) {
        Some(pem) => {
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| bad("unreadable CA certificate", &e))?;
                roots
                    .add(cert)
                    .map_err(|e| bad("unusable CA certificate", &e))?;
            }
        }
        None => {
            for cert in rustls_native_certs::load_native_certs().certs {
                // The system store may hold certificates rustls cannot use.
                let _ = roots.add(cert);
            }
        }
    }
    let builder = rustls::ClientConfig::builder().with_root_certificates(roots);
    let config = match certs.and_then(|c| c.client_tls.as_ref()) {
        Some(client) => {
            let chain = CertificateDer::pem_slice_iter(&client.client_cert)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| bad("unreadable client certificate", &e))?;
            let key = PrivateKeyDer::from_pem_slice(&client.client_key)
                .map_err(|e| bad("unreadable client key", &e))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| bad("unusable client certificate", &e))?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

impl ConnectionLike for Wire {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.send(cmd)?;
        self.receive()
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.send(cmd)?;
        let mut replies = Vec::with_capacity(count);
        for i in 0..offset + count {
            let reply = self.receive()?;
            if i >= offset {
                replies.push(reply);
            }
        }
        Ok(replies)
    }

    fn get_db(&self) -> i64 {
        self.db
    }

    fn check_connection(&mut self) -> bool {
        redis::cmd("PING").query::<String>(self).is_ok()
    }

    fn is_open(&self) -> bool {
        self.open
    }
}

impl Connect for Wire {
    fn connect<T: IntoConnectionInfo>(info: T, timeout: Option<Duration>) -> RedisResult<Self> {
        let info = info.into_connection_info()?;
        let limits = CLUSTER.with(|c| c.borrow().clone());
        Wire::open(&info, &limits, timeout.unwrap_or(Duration::from_secs(1)))
    }

    fn send_packed_command(&mut self, cmd: &[u8]) -> RedisResult<()> {
        self.send(cmd)
    }

    fn set_write_timeout(&self, dur: Option<Duration>) -> RedisResult<()> {
        Wire::set_write_timeout(self, dur)
    }

    fn set_read_timeout(&self, dur: Option<Duration>) -> RedisResult<()> {
        Wire::set_read_timeout(self, dur)
    }

    fn recv_response(&mut self) -> RedisResult<Value> {
        self.receive()
    }
}
