//! A private redis-server per test, on a free loopback port in a temp dir:
//! whatever `redis-server` is first on PATH (Redis 6.0 and later, Valkey,
//! Redict; `make test-servers` puts each in front), its arguments following
//! what it can do ([`features`]).
#![allow(dead_code)]

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redislock::config::{Config, Defaults};
use redislock::lock::Wait;

/// One attempt, no waiting.
pub const NO_WAIT: Wait = Wait {
    timeout: Duration::ZERO,
    recheck: Duration::from_millis(100),
};

pub struct RedisServer {
    pub port: u16,
    pub dir: PathBuf,
    child: Option<Child>,
    /// What comes before the port arguments: a config file and `--sentinel`
    /// for sentinels, further options for the others.
    args: Vec<String>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A free port whose port + 10000 is free too: a cluster node's bus on a
/// server without `--cluster-port`.
fn free_bus_port() -> u16 {
    loop {
        let port = free_port();
        if port <= 55535 && TcpListener::bind(("127.0.0.1", port + 10000)).is_ok() {
            return port;
        }
    }
}

/// What the redis-server on PATH is and can do (as php/tests/RedisServer.php
/// reads it).
#[derive(Debug)]
pub struct Features {
    /// `Redis`, `Valkey`, `Redict`.
    pub name: String,
    pub version: (u32, u32, u32),
    /// `--cluster-port` (>= 7.0; before, the bus is the port + 10000).
    pub cluster_port: bool,
    /// ACL channel rules, `&*` (>= 6.2).
    pub acl_channels: bool,
    /// `CLIENT PAUSE ms WRITE` (>= 6.2).
    pub pause_write: bool,
    /// `ZMSCORE` (>= 6.2).
    pub zmscore: bool,
    /// TLS: some builds have none (asked of the server).
    pub tls: bool,
}

pub fn features() -> &'static Features {
    static FEATURES: std::sync::OnceLock<Features> = std::sync::OnceLock::new();
    FEATURES.get_or_init(|| {
        let out = Command::new("redis-server")
            .arg("--version")
            .output()
            .expect("redis-server must be installed (make deps)");
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        let name = said.split(' ').next().unwrap_or_default().to_owned();
        let v: Vec<u32> = said
            .split("v=")
            .nth(1)
            .and_then(|v| v.split(' ').next())
            .unwrap_or_default()
            .split('.')
            .map(|n| n.parse().unwrap_or(0))
            .collect();
        let version = (v[0], *v.get(1).unwrap_or(&0), *v.get(2).unwrap_or(&0));
        let at = |major, minor| (version.0, version.1) >= (major, minor);
        // A build without TLS does not know the directive (Redis) or has
        // no TLS connection type (Valkey); one with TLS complains of the
        // missing key file. None starts.
        let tls = Command::new("redis-server")
            .args(["--port", "0", "--tls-port", &free_port().to_string()])
            .output()
            .map(|o| {
                let said = String::from_utf8_lossy(&[o.stdout, o.stderr].concat()).into_owned();
                !said.contains("Bad directive") && !said.contains("Failed finding TLS support")
            })
            .unwrap_or(false);
        Features {
            name,
            version,
            cluster_port: at(7, 0),
            acl_channels: at(6, 2),
            pause_write: at(6, 2),
            zmscore: at(6, 2),
            tls,
        }
    })
}

/// Whether the server has `feature`: when not, says that the test is
/// skipped, and why, on standard error (written to it directly: the test
/// harness keeps `eprintln!` of passing tests to itself).
pub fn has(feature: bool, what: &str) -> bool {
    if !feature {
        use std::io::Write;
        let f = features();
        let (a, b, c) = f.version;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: {} {a}.{b}.{c} has no {what}",
            f.name
        );
    }
    feature
}

impl RedisServer {
    pub fn start() -> Self {
        Self::start_with(|_, _| Vec::new())
    }

    /// A server started with the options `args(port, dir)` returns (besides
    /// the plain port, which stays open for the harness).
    pub fn start_with(args: impl FnOnce(u16, &PathBuf) -> Vec<String>) -> Self {
        Self::start_on(free_port(), args)
    }

