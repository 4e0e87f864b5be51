//! The Lua scripts under `src/scripts/`, each built with the files it
//! includes: `need.lua` first (the checks every script makes before it
//! writes), then what its header's `-- include:` lines name (and what
//! those include, each file once, a file after its own includes), then the
//! script. Redis runs them as one script.
//!
//! Each script runs as a Redis function (`FCALL`) where the server has
//! them (Redis and Valkey 7 and later): its library, loaded on first use,
//! defines the included helpers once, where `EVALSHA` defines them again on
//! every call; on a cluster `FUNCTION LOAD` goes to every primary. A server
//! without functions (Redis 6) and a user the ACL does not let load or call
//! them run the same script with `EVALSHA`, loaded on `NOSCRIPT`.

use redis::{
    Cmd, ConnectionLike, ErrorKind, FromRedisValue, ParsingError, RedisError, RedisResult,
    ServerErrorKind, ToRedisArgs, Value,
};

use crate::conn::Conn;
use crate::resp::{self, Words};

/// Every file under `src/scripts/` (in `lib/` the helpers the scripts
/// include, in the other folders the scripts of each kind), by its name.
const FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/scripts.rs"));

/// Whether a script of that name exists (at compile time: [`script!`]).
pub(crate) const fn exists(file: &str) -> bool {
    let mut i = 0;
    while i < FILES.len() {
        let (name, want) = (FILES[i].0.as_bytes(), file.as_bytes());
        if name.len() == want.len() {
            let mut j = 0;
            while j < name.len() && name[j] == want[j] {
                j += 1;
            }
            if j == name.len() {
                return true;
            }
        }
        i += 1;
    }
    false
}

/// A script built from the file `file` of `src/scripts/` and its includes
/// (`with` files after them: a variant), loaded on first use. A file that
/// does not exist does not compile.
macro_rules! script {
    ($file:literal $(, with $($extra:literal),+)?) => {{
        const _: () = assert!($crate::scripts::exists($file), concat!("no script ", $file));
        std::sync::LazyLock::new(|| $crate::scripts::Script::new($file, &[$($($extra),+)?]))
    }};
}
pub(crate) use script;

/// The text of `file` under `src/scripts/`.
fn text(file: &str) -> &'static str {
    match FILES.iter().find(|(name, _)| *name == file) {
        Some((_, text)) => text,
        // The scripts are the crate's own: a wrong name is a bug caught by
        // the tests below, not a run-time condition.
        None => panic!("no script src/scripts/{file}"),
    }
}

/// The files `file`'s header includes, in order.
fn includes(file: &str) -> impl Iterator<Item = &'static str> {
    text(file)
        .lines()
        .take_while(|l| l.starts_with("--"))
        .filter_map(|l| l.strip_prefix("-- include:"))
        .flat_map(str::split_whitespace)
}

/// `file` after its includes, each once, into `order`.
fn resolve(file: &'static str, order: &mut Vec<&'static str>, path: &mut Vec<&'static str>) {
    if order.contains(&file) {
        return;
    }
    assert!(!path.contains(&file), "include cycle: {path:?} -> {file}");
    path.push(file);
    for included in includes(file) {
        resolve(included, order, path);
    }
    path.pop();
    order.push(file);
}

/// The files of the script `file` with `extra` files after its includes
/// (a variant: Symfony's format of permits), in the order Redis runs them.
pub fn files(file: &'static str, extra: &[&'static str]) -> Vec<&'static str> {
    let mut order = vec!["need.lua"];
    for included in includes(file) {
        resolve(included, &mut order, &mut Vec::new());
    }
    for e in extra {
        resolve(e, &mut order, &mut Vec::new());
    }
    resolve(file, &mut order, &mut Vec::new());
    order
}

