//! One lazily opened connection per process, thread and deployment, reused
//! across requests, never carried across a fork, and dropped after any I/O
//! error or timeout (the outcome of a command is then unknown, so the stream
//! is too). A single server and a sentinel-named master get our own
//! connection with bounded replies (`wire`); a cluster gets the `redis`
//! crate's cluster connection over those.

use std::cell::RefCell;
use std::fmt;
use std::time::Duration;

use redis::cluster::{ClusterClientBuilder, ClusterConnection};
use redis::sentinel::{SentinelClientBuilder, SentinelServerType};
use redis::{
    Cmd, ConnectionInfo, ConnectionLike, ErrorKind, Pipeline, RedisError, RedisResult,
    ServerErrorKind, TlsMode, Value,
};

use crate::config::{Config, Topology};
use crate::signals;
use crate::wire::{ClusterScope, Limits, Wire};

/// Why a Redis call failed. Messages name the server, never a password.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// Unreachable, refused, reset, timed out: the outcome is unknown.
    Connection { server: String, cause: String },
    /// Redis answered with an error (wrong type, script error, OOM...).
    Server { server: String, cause: String },
    /// Redis answered with a reply that is not what the call reads (a key
    /// written by hand, read as it is): the server is there, and the
    /// connection in step.
    Reply { server: String, cause: String },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Connection { server, cause } => {
                write!(f, "Redis at {server} is unavailable: {cause}")
            }
            Error::Server { server, cause } => {
                write!(f, "Redis at {server} answered with an error: {cause}")
            }
            Error::Reply { server, cause } => {
                write!(
                    f,
                    "Redis at {server} answered with a reply redislock cannot read: {cause}"
                )
            }
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The server the error came from, as messages name it.
    pub fn server(&self) -> &str {
        match self {
            Error::Connection { server, .. }
            | Error::Server { server, .. }
            | Error::Reply { server, .. } => server,
        }
    }

    /// What happened.
    pub fn cause(&self) -> &str {
        match self {
            Error::Connection { cause, .. }
            | Error::Server { cause, .. }
            | Error::Reply { cause, .. } => cause,
        }
    }

    /// The same error, its cause followed by what it left behind.
    pub fn with_note(mut self, note: &str) -> Self {
        match &mut self {
            Error::Connection { cause, .. }
            | Error::Server { cause, .. }
            | Error::Reply { cause, .. } => {
                cause.push_str("; ");
                cause.push_str(note);
            }
        }
        self
    }
}

/// An error reply leaves the stream in step; anything else may not have.
/// Where the server to ask can change (a sentinel-named master, a cluster),
/// a reply saying it is not (or no longer) the one (a demoted master's
/// READONLY, a cluster's MOVED) drops the connection too, so the next one
/// asks the sentinels or the cluster again. A single server that is a
/// replica stays one: its READONLY is an answer like any other error.
fn keeps_connection(config: &Config, err: &RedisError) -> bool {
    (unreadable(err)
        || matches!(
            err.kind(),
            ErrorKind::Server(_) | ErrorKind::Extension | ErrorKind::UnexpectedReturnType
        ))
        && !(moved(err) && may_move(config))
}

/// Whether `err` is a reply read whole that the call could not convert to
/// what it reads (the `redis` crate's `ParsingError`), rather than bytes
/// that are not the protocol.
pub fn unreadable(err: &RedisError) -> bool {
    std::error::Error::source(err).is_some_and(|e| e.is::<redis::ParsingError>())
}

/// Whether the server that serves a key can be another one a moment later.
fn may_move(config: &Config) -> bool {
    !matches!(config.topology, Topology::Single)
}

/// Errors after which the command certainly did not run, because the server
/// it reached does not serve its keys (yet): worth one more try on a fresh
/// connection.
fn moved(err: &RedisError) -> bool {
    matches!(
        err.kind(),
        ErrorKind::Server(
            ServerErrorKind::ReadOnly
                | ServerErrorKind::Moved
                | ServerErrorKind::Ask
                | ServerErrorKind::TryAgain
                | ServerErrorKind::ClusterDown
                | ServerErrorKind::MasterDown
        )
    ) || err.is_connection_refusal()
}