    /// As [`Self::start_with`], on `port`.
    pub fn start_on(port: u16, args: impl FnOnce(u16, &PathBuf) -> Vec<String>) -> Self {
        let mut server = Self::unstarted(port, args);
        server.spawn();
        server
    }

    /// A server on `port` with the options `args(port, dir)`, not started.
    fn unstarted(port: u16, args: impl FnOnce(u16, &PathBuf) -> Vec<String>) -> Self {
        let dir =
            std::env::temp_dir().join(format!("redislock-test-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let args = args(port, &dir);
        RedisServer {
            port,
            dir,
            child: None,
            args,
        }
    }

    /// As [`Self::start_on`], on a port from `port()`. A port found free
    /// may be taken before the server binds it (by a server another test
    /// starts meanwhile: a cluster node's bus port before Redis 7 is its
    /// port + 10000, which nobody asked the kernel for): then the start is
    /// tried again, on another port.
    pub fn start_on_free(
        port: impl Fn() -> u16,
        mut args: impl FnMut(u16, &PathBuf) -> Vec<String>,
    ) -> Self {
        let mut tries = 0;
        loop {
            let mut server = Self::unstarted(port(), &mut args);
            match server.try_spawn() {
                Ok(()) => return server,
                Err(said) if said.contains("Address already in use") && tries < 5 => {
                    tries += 1;
                    let _ = std::fs::remove_dir_all(&server.dir);
                }
                Err(said) => server.failed(&said),
            }
        }
    }

    /// A free loopback port (for a TLS port beside the plain one).
    pub fn free_port() -> u16 {
        free_port()
    }

    fn spawn(&mut self) {
        if let Err(said) = self.try_spawn() {
            self.failed(&said);
        }
    }

    /// Gives up a server that did not start, with what its log said.
    fn failed(&self, said: &str) -> ! {
        let _ = std::fs::remove_dir_all(&self.dir);
        panic!("redis-server on port {} did not start: {said}", self.port);
    }

    /// Starts the server and waits until it answers; when it does not, stops
    /// it and returns the end of its log.
    fn try_spawn(&mut self) -> Result<(), String> {
        let log_file = self.dir.join("server.log");
        let log = || {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log_file)
                .map_or_else(|_| Stdio::null(), Stdio::from)
        };
        let sentinel = self.args.iter().any(|a| a == "--sentinel");
        let mut command = Command::new("redis-server");
        command
            .args(&self.args)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(if sentinel {
                &[][..]
            } else {
                &["--save", "", "--appendonly", "no"][..]
            })
            .args(if sentinel {
                Vec::new()
            } else {
                vec!["--dir".into(), self.dir.clone()]
            })
            .stdout(log())
            .stderr(log());
        // The server dies with the thread that started it, also when the
        // test binary is killed or panics past its destructors: no server
        // outlives a run.
        // SAFETY: prctl is async-signal-safe, as pre_exec requires.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child = command
            .spawn()
            .expect("redis-server must be installed (make deps)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(mut c) = redis::Client::open(self.url()).and_then(|c| c.get_connection())
                && redis::cmd("PING").query::<String>(&mut c).is_ok()
            {
                return Ok(());
            }
            if self
                .child
                .as_mut()
                .is_some_and(|c| c.try_wait().ok().flatten().is_some())
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let said = std::fs::read_to_string(&log_file).unwrap_or_default();
        let tail: Vec<&str> = said.lines().rev().take(5).collect();
        self.stop();
        Err(tail.into_iter().rev().collect::<Vec<_>>().join(" / "))
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn config(&self) -> Config {
        Config::from_dsn(
            &format!("{}?timeout=1&read_timeout=1", self.url()),
            &Defaults::default(),
        )
        .unwrap()
    }

    /// The remaining TTL of a key in ms (-2: no key, -1: no expiry).
    pub fn pttl(&self, key: &str) -> i64 {
        redis::cmd("PTTL")
            .arg(key)
            .query(&mut self.client())
            .unwrap()
    }

    /// A direct connection, for checking what the engines left in Redis.
    pub fn client(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .unwrap()
            .get_connection()
            .unwrap()
    }

    /// Every key and its serialized value: two snapshots are equal when
    /// Redis holds exactly the same data.
    pub fn snapshot(&self) -> std::collections::BTreeMap<Vec<u8>, Vec<u8>> {
        let mut c = self.client();
        let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(&mut c).unwrap();
        keys.into_iter()
            .map(|k| {
                let dump: Vec<u8> = redis::cmd("DUMP").arg(&k).query(&mut c).unwrap();
                (k, dump)
            })
            .collect()
    }

    /// Writes a string where redislock keeps another type (as somebody
    /// might, by hand).
    pub fn by_hand(&self, key: &[u8]) {
        redis::cmd("SET")
            .arg(key)
            .arg("by hand")
            .query::<()>(&mut self.client())
            .unwrap();
    }

    /// Writes a hash at `key`, in place of what it held, where redislock
    /// keeps a string or a list (as somebody might, by hand).
    pub fn hash_by_hand(&self, key: &[u8]) {
        redis::pipe()
            .cmd("DEL")
            .arg(key)
            .cmd("HSET")
            .arg(key)
            .arg("x")
            .arg("y")
            .query::<()>(&mut self.client())
            .unwrap();
    }

    /// Puts the consumer `token` in the line of a queue (its keys `line`
    /// and `waiters`) as a blocked reserve leaves it: in line, its place
    /// kept. Returns the list its wake-up is pushed to.
    pub fn consumer_in_line(&self, line: &[u8], waiters: &[u8], token: &str) -> Vec<u8> {
        let mut c = self.client();
        let key = |what: &str| [waiters, what.as_bytes(), token.as_bytes()].concat();
        redis::cmd("RPUSH")
            .arg(line)
            .arg(token)
            .query::<()>(&mut c)
            .unwrap();
        redis::cmd("SET")
            .arg(key("a:"))
            .arg("1")
            .query::<()>(&mut c)
            .unwrap();
        key("w:")
    }

    /// Puts the waiter `W` in a lock's or permits' line (keys `line` and
    /// `waiters`) as a blocked acquire leaves it: `member` (`W:<lease ms>`,
    /// and for permits `:<wanted>:<in all>`) in line, its place kept 30 s.
    pub fn waiter_in_line(&self, line: &[u8], waiters: &[u8], member: &str) {
        redis::pipe()
            .cmd("RPUSH")
            .arg(line)
            .arg(member)
            .cmd("SET")
            .arg([waiters, b"a:W"].concat())
            .arg("1")
            .arg("PX")
            .arg(30000)
            .query::<()>(&mut self.client())
            .unwrap();
    }

    /// The elements of the list `key`.
    pub fn list(&self, key: &[u8]) -> Vec<Vec<u8>> {
        redis::cmd("LRANGE")
            .arg(key)
            .arg(0)
            .arg(-1)
            .query(&mut self.client())
            .unwrap()
    }

    /// How many scripts the server ran since it started, as functions or
    /// with `EVAL`/`EVALSHA`.
    pub fn scripts(&self) -> u64 {
        self.calls(&["evalsha", "eval", "fcall"])
    }

    /// How many times the server ran each of `commands` since it started
    /// (`INFO commandstats`), summed.
    pub fn calls(&self, commands: &[&str]) -> u64 {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(&mut self.client())
            .unwrap();
        info.lines()
            .filter_map(|l| l.strip_prefix("cmdstat_"))
            .filter_map(|l| l.split_once(":calls="))
            .filter(|(name, _)| commands.contains(name))
            .map(|(_, rest)| rest.split(',').next().unwrap().parse::<u64>().unwrap())
            .sum()
    }

    /// The server's process id (for SIGSTOP/SIGCONT).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Asks a server one command over a plain connection.
pub fn ask<T: redis::FromRedisValue>(port: u16, cmd: &redis::Cmd) -> redis::RedisResult<T> {
    let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}"))?
        .get_connection_with_timeout(Duration::from_secs(1))?;
    cmd.query(&mut c)
}

/// Polls `done` every 50 ms for up to `secs` seconds.
pub fn wait_for(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// redis-server arguments adding the ACL user `app` (password `s3cret`),
/// allowed everything (channels too where the server has channel rules).
pub fn acl_user() -> Vec<String> {
    ["--user", "app", "on", ">s3cret", "~*"]
        .into_iter()
        .chain(features().acl_channels.then_some("&*"))
        .chain(["+@all"])
        .map(String::from)
        .collect()
}

/// redis-server arguments for a TLS port with the certificates that
/// [`make_certs`] made in `certs`.
pub fn tls_args(certs: &std::path::Path, port: u16, auth_clients: &str) -> Vec<String> {
    let file = |name: &str| certs.join(name).display().to_string();
    vec![
        "--tls-port".into(),
        port.to_string(),
        "--tls-cert-file".into(),
        file("server.crt"),
        "--tls-key-file".into(),
        file("server.key"),
        "--tls-ca-cert-file".into(),
        file("ca.crt"),
        "--tls-auth-clients".into(),
        auth_clients.into(),
    ]
}

/// A Redis Cluster of 3 primaries and 3 replicas, built with
/// `redis-cli --cluster create`.
pub struct Cluster {
    pub nodes: Vec<RedisServer>,
    /// The nodes' TLS ports, when started with TLS.
    pub tls_ports: Vec<u16>,
}

impl Cluster {
    pub fn start() -> Self {
        Self::start_with_tls(None)
    }

    /// With `certs` (a directory made by [`make_certs`]), every node also
    /// has a TLS port, and the nodes talk to each other over TLS.
    pub fn start_with_tls(certs: Option<&std::path::Path>) -> Self {
        let mut tls_ports = Vec::new();
        let bus_port = features().cluster_port;
        let nodes: Vec<RedisServer> = (0..6)
            .map(|_| {
                // The bus port is set where the server can (>= 7.0): port +
                // 10000 may not exist. Before, the port is one whose + 10000
                // is free.
                let port = || {
                    if bus_port {
                        free_port()
                    } else {
                        free_bus_port()
                    }
                };
                let mut tls_port = None;
                let node = RedisServer::start_on_free(port, |_, _| {
                    let mut args: Vec<String> = [
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",
                        "--cluster-node-timeout",
                        "1000",
                    ]
                    .into_iter()
                    .map(String::from)
                    .collect();
                    if bus_port {
                        args.extend(["--cluster-port".into(), free_port().to_string()]);
                    }
                    args.extend(acl_user());
                    if let Some(dir) = certs {
                        let port = free_port();
                        tls_port = Some(port);
                        args.extend(tls_args(dir, port, "no"));
                        args.extend(
                            ["--tls-cluster", "yes", "--tls-replication", "yes"].map(String::from),
                        );
                    }
                    args
                });
                tls_ports.extend(tls_port);
                node
            })
            .collect();
        let mut create = Command::new("redis-cli");
        match certs {
            Some(dir) => {
                create.arg("--tls").arg("--cacert").arg(dir.join("ca.crt"));
                create.args(["--cluster", "create"]);
                create.args(tls_ports.iter().map(|p| format!("127.0.0.1:{p}")));
            }
            None => {
                create.args(["--cluster", "create"]);
                create.args(nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)));
            }
        }
        let status = create
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .stdout(Stdio::null())
            .status()
            .expect("redis-cli");
        assert!(status.success(), "redis-cli --cluster create failed");
        let cluster = Cluster { nodes, tls_ports };
        cluster.wait_until_ok();
        // A replica that has not synced cannot be promoted.
        wait_for("replicas in sync", 20, || {
            cluster.nodes.iter().all(|n| {
                let info: String =
                    ask(n.port, redis::cmd("INFO").arg("replication")).unwrap_or_default();
                info.contains("role:master") || info.contains("master_link_status:up")
            })
        });
        cluster
    }

    /// Waits until every live node says the cluster is ok.
    pub fn wait_until_ok(&self) {
        wait_for("cluster_state:ok", 30, || {
            self.nodes.iter().filter(|n| n.pid() != 0).all(|n| {
                let info: String =
                    ask(n.port, redis::cmd("CLUSTER").arg("INFO")).unwrap_or_default();
                info.contains("cluster_state:ok")
            })
        });
    }

    /// A DSN naming every node, as the ACL user `app` (password `s3cret`).
    pub fn dsn(&self) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!(
            "redis+cluster://app:s3cret@{}?timeout=1&read_timeout=1",
            hosts.join(",")
        )
    }

    /// The length of the list at `key`, asked of the primary serving it.
    pub fn llen(&self, key: &[u8]) -> i64 {
        let name = std::str::from_utf8(key).unwrap();
        let Some(node) = self.primary_of(name) else {
            return -1;
        };
        ask(self.nodes[node].port, redis::cmd("LLEN").arg(key)).unwrap_or(-1)
    }

    /// The index of the live primary serving `key`, if one does.
    pub fn primary_of(&self, key: &str) -> Option<usize> {
        let live = self.nodes.iter().find(|n| n.pid() != 0).unwrap();
        let slot: i64 = ask(live.port, redis::cmd("CLUSTER").arg("KEYSLOT").arg(key)).unwrap();
        let nodes: String = ask(live.port, redis::cmd("CLUSTER").arg("NODES")).unwrap();
        for line in nodes.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            if !f[2].contains("master") || f[2].contains("fail") {
                continue;
            }
            let serves = f[8..].iter().any(|r| match r.split_once('-') {
                Some((a, b)) => (a.parse().unwrap_or(-1)..=b.parse().unwrap_or(-2)).contains(&slot),
                None => r.parse() == Ok(slot),
            });
            if serves {
                let port: u16 = f[1].split(['@', ':']).nth(1).unwrap().parse().unwrap();
                return self
                    .nodes
                    .iter()
                    .position(|n| n.port == port && n.pid() != 0);
            }
        }
        None
    }
}

