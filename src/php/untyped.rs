//! The seed classes' methods declared no return types, so seed-era code
//! subclasses them without any (`class MyLock extends RedisLock { public
//! function lock($name, ...) {...} }`). PHP refuses such an override of a
//! method that declares one, and ext-php-rs declares one for every method:
//! those declarations are taken off again before any script compiles. It
//! happens at the first request start of each process, because the classes
//! are registered only after the module's own startup hook has run.

use std::sync::atomic::{AtomicBool, Ordering};

use ext_php_rs::ffi::{ZEND_ACC_HAS_RETURN_TYPE, zend_function, zend_type};
use ext_php_rs::zend::ClassEntry;

/// The classes whose methods must stay untyped, as the seeds wrote them.
pub const SEED_CLASSES: [&str; 3] = ["Lock_Service", "RedisLock", "RedisQueue"];

static DONE: AtomicBool = AtomicBool::new(false);

/// Readies the seed classes at the first request start of a process (a
/// forked child inherits the result): their methods untyped, then their
/// global names made a last resort (`last_resort.rs`).
pub fn prepare_seed_classes() {
    if DONE.swap(true, Ordering::AcqRel) {
        return;
    }
    untype_seed_methods();
    super::last_resort::yield_seed_names();
    guard_unconstructed();
}

/// Objects made without their constructor dump as empty objects and say
/// what is wrong when called (`unconstructed.rs`).
fn guard_unconstructed() {
    use super::unconstructed::guard;
    guard::<super::redis_lock::RedisLock>();
    guard::<super::redis_queue::RedisQueue>();
    guard::<super::client::Client>();
    guard::<super::lock::Lock>();
    guard::<super::queue::Queue>();
    guard::<super::task::Task>();
    guard::<super::redlock::Redlock>();
    guard::<super::stock::Stock>();
    guard::<super::semaphore::Semaphore>();
    guard::<super::multi_lock::MultiLock>();
}

/// Takes the return types off the seed classes' methods.
fn untype_seed_methods() {
    for name in SEED_CLASSES {
        let Some(class) = ClassEntry::try_find(name) else {
            continue;
        };
        for (_, zv) in class.function_table.iter() {
            if !zv.is_ptr() {
                continue;
            }
            // SAFETY: a function table's entries point to the class's
            // zend_functions, which live as long as the class; nothing runs
            // them concurrently (request start, one thread). For an internal
            // function the return type is the arg_info entry before the
            // first argument.
            unsafe {
                let function = zv.value.ptr.cast::<zend_function>();
                let common = &mut (*function).common;
                if common.fn_flags & ZEND_ACC_HAS_RETURN_TYPE == 0 || common.arg_info.is_null() {
                    continue;
                }
                (*common.arg_info.offset(-1)).type_ = zend_type {
                    ptr: std::ptr::null_mut(),
                    type_mask: 0,
                };
                common.fn_flags &= !ZEND_ACC_HAS_RETURN_TYPE;
            }
        }
    }
}
