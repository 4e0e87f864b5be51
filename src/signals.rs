//! Signals and Redis round trips. A socket with a receive timeout returns
//! EINTR on any caught signal, whatever SA_RESTART says, although the reply
//! is still coming. So a round trip resumes a read or write a signal
//! interrupted ([`resume`]): the handler has run (PHP's records the signal
//! for the script), the command is never sent twice, and the call
//! completes. As phpredis does, and without a system call per round trip.
//!
//! A blocking wait is the exception: like PHP's own `sleep()`, it is left
//! open to signals ([`open`]), and a caught signal ends it (see `wait`).
//! Between its blocking calls, a wait's tries hold signals back ([`held`]:
//! blocked, never lost, delivered when the try returns), so that a signal
//! that comes while no system call runs is noticed too.
//!
//! Threads of our own (lease renewal, Redlock's per-node threads) are
//! started with every asynchronous signal blocked for their whole life, so
//! that a signal meant for the PHP script is never handled on them.

use std::cell::Cell;
use std::mem::MaybeUninit;
use std::time::Duration;

thread_local! {
    /// Whether a signal with a handler was delivered during a round trip
    /// (held back, or interrupting it) since the last [`take_caught`].
    static CAUGHT: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread's round trip is open to signals (see [`open`]).
    static OPEN: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` open to signals: a read or write a caught signal interrupts
/// fails (EINTR) instead of resuming, ending a blocking command.
pub fn open<T>(f: impl FnOnce() -> T) -> T {
    let before = OPEN.with(|o| o.replace(true));
    let out = f();
    OPEN.with(|o| o.set(before));
    out
}

/// Whether a read or write a signal interrupted (EINTR) is to be tried
/// again: yes, unless the round trip is [`open`] to signals. Either way the
/// signal's handler has run; a wait under way notices ([`take_caught`]).
pub fn resume() -> bool {
    CAUGHT.with(|c| c.set(true));
    !OPEN.with(Cell::get)
}

/// The signals a fault raises on the faulting thread: never held back.
const SYNCHRONOUS: [libc::c_int; 6] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGTRAP,
    libc::SIGSYS,
];

/// Every asynchronous signal.
fn asynchronous() -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigfillset initialises the set; sigdelset only edits it.
    unsafe {
        libc::sigfillset(set.as_mut_ptr());
        for sig in SYNCHRONOUS {
            libc::sigdelset(set.as_mut_ptr(), sig);
        }
        set.assume_init()
    }
}

/// Asynchronous signals held back on this thread until it drops.
pub struct Held {
    previous: libc::sigset_t,
}

/// Holds back asynchronous signals on this thread until the guard drops.
fn hold() -> Held {
    let set = asynchronous();
    let mut previous = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: both sets are valid; pthread_sigmask cannot fail with
    // SIG_BLOCK and a valid set.
    unsafe {
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, previous.as_mut_ptr());
        Held {
            previous: previous.assume_init(),
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if caught_pending() {
            CAUGHT.with(|c| c.set(true));
        }
        // SAFETY: restores the mask saved by `hold`; what was held back is
        // delivered now.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.previous, std::ptr::null_mut());
        }
    }
}

/// Whether a held-back signal has a handler (not ignored, not the default
/// action): one a script or PHP itself reacts to.
fn caught_pending() -> bool {
    // Zeroed: the kernel writes only the bits of the signals it has (8 of
    // glibc's 128 bytes), and the whole set is read below.
    let mut pending = MaybeUninit::<libc::sigset_t>::zeroed();
    // SAFETY: sigpending fills the set, a plain array of bits read here as
    // bytes; sigismember and sigaction read it and the current dispositions
    // only.
    unsafe {
        if libc::sigpending(pending.as_mut_ptr()) != 0 {
            return false;
        }
        let pending = pending.assume_init();
        // Nothing pending, the usual case: no signal to look up one by one.
        let bytes = std::slice::from_raw_parts(
            (&raw const pending).cast::<u8>(),
            std::mem::size_of::<libc::sigset_t>(),
        );
        if bytes.iter().all(|&b| b == 0) {
            return false;
        }
        (1..libc::SIGRTMAX()).any(|sig| {
            if libc::sigismember(&pending, sig) != 1 {
                return false;
            }
            let mut action = MaybeUninit::<libc::sigaction>::zeroed();
            libc::sigaction(sig, std::ptr::null(), action.as_mut_ptr()) == 0
                && !matches!(
                    action.assume_init().sa_sigaction,
                    libc::SIG_IGN | libc::SIG_DFL
                )
        })
    }
}

/// Whether a signal with a handler was delivered during a round trip since
/// the last call (which forgets it).
pub fn take_caught() -> bool {
    CAUGHT.with(|c| c.replace(false))
}

/// Runs `f` with asynchronous signals held back (a wait's try); a thread it
/// starts keeps them blocked for its whole life (threads inherit the mask).
pub fn held<T>(f: impl FnOnce() -> T) -> T {
    let _held = hold();
    f()
}

/// Whether an I/O error of the `redis` crate is a read or write cut short by
/// a signal (EINTR).
pub fn interrupted(err: &redis::RedisError) -> bool {
    use std::error::Error as _;
    let Some(source) = err.source() else {
        return false;
    };
    let io = source
        .downcast_ref::<std::sync::Arc<dyn std::error::Error + Send + Sync>>()
        .and_then(|inner| inner.downcast_ref::<std::io::Error>())
        .or_else(|| source.downcast_ref::<std::io::Error>());
    io.is_some_and(|e| e.kind() == std::io::ErrorKind::Interrupted)
}

/// Sleeps for `d`, open to signals as a blocking wait is: false when a
/// signal with a handler cut it short (its handler has run). A signal that
/// is ignored or has its default action does not interrupt a sleep.
pub fn sleep(d: Duration) -> bool {
    let mut left = libc::timespec {
        tv_sec: libc::time_t::try_from(d.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: libc::c_long::from(d.subsec_nanos().cast_signed()),
    };
    // SAFETY: nanosleep reads the request and writes what is left into the
    // same valid timespec.
    let slept = unsafe { libc::nanosleep(&raw const left, &raw mut left) };
    if slept == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
        return true;
    }
    CAUGHT.with(|c| c.set(true));
    false
}