/// A master, one replica and three sentinels watching them as `mymaster`.
pub struct Sentinels {
    pub master: RedisServer,
    pub replica: RedisServer,
    pub sentinels: Vec<RedisServer>,
}

impl Sentinels {
    pub fn start() -> Self {
        let master = RedisServer::start();
        let replica = RedisServer::start_with(|_, _| {
            vec![
                "--replicaof".into(),
                "127.0.0.1".into(),
                master.port.to_string(),
            ]
        });
        let sentinels = (0..3)
            .map(|_| {
                RedisServer::start_with(|port, dir| {
                    let conf = dir.join("sentinel.conf");
                    std::fs::write(
                        &conf,
                        format!(
                            "port {port}\nsentinel monitor mymaster 127.0.0.1 {} 2\n\
                             sentinel down-after-milliseconds mymaster 1000\n\
                             sentinel failover-timeout mymaster 10000\n",
                            master.port
                        ),
                    )
                    .unwrap();
                    vec![conf.display().to_string(), "--sentinel".into()]
                })
            })
            .collect();
        let set = Sentinels {
            master,
            replica,
            sentinels,
        };
        wait_for(
            "the replica in sync and known to every sentinel",
            30,
            || {
                let info: String = ask(set.replica.port, redis::cmd("INFO").arg("replication"))
                    .unwrap_or_default();
                info.contains("master_link_status:up")
                    && set.sentinels.iter().all(|s| {
                        ask::<Vec<redis::Value>>(
                            s.port,
                            redis::cmd("SENTINEL").arg("REPLICAS").arg("mymaster"),
                        )
                        .is_ok_and(|r| !r.is_empty())
                    })
            },
        );
        set
    }

