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

const fn entry(name: &'static CStr, default: &'static CStr) -> IniEntryDef {
    let mut def = IniEntryDef::new(name, default, IniEntryPermission::All);
    def.on_modify = Some(on_modify);
    def
}

static ENTRIES: IniEntryDefs<8> = IniEntryDefs::new([
    entry(c"redislock.default_dsn", c"redis://127.0.0.1:6379"),
    entry(c"redislock.connect_timeout", c"1"),
    entry(c"redislock.read_timeout", c"2"),
    entry(c"redislock.prefix", c""),
    entry(c"redislock.release_at_request_end", c"1"),
    entry(c"redislock.redlock_nodes", c""),
    entry(c"redislock.max_reply_size", c"512M"),
    IniEntryDef::end(),
]);

/// The effective settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub defaults: Defaults,
    pub release_at_request_end: bool,
    /// The DSNs of `RedisLock\Redlock`'s nodes when its options name none.
    pub redlock_nodes: Vec<String>,
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
            refused: Vec::new(),
        }
    }
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

thread_local! {
    static DEFAULT_CONFIG: RefCell<Option<(u64, Arc<Config>)>> = const { RefCell::new(None) };
}

/// The config the INI settings describe, rebuilt only after they change.
pub fn default_config() -> Result<Arc<Config>, String> {
    let generation = GENERATION.load(Ordering::Acquire);
    if let Some(config) = DEFAULT_CONFIG.with(|c| {
        c.borrow()
            .as_ref()
            .filter(|(g, _)| *g == generation)
            .map(|(_, config)| config.clone())
    }) {
        return Ok(config);
    }
    let defaults = settings().defaults;
    let config = Arc::new(Config::from_dsn(&defaults.dsn, &defaults).map_err(|e| e.to_string())?);
    DEFAULT_CONFIG.with(|c| *c.borrow_mut() = Some((generation, config.clone())));
    Ok(config)
}
