//! The exception hierarchy: `RedisLock\RedisLockException` (extends
//! `\RuntimeException`) and its children. They are plain PHP classes with
//! Exception's own constructor, so PHP code can `new`, throw and extend them.

use std::sync::atomic::{AtomicPtr, Ordering};

use ext_php_rs::args::ArgInfoTables;
use ext_php_rs::builders::ClassBuilder;
use ext_php_rs::exception::PhpException;
use ext_php_rs::ffi::{ext_php_rs_compiler_globals, zend_hash_str_find_ptr_lc};
use ext_php_rs::zend::{ClassEntry, ce};

use crate::conn::Error;

/// The extension's exception classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// The root: every error of the extension.
    Root,
    /// Redis unreachable, timed out, connection reset.
    Connection,
    /// Redis answered with an error.
    Server,
    /// A lock was lost while held: its lease ran out, its key was deleted or
    /// taken, its renewal failed, or its maximum hold time was reached.
    LockLost,
    /// Release (or extend) of a lock the object does not hold.
    NotHeld,
    /// `synchronized()` could not take the lock in time.
    NotAcquired,
    /// An enqueue would pass the queue's maximum length.
    QueueFull,
}

const CLASSES: [Class; 7] = [
    Class::Root,
    Class::Connection,
    Class::Server,
    Class::LockLost,
    Class::NotHeld,
    Class::NotAcquired,
    Class::QueueFull,
];

impl Class {
    pub const fn name(self) -> &'static str {
        match self {
            Class::Root => "RedisLock\\RedisLockException",
            Class::Connection => "RedisLock\\ConnectionException",
            Class::Server => "RedisLock\\ServerException",
            Class::LockLost => "RedisLock\\LockLostException",
            Class::NotHeld => "RedisLock\\NotHeldException",
            Class::NotAcquired => "RedisLock\\NotAcquiredException",
            Class::QueueFull => "RedisLock\\QueueFullException",
        }
    }

    fn slot(self) -> &'static AtomicPtr<ClassEntry> {
        &SLOTS[self as usize]
    }

    /// The registration callback that records this kind's class entry.
    fn store(self) -> fn(&'static mut ClassEntry, ArgInfoTables) {
        match self {
            Class::Root => store::<0>,
            Class::Connection => store::<1>,
            Class::Server => store::<2>,
            Class::LockLost => store::<3>,
            Class::NotHeld => store::<4>,
            Class::NotAcquired => store::<5>,
            Class::QueueFull => store::<6>,
        }
    }
}

static SLOTS: [AtomicPtr<ClassEntry>; CLASSES.len()] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; CLASSES.len()];

fn store<const SLOT: usize>(class: &'static mut ClassEntry, _: ArgInfoTables) {
    SLOTS[SLOT].store(class, Ordering::Release);
}

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

fn loaded(kind: Class) -> Option<&'static ClassEntry> {
    // SAFETY: only ever set to a registered class entry, which lives for the process.
    unsafe { kind.slot().load(Ordering::Acquire).as_ref() }
}

fn root() -> &'static ClassEntry {
    loaded(Class::Root).unwrap_or_else(runtime_exception)
}

/// Registers the classes; called once from module startup.
pub fn register() -> ext_php_rs::error::Result<()> {
    for kind in CLASSES {
        let builder = ClassBuilder::new(kind.name());
        let builder = if kind == Class::Root {
            builder.extends((runtime_exception, "\\RuntimeException"))
        } else {
            builder.extends((root, Class::Root.name()))
        };
        builder.registration(kind.store()).register()?;
    }
    Ok(())
}

/// An exception of the given class.
pub fn exception(kind: Class, message: impl Into<String>) -> PhpException {
    let class = loaded(kind).unwrap_or_else(root);
    PhpException::new(super::value::printable(message.into()), 0, class)
}

/// The PHP exception for an engine error.
pub fn to_php(err: Error) -> PhpException {
    let kind = match err {
        Error::Connection { .. } => Class::Connection,
        Error::Server { .. } | Error::Reply { .. } => Class::Server,
    };
    exception(kind, format!("redislock: {err}"))
}

/// The `Error` of `new` on a class whose objects a factory makes: what to
/// call instead.
pub fn made_by(class: &str, how: &str) -> PhpException {
    PhpException::new(
        format!("Cannot create {class} with new: {how}"),
        0,
        ce::error(),
    )
}