    pub fn dsn(&self) -> String {
        let hosts: Vec<String> = self
            .sentinels
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port))
            .collect();
        format!(
            "redis+sentinel://{}/mymaster?timeout=1&read_timeout=1",
            hosts.join(",")
        )
    }

    /// The master's port as the first sentinel reports it.
    pub fn master_port(&self) -> u16 {
        let addr: Vec<String> = ask(
            self.sentinels[0].port,
            redis::cmd("SENTINEL")
                .arg("GET-MASTER-ADDR-BY-NAME")
                .arg("mymaster"),
        )
        .unwrap();
        addr[1].parse().unwrap()
    }
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, made
/// with openssl in `dir`: ca.crt, server.crt/key, client.crt/key.
pub fn make_certs(dir: &std::path::Path) {
    let openssl = |args: &[&str]| {
        let ok = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("openssl")
            .success();
        assert!(ok, "openssl {args:?}");
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=redislock test CA",
    ]);
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    std::fs::write(dir.join("client.ext"), "extendedKeyUsage=clientAuth\n").unwrap();
    for who in ["server", "client"] {
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            &format!("{who}.key"),
            "-out",
            &format!("{who}.csr"),
            "-subj",
            &format!("/CN={who}"),
        ]);
        openssl(&[
            "x509",
            "-req",
            "-in",
            &format!("{who}.csr"),
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            &format!("{who}.crt"),
            "-days",
            "2",
            "-extfile",
            &format!("{who}.ext"),
        ]);
    }
}

