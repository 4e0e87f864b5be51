//! The `redislock.*` INI entries. PHP tells us each change (php.ini at
//! startup, `ini_set()`, the reset at request end) through `on_modify`; the
//! values are validated there, so a bad one is refused and never used.

use std::cell::RefCell;
use std::ffi::{CStr, c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ext_php_rs::error::php_error;
use ext_php_rs::ffi::{zend_ini_entry, zend_string};
use ext_php_rs::flags::ErrorType;
use ext_php_rs::flags::IniEntryPermission;
use ext_php_rs::types::ZendStr;
use ext_php_rs::zend::{IniEntryDef, IniEntryDefs};

use crate::config::{self, Config, Defaults};

pub const DSN: &str = "redislock.default_dsn";
pub const CONNECT_TIMEOUT: &str = "redislock.connect_timeout";
pub const READ_TIMEOUT: &str = "redislock.read_timeout";
pub const PREFIX: &str = "redislock.prefix";
pub const RELEASE_AT_REQUEST_END: &str = "redislock.release_at_request_end";
pub const REDLOCK_NODES: &str = "redislock.redlock_nodes";
pub const MAX_REPLY_SIZE: &str = "redislock.max_reply_size";
pub const CONNECTIONS: &str = "redislock.connections";
pub const LOCK_SERVICE_EXPIRE: &str = "redislock.lock_service_expire";
pub const REDIS_LOCK_TIMEOUT: &str = "redislock.redis_lock_timeout";
pub const REDIS_LOCK_EXPIRE: &str = "redislock.redis_lock_expire";
pub const PARTITIONS: &str = "redislock.partitions";

const fn entry(name: &'static CStr, default: &'static CStr) -> IniEntryDef {
    let mut def = IniEntryDef::new(name, default, IniEntryPermission::All);
    def.on_modify = Some(on_modify);
    def
}

static ENTRIES: IniEntryDefs<13> = IniEntryDefs::new([
    entry(c"redislock.default_dsn", c"redis://127.0.0.1:6379"),
    entry(c"redislock.connect_timeout", c"1"),
    entry(c"redislock.read_timeout", c"2"),
    entry(c"redislock.prefix", c""),
    entry(c"redislock.release_at_request_end", c"1"),
    entry(c"redislock.redlock_nodes", c""),
    entry(c"redislock.max_reply_size", c"512M"),
    entry(c"redislock.connections", c""),
    entry(c"redislock.lock_service_expire", c"86400"),
    entry(c"redislock.redis_lock_timeout", c"0"),
    entry(c"redislock.redis_lock_expire", c"15"),
    entry(c"redislock.partitions", c""),
    IniEntryDef::end(),
]);

/// The effective settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub defaults: Defaults,
    pub release_at_request_end: bool,
    /// The DSNs of `RedisLock\Redlock`'s nodes when its options name none.
    pub redlock_nodes: Vec<String>,
    /// Connection names (what the seeds' `RedisFactory::get($name)` took)
    /// and their DSNs.
    pub connections: Vec<(String, String)>,
    /// The seed classes' defaults that copies in the wild change.
    pub seed: SeedDefaults,
    /// Queue names and the partitions each is kept in when the code that
    /// opens it does not say (the drop-in `RedisQueue`, the adapters).
    pub partitions: Vec<(Vec<u8>, u64)>,
    /// Why values from configuration were refused (the last few): a warning
    /// said it at startup, where PHP shows one (the CLI), and `phpinfo()`
    /// says it where PHP shows none (PHP-FPM's master).
    pub refused: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            defaults: Defaults::default(),
            release_at_request_end: true,
            redlock_nodes: Vec::new(),
            connections: Vec::new(),
            seed: SeedDefaults::default(),
            partitions: Vec::new(),
            refused: Vec::new(),
        }
    }
}