/// The source of the script `file` (see [`files`]): its includes, then its
/// own text as a function. On Redis 7 and later (and the servers that
/// speak as it) the function is simply run. Before 7.0 it runs under
/// `pcall`, so that errors read as on Redis 7: an error raised as `{err =
/// ...}` (need.lua's) is the reply (those servers' error handler fails on a
/// table, with a Lua trace instead of the message), and a command's error,
/// which they hand the script as `@user_script: <line>: -<error>` or as
/// `<error>` itself (6.0.16), is replied as `<error>` (`READONLY You can't
/// write against a read only replica.`). Any other error is raised again as
/// it was.
pub fn source(file: &'static str, extra: &[&'static str]) -> String {
    let mut parts: Vec<&str> = files(file, extra).into_iter().map(text).collect();
    let main = parts.pop().unwrap_or_default();
    let mut source: String = parts.concat();
    source.push_str("local function redislock_script()\n");
    source.push_str(main);
    source.push_str(
        "\nend\n\
         if redis.REDIS_VERSION_NUM then return redislock_script() end\n\
         local ok, reply = pcall(redislock_script)\n\
         if ok or (type(reply) == 'table' and reply.err) then return reply end\n\
         local said = type(reply) == 'string' and (string.match(reply, '^@user_script:%s*%d+:%s*%-(.+)$') or string.match(reply, '^%u[%u_]* .+$'))\n\
         if said then return {err = said} end\n\
         error(reply, 0)\n",
    );
    source
}

/// The flags of `file`'s function, from its header's `-- flags:` line: a
/// script that frees or only reads says `allow-oom`, so that it runs on a
/// server past its `maxmemory` as its `EVALSHA` does (a function without
/// it is refused there before it starts; one that adds keeps that).
fn flags(file: &str) -> Vec<&'static str> {
    text(file)
        .lines()
        .take_while(|l| l.starts_with("--"))
        .filter_map(|l| l.strip_prefix("-- flags:"))
        .flat_map(str::split_whitespace)
        .collect()
}

/// The function library of the script `file` (see [`files`]), named
/// `name`, with one function of that name. The included helpers are
/// defined once, when the library loads; each call sets what a script's
/// run starts with: its `KEYS` and `ARGV`, need.lua's record of the keys
/// it checked, and its table for what a run keeps (`need_run`).
fn library(file: &'static str, extra: &[&'static str], name: &str) -> String {
    let mut parts: Vec<&str> = files(file, extra).into_iter().map(text).collect();
    let main = parts.pop().unwrap_or_default();
    let flags: Vec<String> = flags(file).iter().map(|f| format!("'{f}'")).collect();
    format!(
        "#!lua name={name}\n\
         local KEYS, ARGV\n\
         {}\
         local function redislock_script()\n{main}\nend\n\
         redis.register_function{{function_name = '{name}', flags = {{{}}}, callback = function(keys, args)\n\
         \x20 KEYS, ARGV, need_checked, need_run = keys, args, {{}}, {{}}\n\
         \x20 return redislock_script()\n\
         end}}\n",
        parts.concat(),
        flags.join(", "),
    )
}

/// A script of the crate's: run as a function where the server has them,
/// else with `EVALSHA` (see the module comment).
pub struct Script {
    eval: redis::Script,
    /// The name of its library and of the library's one function:
    /// `redislock_` and the script's SHA-1, so that a changed script is
    /// another library.
    name: String,
    library: String,
}