/// A connection to a single server, or to a cluster.
pub enum Conn {
    Single(Wire),
    /// With whether the scripts run as functions on its nodes (None until
    /// asked).
    Cluster(Box<ClusterConnection<Wire>>, Option<bool>),
}

impl Conn {
    /// Whether the scripts run as functions here (see
    /// `scripts::Invocation::invoke`), asked once per connection: a single
    /// server with the connection's handshake (or now, when that got no
    /// answer), a cluster now, one node answering for all.
    pub fn functions(&mut self) -> RedisResult<bool> {
        let answers: Vec<RedisResult<Value>> = match self {
            Conn::Single(Wire {
                functions: Some(known),
                ..
            })
            | Conn::Cluster(_, Some(known)) => return Ok(*known),
            Conn::Single(c) => {
                let mut ask = redis::pipe();
                ask_functions(&mut ask);
                ask.ignore_errors().query(c)?
            }
            // A cluster connection sends no pipeline: one command at a time.
            Conn::Cluster(c, None) => {
                let mut ask = redis::pipe();
                ask_functions(&mut ask);
                ask.cmd_iter()
                    .map(|cmd| c.req_command(cmd).and_then(Value::extract_error))
                    .collect()
            }
        };
        let known = functions_known(&answers)?;
        self.set_functions(known);
        Ok(known)
    }

    /// Records whether the scripts run as functions on this connection's
    /// server.
    pub fn set_functions(&mut self, functions: bool) {
        match self {
            Conn::Single(c) => c.functions = Some(functions),
            Conn::Cluster(_, known) => *known = Some(functions),
        }
    }

    /// Runs `cmd`, which names no key, on the server that holds `key`: on
    /// a cluster, the primary of its slot (`WAIT` there, for the writes of
    /// this connection to that primary only), else the one server.
    pub fn on_server_of(&mut self, key: &[u8], cmd: &Cmd) -> RedisResult<Value> {
        match self {
            Conn::Single(c) => c.req_command(cmd),
            Conn::Cluster(c, _) => {
                use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
                let route = Route::new(crate::keys::slot(key), SlotAddr::Master);
                c.route_command(
                    cmd,
                    RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route)),
                )
            }
        }
    }

    /// Runs a blocking command (BLPOP), given as its words, whose own
    /// timeout is `nap`: its reply comes within `read_timeout` of the nap's
    /// end. A single server is nudged at the nap's end (see
    /// [`Wire::blocking`]); a cluster node's reply may come at the node's
    /// next cron tick.
    pub fn blocking(
        &mut self,
        words: &[&[u8]],
        nap: Duration,
        read_timeout: Duration,
    ) -> RedisResult<Value> {
        let reply = match self {
            Conn::Single(c) => {
                let mut packed = Vec::new();
                crate::resp::write_command(&mut packed, words.len(), words.iter().copied());
                c.blocking(&packed, nap)?
            }
            Conn::Cluster(c, _) => {
                let cmd = crate::resp::command_of(words.len(), words.iter().copied());
                c.set_read_timeout(Some(nap + read_timeout))?;
                let reply = c.req_command(&cmd)?;
                c.set_read_timeout(Some(read_timeout))?;
                reply
            }
        };
        reply.extract_error()
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(c, _) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        match self {
            Conn::Single(c) => c.req_packed_commands(cmd, offset, count),
            Conn::Cluster(c, _) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        match self {
            Conn::Single(c) => c.req_command(cmd),
            Conn::Cluster(c, _) => c.req_command(cmd),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(c) => c.get_db(),
            Conn::Cluster(c, _) => c.get_db(),
        }
    }

    fn check_connection(&mut self) -> bool {
        match self {
            Conn::Single(c) => c.check_connection(),
            Conn::Cluster(c, _) => c.check_connection(),
        }
    }

    fn is_open(&self) -> bool {
        match self {
            Conn::Single(c) => c.is_open(),
            Conn::Cluster(c, _) => c.is_open(),
        }
    }
}