/// The defaults of the seed classes' parameters, in seconds, when a call
/// omits them: the articles' values unless php.ini says otherwise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeedDefaults {
    /// `Lock_Service::addLock()`'s `$intExpireTime`.
    pub lock_service_expire: f64,
    /// `RedisLock::lock()`'s `$timeout`.
    pub redis_lock_timeout: f64,
    /// `RedisLock::lock()`'s `$expire`.
    pub redis_lock_expire: f64,
}

impl Default for SeedDefaults {
    fn default() -> Self {
        Self {
            lock_service_expire: 86400.0,
            redis_lock_timeout: 0.0,
            redis_lock_expire: 15.0,
        }
    }
}

/// How many partitions `redislock.partitions` keeps the queue `name` in
/// (1 when it does not name it).
pub fn partitions_of(name: &[u8]) -> u64 {
    let guard = SETTINGS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    guard
        .as_ref()
        .and_then(|s| s.partitions.iter().find(|(n, _)| n == name))
        .map_or(1, |(_, count)| *count)
}

/// The seed classes' defaults now in force.
pub fn seed_defaults() -> SeedDefaults {
    let guard = SETTINGS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    guard.as_ref().map(|s| s.seed).unwrap_or_default()
}

/// The DSN a connection name stands for, or why there is none. "default"
/// stands for `redislock.default_dsn` unless it is listed, and so does any
/// name when `fallback`.
fn connection(s: &Settings, name: &str, fallback: bool) -> Result<String, String> {
    if let Some((_, dsn)) = s.connections.iter().find(|(n, _)| n == name) {
        return Ok(dsn.clone());
    }
    if fallback || name == "default" {
        return Ok(s.defaults.dsn.clone());
    }
    let known: Vec<&str> = s.connections.iter().map(|(n, _)| n.as_str()).collect();
    Err(format!(
        "no connection named {}: a string without '://' names a connection, which \
         {CONNECTIONS} maps to a DSN (e.g. {CONNECTIONS}=\"{}=redis://127.0.0.1:6379\"){}",
        config::shown(name),
        if name.len() <= 64 && name.bytes().all(name_byte) {
            name
        } else {
            "lock"
        },
        if known.is_empty() {
            String::new()
        } else {
            format!("; it names {}", known.join(", "))
        }
    ))
}

fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// A number of seconds in `[min, MAX_SECONDS]` (`min` itself only when
/// `zero_ok`), for a seed default.
fn seed_seconds(name: &str, value: &str, zero_ok: bool) -> Result<f64, String> {
    let max = super::MAX_SECONDS;
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v <= max && (*v > 0.0 || (zero_ok && *v == 0.0)))
        .ok_or_else(|| {
            format!(
                "{name} must be a number of seconds {} {max}, got {}",
                if zero_ok {
                    "from 0 to"
                } else {
                    "above 0, up to"
                },
                config::shown(value)
            )
        })
}

static SETTINGS: Mutex<Option<Settings>> = Mutex::new(None);
/// Bumped on every change, so cached configs know they are stale.
static GENERATION: AtomicU64 = AtomicU64::new(0);

pub fn register(module_number: i32) {
    IniEntryDef::register(ENTRIES.as_slice(), module_number);
}

pub fn settings() -> Settings {
    let guard = SETTINGS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    guard.clone().unwrap_or_default()
}

fn parse_bool(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "on" | "yes" | "true" => Some(true),
        "0" | "off" | "no" | "false" | "none" | "" => Some(false),
        _ => None,
    }
}

