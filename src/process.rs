//! This process's id, without a system call per use. PHP-FPM workers and
//! `pcntl_fork()` children are made by `fork()`: the id is cached, and the
//! cache is emptied in every child by a fork handler (`pthread_atfork`), so
//! a child never sees its parent's id. Connections, held locks and renewal
//! threads are keyed by it to never be carried across a fork.

use std::sync::Once;
use std::sync::atomic::{AtomicU32, Ordering};

/// The cached id; 0: not known in this process yet.
static PID: AtomicU32 = AtomicU32::new(0);
static HANDLER: Once = Once::new();

extern "C" fn forked() {
    PID.store(0, Ordering::Relaxed);
}

/// This process's id.
pub fn id() -> u32 {
    let pid = PID.load(Ordering::Relaxed);
    if pid != 0 {
        return pid;
    }
    HANDLER.call_once(|| {
        // SAFETY: registers a handler that only stores to an atomic, which
        // is async-signal-safe as a fork child's handlers must be. glibc
        // drops it when this library is unloaded (dlclose), since
        // pthread_atfork records the registering object.
        unsafe {
            libc::pthread_atfork(None, None, Some(forked));
        }
    });
    let pid = std::process::id();
    PID.store(pid, Ordering::Relaxed);
    pid
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_forked_child_sees_its_own_id() {
        let parent = super::id();
        assert_eq!(parent, std::process::id());
        // SAFETY: the child only reads ids and exits at once.
        let child = unsafe { libc::fork() };
        if child == 0 {
            let ok = super::id() == std::process::id() && super::id() != parent;
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        unsafe { libc::waitpid(child, &mut status, 0) };
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "status {status}"
        );
        assert_eq!(super::id(), parent);
    }
}