fn classify(config: &Config, err: RedisError) -> Error {
    let server = config.server.clone();
    let cause = match err.kind() {
        ErrorKind::AuthenticationFailed => {
            "authentication failed: wrong user name or password, or the ACL user is off".to_owned()
        }
        _ if needs_auth(&err) => {
            "authentication required: the server asks for a password (NOAUTH) and none was given"
                .to_owned()
        }
        // Said by `wire` in words, e.g. a peer that is not Redis.
        ErrorKind::Parse => err
            .detail()
            .unwrap_or("a reply that is not the Redis protocol")
            .to_owned(),
        _ => match err.code() {
            Some(code) => reply_text(code, err.detail().unwrap_or_default()),
            None => crate::config::words(&err),
        },
    };
    // A reply can be megabytes of anything: a message quotes a short,
    // printable excerpt of it.
    let cause = excerpt(&cause);
    if unreadable(&err) {
        Error::Reply { server, cause }
    } else if keeps_connection(config, &err) {
        Error::Server { server, cause }
    } else {
        Error::Connection { server, cause }
    }
}

/// A reply a script was not written to give (a bug, or a server the
/// scripts were not written for): an error naming the script and the
/// reply, never read as a plausible result.
pub fn unknown_reply(config: &Config, script: &str, reply: &dyn fmt::Debug) -> Error {
    Error::Reply {
        server: config.server.clone(),
        cause: excerpt(&format!(
            "{script} replied {reply:?}, which this release of redislock does not know"
        )),
    }
}

/// The most of a cause a message quotes, in bytes.
const EXCERPT: usize = 300;

