//! The exception hierarchy: `RedisLock\RedisLockException` (extends
//! `\RuntimeException`) and its children. They are plain PHP classes with
//! Exception's own constructor, so PHP code can `new`, throw and extend them.

use std::sync::atomic::{AtomicPtr, Ordering};

use ext_php_rs::builders::ClassBuilder;
use ext_php_rs::exception::PhpException;
use ext_php_rs::ffi::{ext_php_rs_compiler_globals, zend_hash_str_find_ptr_lc};
use ext_php_rs::zend::{ClassEntry, ce};

use crate::conn::Error;

pub const ROOT_NAME: &str = "RedisLock\\RedisLockException";
pub const CONNECTION_NAME: &str = "RedisLock\\ConnectionException";
pub const SERVER_NAME: &str = "RedisLock\\ServerException";

static ROOT: AtomicPtr<ClassEntry> = AtomicPtr::new(std::ptr::null_mut());
static CONNECTION: AtomicPtr<ClassEntry> = AtomicPtr::new(std::ptr::null_mut());
static SERVER: AtomicPtr<ClassEntry> = AtomicPtr::new(std::ptr::null_mut());

/// `\RuntimeException`, looked up in the compiler's class table because the
/// executor's is not set up during module startup.
fn runtime_exception() -> &'static ClassEntry {
    let name = "runtimeexception";
    // SAFETY: the compiler globals exist from engine startup on.
    let table = unsafe { ext_php_rs_compiler_globals().as_ref() }
        .map_or(std::ptr::null_mut(), |cg| cg.class_table);
    if !table.is_null() {
        // SAFETY: the engine's live class table; the name is valid for its length.
        let found = unsafe { zend_hash_str_find_ptr_lc(table, name.as_ptr().cast(), name.len()) };
        // SAFETY: class table entries are class entries that live for the process.
        if let Some(class) = unsafe { found.cast::<ClassEntry>().as_ref() } {
            return class;
        }
    }
    ce::exception()
}

fn loaded(slot: &AtomicPtr<ClassEntry>) -> Option<&'static ClassEntry> {
    // SAFETY: only ever set to a registered class entry, which lives for the process.
    unsafe { slot.load(Ordering::Acquire).as_ref() }
}

fn root() -> &'static ClassEntry {
    loaded(&ROOT).unwrap_or_else(runtime_exception)
}

/// Registers the classes; called once from module startup.
pub fn register() -> ext_php_rs::error::Result<()> {
    ClassBuilder::new(ROOT_NAME)
        .extends((runtime_exception, "\\RuntimeException"))
        .registration(|class, _| ROOT.store(class, Ordering::Release))
        .register()?;
    ClassBuilder::new(CONNECTION_NAME)
        .extends((root, ROOT_NAME))
        .registration(|class, _| CONNECTION.store(class, Ordering::Release))
        .register()?;
    ClassBuilder::new(SERVER_NAME)
        .extends((root, ROOT_NAME))
        .registration(|class, _| SERVER.store(class, Ordering::Release))
        .register()?;
    Ok(())
}

/// The PHP exception for an engine error.
pub fn to_php(err: Error) -> PhpException {
    let slot = match err {
        Error::Connection { .. } => &CONNECTION,
        Error::Server { .. } => &SERVER,
    };
    let class = loaded(slot).unwrap_or_else(root);
    PhpException::new(
        super::value::printable(format!("redislock: {err}")),
        0,
        class,
    )
}
