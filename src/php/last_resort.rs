//! The seed classes' global names (`Lock_Service`, `RedisLock`,
//! `RedisQueue`) are a last resort: an app that declares or autoloads a
//! class of one of these names gets its own, and only a name that nothing
//! else provides becomes the extension's class. Hosts run apps whose own
//! `RedisLock` has another API; with the names taken at startup they died
//! with "Cannot declare class RedisLock" before running a line.
//!
//! So, once a process (at its first request, after the seed methods are
//! untyped), the three classes leave the class table; the engine's autoload
//! entry point is wrapped, and when the app's autoloaders (SPL's) find
//! nothing for one of the names, the extension's class is entered under it
//! for the rest of the request, as `class_alias()` would: the entry is
//! discarded at request end like every class a request adds. The class
//! keeps its name (`get_class()` says `RedisLock`).
//!
//! Each is also there, always, as `RedisLock\DropIn\<name>` (entered the
//! same way when first used): so that an app whose own class holds the
//! global name can still reach the extension's (`redislock doctor --fix`
//! rewrites a same-name copy to call it).

use std::ffi::c_char;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use ext_php_rs::ffi::{
    HashTable, ext_php_rs_compiler_globals, ext_php_rs_executor_globals, zend_class_entry,
    zend_hash_str_del, zend_hash_str_find_ptr_lc, zend_string,
};
use ext_php_rs::types::ZendStr;

use super::untyped::SEED_CLASSES;

type Autoload = unsafe extern "C" fn(*mut zend_string, *mut zend_string) -> *mut zend_class_entry;

unsafe extern "C" {
    /// The engine's class autoloading entry point (PHP >= 8.0); SPL sets it
    /// to run the autoloaders of `spl_autoload_register()`.
    static mut zend_autoload: Option<Autoload>;
    /// Rebuilds a hash table's index, moving its entries down over the
    /// holes deleted ones left (ZEND_FASTCALL is the C convention on x86-64
    /// and arm64).
    fn zend_hash_rehash(ht: *mut HashTable);
    fn zend_register_class_alias_ex(
        name: *const c_char,
        name_len: usize,
        ce: *mut zend_class_entry,
        persistent: bool,
    ) -> i32;
}

/// The namespace where the seed classes are whatever the app declares.
pub const DROP_IN: &str = "RedisLock\\DropIn\\";

/// The seed classes, in `SEED_CLASSES`' order, once taken out of the table.
static CLASSES: [AtomicPtr<zend_class_entry>; 3] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; 3];
/// The entry point the wrapper calls first (0: none).
static PREVIOUS: AtomicUsize = AtomicUsize::new(0);

/// Takes the seed classes out of the class table and wraps the autoload
/// entry point; once a process, at request start (SPL has set its entry
/// point by then, and nothing runs concurrently).
///
/// The table is left without holes: the engine ends a request by dropping
/// the entries from the count of persistent ones on, and a hole below that
/// count would move every later entry down one place at the table's next
/// growth, leaving a request's last class behind, freed (a corrupted heap
/// at module shutdown). So the entries are moved down now, and the count
/// of this request follows.
pub fn yield_seed_names() {
    // SAFETY: the compiler and executor globals exist from engine startup on.
    let (table, eg) = unsafe {
        (
            ext_php_rs_compiler_globals()
                .as_ref()
                .map_or(std::ptr::null_mut(), |cg| cg.class_table),
            ext_php_rs_executor_globals(),
        )
    };
    if table.is_null() || eg.is_null() {
        return;
    }
    let mut removed = 0;
    for (slot, name) in CLASSES.iter().zip(SEED_CLASSES) {
        let lc = name.to_ascii_lowercase();
        // SAFETY: the engine's live class table; the name is valid for its
        // length. The entry is removed without its destructor (which would
        // free the class): the class lives on, outside the table, for the
        // process.
        unsafe {
            let found = zend_hash_str_find_ptr_lc(table, lc.as_ptr().cast(), lc.len());
            if found.is_null() {
                continue;
            }
            let destructor = (*table).pDestructor.take();
            zend_hash_str_del(table, lc.as_ptr().cast(), lc.len());
            (*table).pDestructor = destructor;
            slot.store(found.cast(), Ordering::Release);
            removed += 1;
        }
    }
    if removed > 0 {
        // SAFETY: the live tables; no iterator is open on the class table
        // at request start, and every removed entry was a persistent one.
        unsafe {
            zend_hash_rehash(table);
            (*eg).persistent_classes_count -= removed;
        }
    }
    // SAFETY: written once, at request start, before any script runs.
    unsafe {
        let previous = zend_autoload.map_or(0, |f| f as usize);
        PREVIOUS.store(previous, Ordering::Release);
        zend_autoload = Some(autoload);
    }
}

/// The wrapped entry point: the app's autoloaders first, then the
/// extension's class for a seed name that they did not provide.
unsafe extern "C" fn autoload(
    name: *mut zend_string,
    lc: *mut zend_string,
) -> *mut zend_class_entry {
    let previous = PREVIOUS.load(Ordering::Acquire);
    if previous != 0 {
        // SAFETY: PREVIOUS holds the entry point that was set before ours.
        let previous: Autoload = unsafe { std::mem::transmute::<usize, Autoload>(previous) };
        // SAFETY: the engine's own arguments, passed on.
        let found = unsafe { previous(name, lc) };
        if !found.is_null() {
            return found;
        }
    }
    std::panic::catch_unwind(|| {
        // SAFETY: the executor globals exist while a request runs.
        let thrown = unsafe { ext_php_rs_executor_globals().as_ref() }
            .is_none_or(|eg| !eg.exception.is_null());
        if thrown {
            return std::ptr::null_mut();
        }
        // SAFETY: the engine passes the lowercased name it looks up.
        let Some(lc) = (unsafe { lc.cast::<ZendStr>().as_ref() }) else {
            return std::ptr::null_mut();
        };
        let wanted = lc.as_bytes();
        let dropin = wanted
            .get(..DROP_IN.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(DROP_IN.as_bytes()));
        for (slot, name) in CLASSES.iter().zip(SEED_CLASSES) {
            let class = slot.load(Ordering::Acquire);
            let short = if dropin {
                &wanted[DROP_IN.len()..]
            } else {
                wanted
            };
            if class.is_null() || !name.as_bytes().eq_ignore_ascii_case(short) {
                continue;
            }
            let alias = if dropin {
                format!("{DROP_IN}{name}")
            } else {
                (*name).to_owned()
            };
            // SAFETY: a class entry that lives for the process; the name is
            // valid for its length. Entered as a request's alias.
            let entered = unsafe {
                zend_register_class_alias_ex(alias.as_ptr().cast(), alias.len(), class, false)
            };
            return if entered == 0 {
                class
            } else {
                std::ptr::null_mut()
            };
        }
        std::ptr::null_mut()
    })
    .unwrap_or(std::ptr::null_mut())
}