/// `text` as a message may quote it: control characters escaped (`\x1b`),
/// and past [`EXCERPT`] bytes cut, saying how long it was.
pub fn excerpt(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(EXCERPT + 40));
    for c in text.chars() {
        if out.len() >= EXCERPT {
            out.push_str(&format!("... ({} bytes in all)", text.len()));
            return out;
        }
        if c.is_control() {
            out.push_str(&format!("\\x{:02x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// An error reply as Redis wrote it (`WRONGTYPE key ... holds a string`),
/// without what Redis adds to errors raised in a script (` script: <sha>,
/// on @user_script:<line>.`): the script is the extension's, not the user's.
fn reply_text(code: &str, detail: &str) -> String {
    let detail = match detail.find(" script: ") {
        Some(at) => &detail[..at],
        None => detail,
    };
    let code = match code {
        // The crate names this one in its own words.
        "ReadOnly" => "READONLY",
        code => code,
    };
    format!("{code} {detail}").trim_end().to_owned()
}

struct Slot {
    pid: u32,
    conn: Conn,
}

/// This thread's connections, one per deployment (`Config::id`): a
/// process talks to one or a few, so a list searched in order costs less
/// than hashing the id twice per call.
#[derive(Default)]
struct Connections(Vec<(String, Slot)>);

impl Connections {
    fn remove(&mut self, id: &str) -> Option<(String, Slot)> {
        let at = self.0.iter().position(|(key, _)| key == id)?;
        Some(self.0.swap_remove(at))
    }

    /// Puts `slot` in, in place of the one `key` had.
    fn insert(&mut self, key: String, slot: Slot) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some((_, old)) => *old = slot,
            None => self.0.push((key, slot)),
        }
    }
}

thread_local! {
    static CONNECTIONS: RefCell<Connections> = RefCell::new(Connections::default());
}

/// The bounds every connection to `config`'s deployment reads within.
fn limits(config: &Config) -> Limits {
    Limits {
        tls: config.tls.clone(),
        max_reply: config.max_reply,
    }
}

fn connect(config: &Config) -> RedisResult<Conn> {
    match &config.topology {
        Topology::Single => single(config, &config.info),
        Topology::Sentinel { sentinels, master } => {
            let redis = config.info.redis_settings();
            let mut builder =
                SentinelClientBuilder::new(sentinels.clone(), master, SentinelServerType::Master)?
                    .set_client_to_redis_db(redis.db());
            if let Some(user) = redis.username() {
                builder = builder.set_client_to_redis_username(user);
            }
            if let Some(password) = redis.password() {
                builder = builder.set_client_to_redis_password(password);
            }
            if matches!(config.info.addr(), redis::ConnectionAddr::TcpTls { .. }) {
                builder = builder
                    .set_client_to_redis_tls_mode(TlsMode::Secure)
                    .set_client_to_sentinel_tls_mode(TlsMode::Secure);
                if let Some(certs) = &config.tls {
                    builder = builder
                        .set_client_to_redis_certificates((**certs).clone())
                        .set_client_to_sentinel_certificates((**certs).clone());
                }
            }
            // The sentinels name the master; our own connection talks to it.
            let master = builder.build()?.get_client()?;
            single(config, master.get_connection_info())
        }
        Topology::Cluster { nodes } => {
            // No retries inside the cluster client: it would resend a script
            // after a timeout, whose outcome is unknown. `run` retries
            // the errors after which the script certainly did not run.
            let mut builder = ClusterClientBuilder::new(nodes.clone())
                .connection_timeout(config.connect_timeout)
                .response_timeout(config.read_timeout)
                .retries(0);
            // TLS itself follows from the nodes' rediss addresses.
            if let Some(certs) = &config.tls {
                builder = builder.certs((**certs).clone());
            }
            let conn = builder.build()?.get_generic_connection::<Wire>()?;
            conn.set_read_timeout(Some(config.read_timeout))?;
            conn.set_write_timeout(Some(config.read_timeout))?;
            Ok(Conn::Cluster(Box::new(conn), None))
        }
    }
}

/// Why a cluster has no node to send to, when the crate's words do not
/// say: a seed node without cluster mode refuses the crate's `CLUSTER
/// SLOTS`, and a command then fails with "No connections found". Asked
/// again, on this error path only, on a connection of our own, within
/// [`PROBE`] in all: the same error in an outage (nodes that do not answer)
/// comes at most that much later.
fn not_a_cluster(config: &Config, err: RedisError) -> RedisError {
    let Topology::Cluster { nodes } = &config.topology else {
        return err;
    };
    if err.kind() != ErrorKind::ClusterConnectionNotFound {
        return err;
    }
    let deadline = std::time::Instant::now() + PROBE.min(config.connect_timeout);
    for node in nodes {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        let Ok(mut wire) = Wire::open(node, &limits(config), left) else {
            continue;
        };
        if wire.set_read_timeout(Some(left)).is_err() {
            continue;
        }
        // An error reply: "ERR This instance has cluster support disabled",
        // or whatever keeps this node from telling its cluster.
        if let Err(e) = redis::cmd("CLUSTER").arg("MYID").query::<Value>(&mut wire)
            && let Some(code) = e.code()
        {
            return RedisError::from((
                ErrorKind::ClusterConnectionNotFound,
                "not a cluster",
                format!(
                    "{} answered CLUSTER MYID with '{}' (a redis:// DSN names one server)",
                    crate::config::describe_addr(node.addr()),
                    reply_text(code, e.detail().unwrap_or_default())
                ),
            ));
        }
    }
    err
}

/// How long [`not_a_cluster`] may ask the seed nodes.
const PROBE: Duration = Duration::from_millis(200);

/// A connection to one server with our timeouts, bounds and name.
fn single(config: &Config, info: &ConnectionInfo) -> RedisResult<Conn> {
    let mut conn = Wire::open(info, &limits(config), config.connect_timeout)?;
    conn.set_read_timeout(Some(config.read_timeout))?;
    conn.set_write_timeout(Some(config.read_timeout))?;
    // `CLIENT LIST` then shows which process owns each connection. An error
    // reply (an ACL user may not name itself) is fine; a broken stream is not.
    // In the same round trip: whether the scripts run as functions here.
    let name = format!("redislock-{}", crate::process::id());
    let mut hello = redis::pipe();
    hello.cmd("CLIENT").arg("SETNAME").arg(name);
    ask_functions(&mut hello);
    let answers: Vec<RedisResult<Value>> = match hello.ignore_errors().query(&mut conn) {
        Err(e) if !keeps_connection(config, &e) => return Err(e),
        answers => answers.unwrap_or_default(),
    };
    // NOAUTH here means no password was given where one is needed: said
    // plainly now, rather than by the next command (Redis answers a larger
    // unauthenticated request with a protocol error and hangs up).
    if let Some(Err(e)) = answers.first()
        && needs_auth(e)
    {
        return Err(e.clone());
    }
    // Not known (an unexpected error): the first script asks again.
    if let Ok(known) = functions_known(&answers) {
        conn.functions = Some(known);
    }
    Ok(Conn::Single(conn))
}

/// Adds to `pipe` the two commands whose answers tell whether the scripts
/// run as functions on a server ([`functions_known`] reads them): a
/// `FUNCTION LIST` that matches nothing, and `COMMAND INFO FCALL`. A
/// script's call never asks by itself: a server that does not know `FCALL`
/// (Redis 6, or one that renamed it away) answers with an error that quotes
/// the call's first arguments, keys and all, which need not be text (the
/// crate's parser refuses such a reply).
fn ask_functions(pipe: &mut Pipeline) {
    pipe.cmd("FUNCTION")
        .arg("LIST")
        .arg("LIBRARYNAME")
        .arg("redislock_")
        .cmd("COMMAND")
        .arg("INFO")
        .arg("FCALL");
}

/// What the answers to [`ask_functions`] (the last two of `answers`, from a
/// pipeline that ignored errors) say: functions, unless the server does not
/// know `FUNCTION` or `FCALL`, or the ACL keeps this user from listing
/// them. A user may not be allowed `COMMAND`: the list alone says it then.
/// Any other error is the error.
fn functions_known(answers: &[RedisResult<Value>]) -> RedisResult<bool> {
    let [.., list, info] = answers else {
        return Err(RedisError::from((
            ErrorKind::Client,
            "no answer about functions",
        )));
    };
    match list {
        Ok(_) => {}
        Err(e) if e.code() == Some("NOPERM") => return Ok(false),
        Err(e) if e.detail().is_some_and(|d| d.starts_with("unknown command")) => {
            return Ok(false);
        }
        Err(e) => return Err(e.clone()),
    }
    // `COMMAND INFO` of a command the server does not know is [nil].
    Ok(!matches!(info, Ok(Value::Array(v)) if matches!(v.as_slice(), [Value::Nil])))
}

/// Whether Redis refused a command for want of authentication.
fn needs_auth(err: &RedisError) -> bool {
    err.code() == Some("NOAUTH")
}

/// A connection taken out of this thread's connections to be used on another
/// thread (see [`lend`] and [`adopt`]).
pub struct Lent(Option<(String, Slot)>);

impl Lent {
    /// No connection (the next call opens one).
    pub fn none() -> Self {
        Lent(None)
    }
}

/// Takes this thread's connection for `config` out of its connections, so
/// that another thread can [`adopt`] it (Redlock asks its nodes from one
/// short-lived thread each; the connections outlive those threads).
pub fn lend(config: &Config) -> Lent {
    Lent(CONNECTIONS.with(|c| c.borrow_mut().remove(&config.id)))
}

/// Puts a lent connection into this thread's connections.
pub fn adopt(lent: Lent) {
    if let Some((key, slot)) = lent.0 {
        CONNECTIONS.with(|c| c.borrow_mut().insert(key, slot));
    }
}

/// Takes this process's connection for `config` out of its connections, with its
/// key, opening one if there is none (or only one inherited from a
/// parent process).
fn take(config: &Config) -> Result<(String, Conn), Error> {
    let pid = crate::process::id();
    let slot = CONNECTIONS.with(|c| c.borrow_mut().remove(&config.id));
    match slot {
        // A connection inherited through fork() shares its socket with the
        // parent: dropping our copy closes only our descriptor.
        Some((key, slot)) if slot.pid == pid => Ok((key, slot.conn)),
        // Connecting (and asking sentinels) holds signals back: the
        // `redis` crate's own reads do not resume after EINTR.
        _ => signals::held(|| connect(config))
            .map(|conn| (config.id.clone(), conn))
            .map_err(|e| classify(config, e)),
    }
}

fn put(key: String, conn: Conn) {
    let pid = crate::process::id();
    CONNECTIONS.with(|c| {
        c.borrow_mut().insert(key, Slot { pid, conn });
    });
}

/// How often `run` tries again after an error that proves the command
/// did not run (a failover or resharding under way), and how long it waits
/// between tries.
const MOVED_TRIES: u32 = 5;
const MOVED_PAUSE: Duration = Duration::from_millis(100);

/// Sends `cmds`, each given as its words, in one request (one round trip,
/// as a pipeline that ignores errors, packed straight from the words): their
/// replies, an error among them as a value.
pub fn request(c: &mut Conn, cmds: &[&[&[u8]]]) -> RedisResult<Vec<Value>> {
    let mut packed = Vec::new();
    for words in cmds {
        crate::resp::write_command(&mut packed, words.len(), words.iter().copied());
    }
    c.req_packed_commands(&packed, 0, cmds.len())
}

/// One step of `SCAN` from `cursor`: keys matching `glob` that hold
/// `kind`, 1000 looked at; the next cursor (0: the scan is done).
pub fn scan(
    config: &Config,
    cursor: u64,
    glob: &[u8],
    kind: &str,
) -> Result<(u64, Vec<Vec<u8>>), Error> {
    with(config, |c| {
        redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(glob)
            .arg("COUNT")
            .arg(1000)
            .arg("TYPE")
            .arg(kind)
            .query(c)
    })
}

/// Runs `f` on this process's connection to `config`'s deployment; the
/// connection is kept for the next call unless `f` failed in a way that leaves
/// its state unknown. A read or write a signal interrupts is resumed (see
/// `signals`).
pub fn with<T>(config: &Config, f: impl FnMut(&mut Conn) -> RedisResult<T>) -> Result<T, Error> {
    run(config, f)
}

/// The server's clock (`TIME`): Unix seconds and microseconds.
pub fn server_time(config: &Config) -> Result<(u64, u64), Error> {
    with(config, |c| redis::cmd("TIME").query(c))
}

/// Like [`with`], but open to signals: for a blocking command, which a
/// caught signal cuts short (EINTR; the connection is then dropped, its
/// reply unread).
pub fn with_signals_open<T>(
    config: &Config,
    f: impl FnMut(&mut Conn) -> RedisResult<T>,
) -> Result<T, Error> {
    signals::open(|| run(config, f))
}

fn run<T>(config: &Config, mut f: impl FnMut(&mut Conn) -> RedisResult<T>) -> Result<T, Error> {
    // Cluster node connections opened during the call use our bounds.
    let _scope = matches!(config.topology, Topology::Cluster { .. })
        .then(|| ClusterScope::enter(limits(config)));
    let may_move = may_move(config);
    let mut tries = 0;
    loop {
        tries += 1;
        let (key, mut conn) = match take(config) {
            Ok(conn) => conn,
            // Refused: not sent. A sentinel-named master or a cluster may
            // have another server ready a moment later.
            Err(Error::Connection { .. }) if tries < MOVED_TRIES && may_move => {
                std::thread::sleep(MOVED_PAUSE);
                continue;
            }
            Err(e) => return Err(e),
        };
        match f(&mut conn) {
            Ok(value) => {
                // A call can succeed on a connection it leaves unusable (a
                // blocking command's nudges unanswered: Wire::blocking).
                if !matches!(&conn, Conn::Single(wire) if !wire.is_open()) {
                    put(key, conn);
                }
                return Ok(value);
            }
            Err(err) if moved(&err) && tries < MOVED_TRIES && may_move => {
                drop(conn);
                std::thread::sleep(MOVED_PAUSE);
            }
            Err(err) => {
                if keeps_connection(config, &err) && conn.is_open() {
                    put(key, conn);
                }
                return Err(classify(config, not_a_cluster(config, err)));
            }
        }
    }
}