/// A server with a TLS port (client certificates required) beside its plain
/// one, and an ACL user `app` with password `s3cret`.
pub struct TlsServer {
    pub server: RedisServer,
    pub tls_port: u16,
    pub certs: PathBuf,
}

impl TlsServer {
    pub fn start() -> Self {
        let tls_port = free_port();
        let mut certs = PathBuf::new();
        let server = RedisServer::start_with(|_, dir| {
            make_certs(dir);
            certs = dir.clone();
            let mut args = tls_args(dir, tls_port, "yes");
            args.extend(acl_user());
            args
        });
        TlsServer {
            server,
            tls_port,
            certs,
        }
    }

    /// A DSN for the TLS port with the CA and, if `client`, the client's
    /// certificate.
    pub fn dsn(&self, userinfo: &str, client: bool) -> String {
        let file = |name: &str| self.certs.join(name).display().to_string();
        let mut dsn = format!(
            "rediss://{userinfo}@127.0.0.1:{}?timeout=1&read_timeout=1&tls_ca={}",
            self.tls_port,
            file("ca.crt")
        );
        if client {
            dsn += &format!(
                "&tls_cert={}&tls_key={}",
                file("client.crt"),
                file("client.key")
            );
        }
        dsn
    }
}

/// The keys of the lock written as its key: `lock:{<name>}` for a
/// `RedisLock\` lock (fenced), `order_lock_<id>` for an order lock,
/// `Lock:<name>` for a seed lock.
pub fn lock_keys(key: &[u8]) -> redislock::lock::Keys {
    use redislock::lock::Keys;
    if let Some(name) = key
        .strip_prefix(b"lock:{")
        .and_then(|k| k.strip_suffix(b"}"))
    {
        Keys::named(b"", name)
    } else if let Some(id) = key.strip_prefix(b"order_lock_") {
        Keys::order(b"", id)
    } else {
        Keys::seed(b"", key.strip_prefix(b"Lock:").unwrap_or(key))
    }
}

/// Whether the lock at `key` was acquired with `token`.
pub fn acquired(
    config: &Config,
    key: &[u8],
    token: &str,
    lease: Duration,
    wait: Wait,
) -> Result<bool, redislock::conn::Error> {
    redislock::lock::acquire(config, &lock_keys(key), token, lease, wait).map(|f| f.is_some())
}

/// The fencing token of an acquire of the `RedisLock\` lock at `key`.
pub fn acquire_fenced(
    config: &Config,
    key: &[u8],
    token: &str,
    lease: Duration,
    wait: Wait,
) -> Result<Option<i64>, redislock::conn::Error> {
    redislock::lock::acquire(config, &lock_keys(key), token, lease, wait)
}

pub fn release(config: &Config, key: &[u8], token: &[u8]) -> Result<bool, redislock::conn::Error> {
    redislock::lock::release(config, &lock_keys(key), token)
}