impl Script {
    pub fn new(file: &'static str, extra: &[&'static str]) -> Script {
        let eval = redis::Script::new(&source(file, extra));
        let name = format!("redislock_{}", eval.get_hash());
        let library = library(file, extra, &name);
        Script {
            eval,
            name,
            library,
        }
    }

    pub fn prepare_invoke(&self) -> Invocation<'_> {
        Invocation {
            script: self,
            // Room for the most keys a script takes (a queue's 12) and
            // the arguments of most calls: a small allocation costs the
            // same whatever its size, and each growth is a copy.
            keys: Words::with_capacity(512),
            args: Words::with_capacity(512),
            types: &[],
        }
    }

    pub fn key<T: ToRedisArgs>(&self, key: T) -> Invocation<'_> {
        let mut call = self.prepare_invoke();
        call.key(key);
        call
    }

    /// Loads the script's library (`FUNCTION LOAD`); a library that is
    /// there already counts as loaded.
    fn load_library(&self, c: &mut Conn) -> RedisResult<Library> {
        let load = redis::cmd("FUNCTION")
            .arg("LOAD")
            .arg(&self.library)
            .query::<()>(c);
        match load {
            Err(e) if refused(&e, "function|load") => Ok(Library::Refused),
            Err(e) if not_here(&e) => Ok(Library::NotHere),
            // Another process loaded it meanwhile (on a cluster: on some of
            // the primaries).
            Err(e)
                if said(&e, "ERR", "Library '")
                    && e.detail().is_some_and(|d| d.ends_with("already exists")) =>
            {
                Ok(Library::Loaded)
            }
            load => load.map(|()| Library::Loaded),
        }
    }
}

/// What loading a library came to.
enum Library {
    Loaded,
    /// The ACL refuses this user `FUNCTION LOAD`: the connection sticks to
    /// `EVALSHA`.
    Refused,
    /// Not on this server now (see [`not_here`]): `EVALSHA` this time.
    NotHere,
}

/// Makes `scripts` ready to be called in a pipeline on `c`, which loads
/// nothing itself: their libraries where the server runs functions for us,
/// else the scripts for `EVALSHA`. Returns whether the pipeline is to call
/// them as functions ([`Invocation::pipelined`]).
pub fn ready(c: &mut Conn, scripts: &[&Script]) -> RedisResult<bool> {
    if c.functions()? && libraries_loaded(c, scripts)? {
        return Ok(true);
    }
    for script in scripts {
        script.eval.load(c)?;
    }
    Ok(false)
}

/// Loads the libraries of `scripts`; false at the first one that cannot be.
fn libraries_loaded(c: &mut Conn, scripts: &[&Script]) -> RedisResult<bool> {
    for script in scripts {
        match script.load_library(c)? {
            Library::Loaded => {}
            Library::Refused => {
                c.set_functions(false);
                return Ok(false);
            }
            Library::NotHere => return Ok(false),
        }
    }
    Ok(true)
}

/// Names the key of a command's own `WRONGTYPE` error (see
/// [`Invocation::types_checked`]).
static TYPES: std::sync::LazyLock<Script> = script!("types.lua");

/// The reply of a script on a hot path that says its common outcome with a
/// number alone (the server replies a number faster than a table), and
/// anything else as `T`.
pub enum NumberOr<T> {
    Number(i64),
    Other(T),
}

impl<T: FromRedisValue> FromRedisValue for NumberOr<T> {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        Ok(match v {
            Value::Int(n) => NumberOr::Number(n),
            v => NumberOr::Other(T::from_redis_value(v)?),
        })
    }
}

/// How a call's reply may be read straight from its bytes (see
/// [`Invocation::invoke_read`]); None: decoded as a `Value`.
type Reader<T> = Option<fn(&[u8]) -> Option<T>>;

/// A call of a script with its keys and arguments, each list framed into
/// one buffer as it comes (rather than a vector each), and copied whole
/// into the request.
pub struct Invocation<'a> {
    script: &'a Script,
    keys: Words,
    args: Words,
    /// The types redislock keeps in the keys, to name the key of a
    /// command's own `WRONGTYPE` error (see [`Invocation::types_checked`]).
    types: &'static [&'static str],
}