/// Applies one INI change to `s`, or says why it is refused.
fn apply(s: &mut Settings, name: &str, value: &str, raw: &[u8]) -> Result<(), String> {
    match name {
        DSN => {
            Config::from_dsn(value, &s.defaults).map_err(|e| e.to_string())?;
            s.defaults.dsn = value.to_owned();
        }
        CONNECT_TIMEOUT => {
            s.defaults.connect_timeout = config::parse_seconds(name, value)
                .map_err(|e| e.to_string())?
                .as_secs_f64();
        }
        READ_TIMEOUT => {
            s.defaults.read_timeout = config::parse_seconds(name, value)
                .map_err(|e| e.to_string())?
                .as_secs_f64();
        }
        MAX_REPLY_SIZE => {
            s.defaults.max_reply = config::parse_size(name, value).map_err(|e| e.to_string())?;
        }
        // Bytes as they are: "\xff:" and "\xfe:" are two namespaces.
        PREFIX => s.defaults.prefix = raw.to_vec(),
        RELEASE_AT_REQUEST_END => {
            s.release_at_request_end = parse_bool(value)
                .ok_or_else(|| format!("{name} must be on or off, got {}", config::shown(value)))?;
        }
        REDLOCK_NODES => {
            let nodes: Vec<String> = value.split_whitespace().map(str::to_owned).collect();
            for dsn in &nodes {
                Config::from_dsn(dsn, &s.defaults).map_err(|e| e.to_string())?;
            }
            s.redlock_nodes = nodes;
        }
        CONNECTIONS => {
            let mut connections: Vec<(String, String)> = Vec::new();
            for pair in value.split_whitespace() {
                let (name, dsn) = pair.split_once('=').unwrap_or((pair, ""));
                if name.is_empty() || !name.bytes().all(name_byte) || dsn.is_empty() {
                    return Err(format!(
                        "{CONNECTIONS} holds name=DSN pairs separated by spaces (names of \
                         letters, digits, '_', '-' and '.'), got {}",
                        config::shown(pair)
                    ));
                }
                Config::from_dsn(dsn, &s.defaults).map_err(|e| e.to_string())?;
                connections.retain(|(n, _)| n != name);
                connections.push((name.to_owned(), dsn.to_owned()));
            }
            s.connections = connections;
        }
        PARTITIONS => {
            let mut partitions: Vec<(Vec<u8>, u64)> = Vec::new();
            for pair in raw.split(u8::is_ascii_whitespace).filter(|p| !p.is_empty()) {
                let at = pair.iter().rposition(|&b| b == b'=');
                let (queue, count) =
                    at.map_or((pair, &b""[..]), |at| (&pair[..at], &pair[at + 1..]));
                let count = std::str::from_utf8(count)
                    .ok()
                    .and_then(|c| c.parse::<u64>().ok())
                    .filter(|c| (1..=crate::queue::MAX_PARTITIONS as u64).contains(c));
                let Some(count) = count.filter(|_| !queue.is_empty()) else {
                    return Err(format!(
                        "{PARTITIONS} holds queue=count pairs separated by spaces (a count of 1 to {}), got {}",
                        crate::queue::MAX_PARTITIONS,
                        config::shown(&String::from_utf8_lossy(pair))
                    ));
                };
                partitions.retain(|(q, _)| q != queue);
                partitions.push((queue.to_vec(), count));
            }
            s.partitions = partitions;
        }
        LOCK_SERVICE_EXPIRE => s.seed.lock_service_expire = seed_seconds(name, value, false)?,
        REDIS_LOCK_TIMEOUT => s.seed.redis_lock_timeout = seed_seconds(name, value, true)?,
        REDIS_LOCK_EXPIRE => s.seed.redis_lock_expire = seed_seconds(name, value, false)?,
        _ => return Err(format!("unknown setting {name}")),
    }
    Ok(())
}

fn bytes(s: *mut zend_string) -> Vec<u8> {
    // SAFETY: the engine passes valid zend_strings (or null) to on_modify.
    match unsafe { s.cast::<ZendStr>().as_ref() } {
        Some(s) => s.as_bytes().to_vec(),
        None => Vec::new(),
    }
}

fn text(s: *mut zend_string) -> String {
    String::from_utf8_lossy(&bytes(s)).into_owned()
}

/// The stages at which a value comes from configuration (php.ini, `-d`, a
/// PHP-FPM pool's `php_value`, `.htaccess`), not from code: a refused one
/// is said in a warning, as PHP says a bad `date.timezone`, since nobody
/// checks a return value there. (`ini_set()` returns false instead.)
const CONFIGURED: c_int =
    ZEND_INI_STAGE_STARTUP | ZEND_INI_STAGE_ACTIVATE | ZEND_INI_STAGE_HTACCESS;
