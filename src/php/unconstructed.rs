//! Objects of the extension's classes made without their constructor: a
//! subclass whose own constructor does not call `parent::__construct()`,
//! or `ReflectionClass::newInstanceWithoutConstructor()`. They hold no
//! Rust value, and ext-php-rs can then only say "Failed to retrieve
//! reference to `$this`" (an `Exception`), while `var_dump()` and
//! `print_r()` died with an uncatchable "__debuginfo() must return an
//! array". Each class's object handlers are patched once a process: such an
//! object dumps as an empty object, and calling one of the extension's
//! methods on it throws an `Error` that says what to do. A subclass's own
//! methods run as usual.

use std::ffi::c_int;

use ext_php_rs::class::RegisteredClass;
use ext_php_rs::exception::PhpException;
use ext_php_rs::ffi::{
    _zend_new_array, HashTable, ZEND_INTERNAL_FUNCTION, std_object_handlers, zend_function,
    zend_object, zend_string, zval,
};
use ext_php_rs::types::{ZendClassObject, ZendStr};
use ext_php_rs::zend::ce;

/// Patches the object handlers of class `T` (once a process, at request
/// start; every object of `T` and of its subclasses uses them).
pub fn guard<T: RegisteredClass>() {
    let handlers = T::get_metadata().handlers();
    // SAFETY: the handlers live in the class's metadata (a static, inside
    // a OnceCell's UnsafeCell) for the process; nothing reads them while
    // request start runs, before any script.
    unsafe {
        let handlers = std::ptr::from_ref(handlers).cast_mut();
        (*handlers).get_method = Some(get_method::<T>);
        (*handlers).get_debug_info = Some(get_debug_info::<T>);
    }
}

/// Whether `object` is an object of `T` (or a subclass) that holds no value.
///
/// # Safety
/// `object` is a live object.
unsafe fn unconstructed<T: RegisteredClass>(object: *mut zend_object) -> bool {
    // SAFETY: the caller's live object; objects with `T`'s handlers were
    // made by `T`'s create_object, so it is a `ZendClassObject<T>`.
    unsafe {
        std::ptr::eq((*object).handlers, T::get_metadata().handlers())
            && ZendClassObject::<T>::from_zend_obj(&*object).is_none()
    }
}

unsafe extern "C" fn get_method<T: RegisteredClass>(
    object: *mut *mut zend_object,
    method: *mut zend_string,
    key: *const zval,
) -> *mut zend_function {
    // SAFETY: the engine's own arguments, passed on to the standard lookup.
    let found = unsafe {
        match std_object_handlers.get_method {
            Some(lookup) => lookup(object, method, key),
            None => return std::ptr::null_mut(),
        }
    };
    // SAFETY: the engine passes a live object and, when found, a function.
    let refuse = unsafe {
        !found.is_null()
            && u32::from((*found).type_) == ZEND_INTERNAL_FUNCTION
            && unconstructed::<T>(*object)
    };
    if !refuse {
        return found;
    }
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: as above: a live object and the method's name.
        let (class, name) = unsafe {
            (
                (*(**object).ce)
                    .name
                    .cast::<ZendStr>()
                    .as_ref()
                    .map(|n| n.as_bytes().to_vec()),
                method
                    .cast::<ZendStr>()
                    .as_ref()
                    .map(|n| n.as_bytes().to_vec()),
            )
        };
        let class = String::from_utf8_lossy(&class.unwrap_or_default()).into_owned();
        let name = String::from_utf8_lossy(&name.unwrap_or_default()).into_owned();
        PhpException::new(
            format!(
                "{class}::{name}(): the object was not constructed: a subclass's constructor must \
                 call parent::__construct() (objects made without their constructor hold nothing)"
            ),
            0,
            ce::error(),
        )
        .throw();
    });
    std::ptr::null_mut()
}

unsafe extern "C" fn get_debug_info<T: RegisteredClass>(
    object: *mut zend_object,
    is_temp: *mut c_int,
) -> *mut HashTable {
    // SAFETY: the engine passes a live object and where to say whether the
    // table is temporary.
    unsafe {
        if unconstructed::<T>(object) {
            *is_temp = 1;
            return _zend_new_array(0);
        }
        match std_object_handlers.get_debug_info {
            Some(info) => info(object, is_temp),
            None => std::ptr::null_mut(),
        }
    }
}