impl<'a> Invocation<'a> {
    /// The keys of a plain command (not a script) whose own `WRONGTYPE`
    /// error is to be named ([`naming`]): each key holds `types[i]` (see
    /// [`types_checked`]).
    pub fn keys_of(types: &'static [&'static str]) -> Invocation<'static> {
        let mut keys = TYPES.prepare_invoke();
        keys.types_checked(types);
        keys
    }

    pub fn key<T: ToRedisArgs>(&mut self, key: T) -> &mut Self {
        key.write_redis_args(&mut self.keys);
        self
    }

    pub fn arg<T: ToRedisArgs>(&mut self, arg: T) -> &mut Self {
        arg.write_redis_args(&mut self.args);
        self
    }

    /// When the call fails with a command's own `WRONGTYPE` error, which
    /// names no key, checks that each key holds the type redislock keeps
    /// there, `types[i]` for the key `i`, the list repeating (the keys of
    /// one lock, then of the next) (`scripts/lib/types.lua`): its error, naming
    /// the key of the wrong type (need.lua's), is the call's. The scripts
    /// check the types of their keys before they write, so both failed
    /// before any change; a check that finds nothing leaves the call's own
    /// error. The call itself costs nothing more.
    pub fn types_checked(&mut self, types: &'static [&'static str]) -> &mut Self {
        self.types = types;
        self
    }

    /// The call for a pipeline, after [`ready`]: as a function when it
    /// said so, else with `EVALSHA`.
    pub fn pipelined(&self, as_function: bool) -> Cmd {
        if as_function {
            self.command("FCALL", &self.script.name)
        } else {
            self.eval_command()
        }
    }

    fn eval_command(&self) -> Cmd {
        self.command("EVALSHA", self.script.eval.get_hash())
    }

    /// The call as a `Cmd` (a pipeline's, a cluster's), sized at once.
    fn command(&self, command: &str, name: &str) -> Cmd {
        let mut numkeys = itoa::Buffer::new();
        let head = [
            command.as_bytes(),
            name.as_bytes(),
            numkeys.format(self.keys.count()).as_bytes(),
        ];
        let words = head
            .into_iter()
            .chain(self.keys.iter())
            .chain(self.args.iter());
        resp::command_of(3 + self.keys.count() + self.args.count(), words)
    }

    /// The call packed as `command name numkeys keys... args...`: its head,
    /// then the two buffers as they are.
    fn pack(&self, command: &str, name: &str) -> Vec<u8> {
        let (keys, args) = (self.keys.framed(), self.args.framed());
        let mut packed = Vec::with_capacity(64 + name.len() + keys.len() + args.len());
        let mut digits = itoa::Buffer::new();
        let mut numkeys = itoa::Buffer::new();
        let count = 3 + self.keys.count() + self.args.count();
        resp::write_len(&mut packed, b'*', count, &mut digits);
        for word in [
            command.as_bytes(),
            name.as_bytes(),
            numkeys.format(self.keys.count()).as_bytes(),
        ] {
            resp::write_bulk(&mut packed, word, &mut digits);
        }
        packed.extend_from_slice(keys);
        packed.extend_from_slice(args);
        packed
    }

    /// Runs the script: as a function where this connection's server runs
    /// them for us, else with `EVALSHA`.
    pub fn invoke<T: FromRedisValue>(&self, c: &mut Conn) -> RedisResult<T> {
        self.invoke_with(c, None)
    }

    /// Like [`invoke`], with the reply from one server read by `read`
    /// straight from its bytes (see [`crate::wire::Wire::request_read`]):
    /// the same `T` as `FromRedisValue` makes, without a `Value` between.
    pub fn invoke_read<T: FromRedisValue>(
        &self,
        c: &mut Conn,
        read: fn(&[u8]) -> Option<T>,
    ) -> RedisResult<T> {
        self.invoke_with(c, Some(read))
    }

    fn invoke_with<T: FromRedisValue>(&self, c: &mut Conn, read: Reader<T>) -> RedisResult<T> {
        self.run(c, read).map_err(|e| self.naming(c, e))
    }

    /// The error `e` of a call with this call's keys, named: when it is a
    /// command's own `WRONGTYPE` error, which names no key, checks the
    /// keys' types (see [`types_checked`]) and gives that check's error
    /// when it names a key; else `e` as it is.
    pub fn naming(&self, c: &mut Conn, e: RedisError) -> RedisError {
        if self.types.is_empty() || !said(&e, "WRONGTYPE", "Operation against a key") {
            return e;
        }
        let mut check = TYPES.prepare_invoke();
        check.keys = self.keys.clone();
        for i in 0..self.keys.count() {
            check.arg(self.types[i % self.types.len()]);
        }
        match check.run::<Value>(c, None) {
            Err(named) if said(&named, "WRONGTYPE", "key ") => named,
            _ => e,
        }
    }

    fn run<T: FromRedisValue>(&self, c: &mut Conn, read: Reader<T>) -> RedisResult<T> {
        if c.functions()?
            && let Some(reply) = self.function(c, read)?
        {
            return Ok(reply);
        }
        let hash = self.script.eval.get_hash();
        match self.send(c, "EVALSHA", hash, read) {
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                self.script.eval.load(c)?;
                self.send(c, "EVALSHA", hash, read)
            }
            reply => reply,
        }
    }

    /// Sends the call as `command name numkeys keys... args...` and reads
    /// its reply. To one server, packed straight from the two buffers; a
    /// cluster routes a `Cmd` by its keys.
    fn send<T: FromRedisValue>(
        &self,
        c: &mut Conn,
        command: &str,
        name: &str,
        read: Reader<T>,
    ) -> RedisResult<T> {
        let reply = match (c, read) {
            (Conn::Single(wire), Some(read)) => {
                match wire.request_read(&self.pack(command, name), read)? {
                    Ok(value) => return Ok(value),
                    Err(reply) => reply,
                }
            }
            (Conn::Single(wire), None) => wire.req_packed_command(&self.pack(command, name))?,
            (cluster, _) => cluster.req_command(&self.command(command, name))?,
        };
        Ok(redis::from_redis_value(reply.extract_error()?)?)
    }

    /// Runs the script as a function, loading its library when the server
    /// does not have it (a first call, a `FUNCTION FLUSH`, a new server).
    /// None when the ACL refuses this user `FCALL` or `FUNCTION LOAD` (the
    /// connection then sticks to `EVALSHA`); or, for
    /// this call only, when the server cannot run it as a function here
    /// (see [`not_here`]).
    fn function<T: FromRedisValue>(&self, c: &mut Conn, read: Reader<T>) -> RedisResult<Option<T>> {
        let mut loaded = false;
        loop {
            match self.send(c, "FCALL", &self.script.name, read) {
                // Loaded and still not found: a cluster node the load did
                // not reach (it joined meanwhile). EVALSHA, this once.
                Err(e) if loaded && said(&e, "ERR", "Function not found") => return Ok(None),
                Err(e) if said(&e, "ERR", "Function not found") => {
                    match self.script.load_library(c)? {
                        Library::Loaded => loaded = true,
                        Library::Refused => break,
                        Library::NotHere => return Ok(None),
                    }
                }
                Err(e) if refused(&e, "fcall") => break,
                Err(e) if not_here(&e) => return Ok(None),
                reply => return reply.map(Some),
            }
        }
        c.set_functions(false);
        Ok(None)
    }
}