const ZEND_INI_STAGE_STARTUP: c_int = 1 << 0;
const ZEND_INI_STAGE_ACTIVATE: c_int = 1 << 2;
const ZEND_INI_STAGE_HTACCESS: c_int = 1 << 5;

unsafe extern "C" fn on_modify(
    entry: *mut zend_ini_entry,
    new_value: *mut zend_string,
    _: *mut c_void,
    _: *mut c_void,
    _: *mut c_void,
    stage: c_int,
) -> c_int {
    const SUCCESS: c_int = 0;
    const FAILURE: c_int = -1;
    let outcome = std::panic::catch_unwind(|| -> Result<(), Option<String>> {
        // SAFETY: the engine passes the entry being modified.
        let name = match unsafe { entry.as_ref() } {
            Some(entry) => text(entry.name),
            None => return Err(None),
        };
        let raw = bytes(new_value);
        let value = String::from_utf8_lossy(&raw).into_owned();
        let mut guard = SETTINGS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut next = guard.clone().unwrap_or_default();
        if let Err(why) = apply(&mut next, &name, &value, &raw) {
            let why = if why.contains(&name) {
                format!("{why}; the setting is ignored")
            } else {
                format!("{name}: {why}; the setting is ignored")
            };
            if stage & CONFIGURED != 0 {
                let refused = &mut guard.get_or_insert_with(Settings::default).refused;
                if !refused.contains(&why) {
                    if refused.len() >= 10 {
                        refused.remove(0);
                    }
                    refused.push(why.clone());
                }
            }
            return Err(Some(why));
        }
        *guard = Some(next);
        GENERATION.fetch_add(1, Ordering::Release);
        Ok(())
    });
    match outcome {
        Ok(Ok(())) => SUCCESS,
        Ok(Err(why)) => {
            // Said once the settings' lock is released; the messages show
            // no password (a DSN's is masked).
            if let Some(why) = why
                && stage & CONFIGURED != 0
            {
                php_error(&ErrorType::Warning, &why);
            }
            FAILURE
        }
        Err(_) => FAILURE,
    }
}

/// The configs built from the INI settings of one generation, by
/// connection name (`None`: the default server).
type Built = (u64, Vec<(Option<String>, bool, Arc<Config>)>);

thread_local! {
    static BUILT: RefCell<Built> = const { RefCell::new((u64::MAX, Vec::new())) };
}

/// The config the INI settings describe, rebuilt only after they change.
pub fn default_config() -> Result<Arc<Config>, String> {
    named_config(None, true)
}

/// The config of connection `name` in `redislock.connections` (`None`:
/// the default server; a name not listed is an error unless `fallback`),
/// rebuilt only after the settings change.
pub fn named_config(name: Option<&str>, fallback: bool) -> Result<Arc<Config>, String> {
    let generation = GENERATION.load(Ordering::Acquire);
    let cached = BUILT.with(|b| {
        let b = b.borrow();
        if b.0 != generation {
            return None;
        }
        b.1.iter()
            .find(|(n, f, _)| n.as_deref() == name && *f == fallback)
            .map(|(_, _, config)| config.clone())
    });
    if let Some(config) = cached {
        return Ok(config);
    }
    let s = settings();
    let dsn = match name {
        Some(name) => connection(&s, name, fallback)?,
        None => s.defaults.dsn.clone(),
    };
    let config = Arc::new(Config::from_dsn(&dsn, &s.defaults).map_err(|e| e.to_string())?);
    BUILT.with(|b| {
        let mut b = b.borrow_mut();
        if b.0 != generation {
            *b = (generation, Vec::new());
        }
        // Bounded: a process that names many connections rebuilds them.
        if b.1.len() >= 16 {
            b.1.clear();
        }
        b.1.push((name.map(str::to_owned), fallback, config.clone()));
    });
    Ok(config)
}