/// Whether the server refused a function call or a library's load where
/// the script may run with `EVALSHA`; nothing ran. Past maxmemory a library
/// cannot be loaded, and a script that frees may run. A read-only replica
/// refuses every function not flagged `no-writes` and every load, where a
/// script that only reads runs (and one that writes fails as before).
fn not_here(e: &RedisError) -> bool {
    e.code() == Some("OOM") || e.kind() == ErrorKind::Server(ServerErrorKind::ReadOnly)
}

/// Whether `e` is the error reply `code` whose text starts with `text`.
fn said(e: &RedisError, code: &str, text: &str) -> bool {
    e.code() == Some(code) && e.detail().is_some_and(|d| d.starts_with(text))
}

/// Whether the ACL refused this user `command` itself (not a command a
/// function called, which may follow writes).
fn refused(e: &RedisError, command: &str) -> bool {
    e.code() == Some("NOPERM")
        && e.detail()
            .is_some_and(|d| d.contains(&format!("'{command}'")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A task's stored tags hold its group and trace behind control bytes
    /// ('\29', '\30'): queue_tags.lua is their one reader in Lua, as
    /// `queue::Tags` is in Rust, so that a part added later is skipped the
    /// same way everywhere.
    #[test]
    fn one_script_reads_the_parts_of_stored_tags() {
        for (name, text) in FILES {
            let code = text.lines().filter(|l| !l.trim_start().starts_with("--"));
            let readers: Vec<&str> = code
                .filter(|l| l.contains("\\29") || l.contains("\\30"))
                .collect();
            if *name == "queue_tags.lua" {
                assert_eq!(readers.len(), 2, "{name}: its two readers");
            } else {
                assert_eq!(readers, Vec::<&str>::new(), "{name}");
            }
        }
    }

    #[test]
    fn every_script_resolves_to_its_includes_in_order() {
        for (name, _) in FILES {
            let files = files(name, &[]);
            assert_eq!(files.first(), Some(&"need.lua"), "{name}");
            assert_eq!(files.last(), Some(name), "{name}");
            for (i, f) in files.iter().enumerate() {
                assert!(!files[i + 1..].contains(f), "{name}: {f} twice");
                for included in includes(f) {
                    let at = files.iter().position(|x| *x == included);
                    assert!(at.is_some_and(|at| at < i), "{name}: {included} before {f}");
                }
            }
        }
        assert_eq!(
            files("queue_ack.lua", &[]),
            [
                "need.lua",
                "line.lua",
                "queue_line.lua",
                "queue_count.lua",
                "queue_add.lua",
                "queue_record.lua",
                "queue_tags.lua",
                "queue_group_count.lua",
                "flow_end.lua",
                "queue_task.lua",
                "queue_ack.lua"
            ]
        );
        assert_eq!(
            files("permits_acquire.lua", &["permits_symfony.lua"]),
            [
                "need.lua",
                "line.lua",
                "lock_line.lua",
                "permits_line.lua",
                "permits_symfony.lua",
                "permits_acquire.lua"
            ]
        );
    }

    /// A script's flags are Redis' own, and its library registers them.
    #[test]
    fn flags_are_redis_function_flags_and_reach_the_library() {
        for (name, _) in FILES {
            for flag in flags(name) {
                assert!(["allow-oom", "no-writes"].contains(&flag), "{name}: {flag}");
            }
        }
        assert_eq!(flags("lock_release.lua"), ["allow-oom"]);
        assert!(flags("lock_acquire.lua").is_empty());
        let release = library("lock_release.lua", &[], "redislock_x");
        assert!(release.starts_with("#!lua name=redislock_x\n"));
        assert!(release.contains("function_name = 'redislock_x', flags = {'allow-oom'}"));
        let acquire = library("lock_acquire.lua", &[], "redislock_y");
        assert!(acquire.contains("function_name = 'redislock_y', flags = {}"));
    }

    /// Every function a script calls that is defined in one of the
    /// scripts is defined in what it includes (or itself).
    #[test]
    fn a_script_includes_every_shared_function_it_calls() {
        let defines = |file: &str| -> Vec<String> {
            text(file)
                .lines()
                .filter_map(|l| {
                    let rest = l
                        .trim_start()
                        .strip_prefix("local ")
                        .unwrap_or(l.trim_start());
                    let name = rest.strip_prefix("function ")?;
                    Some(name.split('(').next()?.trim().to_owned())
                })
                .collect()
        };
        let all: Vec<(String, &str)> = FILES
            .iter()
            .flat_map(|(f, _)| defines(f).into_iter().map(move |d| (d, *f)))
            .collect();
        for (name, body) in FILES {
            let reach: Vec<String> = files(name, &[]).iter().flat_map(|f| defines(f)).collect();
            for (function, home) in &all {
                let called = body
                    .match_indices(&format!("{function}("))
                    .any(|(i, _)| !body[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_'));
                assert!(
                    !called || reach.contains(function),
                    "{name} calls {function} (in {home}) without including it"
                );
            }
        }
    }
}
