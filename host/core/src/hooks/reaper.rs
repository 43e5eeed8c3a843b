//! Nothing outlives a hook (Linux): each hook process (and each `!` line of a command) is started
//! under a small reaper, a second fork of the spawned process that never runs anything else.
//!
//! The spawned process makes a process group of its own, marks itself a child subreaper
//! (`PR_SET_CHILD_SUBREAPER`: every orphan among its descendants, one that started a new
//! session with `setsid` included, becomes its child instead of init's) and forks: the child
//! execs the hook in that group, without a controlling terminal (`TIOCNOTTY`); the parent, the
//! reaper, leaves the group (so that killing the group at a timeout or on too much output ends
//! the hook but not the reaper), closes every descriptor it inherited and waits. When the hook
//! has ended, however it ended, the reaper kills every process still below it, waits until none
//! is left, and exits as the hook did (its exit code, or the same signal). Earshot waits for the
//! reaper, so when a hook has ended, what it started has ended too.
//!
//! What can still escape is in docs/hooks.md: a hook that kills or stops its reaper (its parent,
//! the same user) first, a process running as another user (a setuid program), and work handed
//! to a service that was already running (`systemd-run --user`, a `tmux` server, `docker run`).
//!
//! Everything the reaper does happens in a child of a multi-threaded process before `exec`: only
//! async-signal-safe system calls, no allocation.

use std::io;

/// Sets `command` up to run under a reaper, in a process group of its own (whose id is the
/// spawned process's pid, as before), without a controlling terminal when `detach_terminal`.
pub(crate) fn run_under_reaper(command: &mut tokio::process::Command, detach_terminal: bool) {
    // SAFETY: the closure runs in the forked child before exec and makes only
    // async-signal-safe system calls on stack buffers (see the module's documentation).
    unsafe {
        command.pre_exec(move || start(detach_terminal));
    }
}

/// Wakes the reaper `pid` if a hook stopped it (`kill -STOP $PPID`), so that it can end what is
/// left once its hook's group was killed. Harmless when it is gone: earshot has not waited for
/// it yet, so the pid is not reused.
pub(crate) fn resume(pid: i32) {
    // SAFETY: kill only sends a signal.
    unsafe {
        libc::kill(pid, libc::SIGCONT);
    }
}

/// In the spawned process: the group, the subreaper mark, the fork. Returns in the hook's
/// process (which then execs); the reaper never returns.
fn start(detach_terminal: bool) -> io::Result<()> {
    // SAFETY: plain system calls in a single-threaded child.
    unsafe {
        let outer_group = libc::getpgrp();
        if libc::setpgid(0, 0) == -1 {
            return Err(io::Error::last_os_error());
        }
        let reaper = libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
        let hook = if reaper { libc::fork() } else { 0 };
        if hook == -1 {
            return Err(io::Error::last_os_error());
        }
        if hook == 0 {
            if detach_terminal {
                detach_from_terminal();
            }
            return Ok(());
        }
        reap(hook, outer_group)
    }
}

/// Gives up the controlling terminal without leaving earshot's session (the hook's group must
/// stay in it, for the reaper to leave the group): `/dev/tty` then fails to open.
unsafe fn detach_from_terminal() {
    // SAFETY: open, ioctl and close on a descriptor this function owns.
    unsafe {
        let fd = libc::open(
            c"/dev/tty".as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        if fd >= 0 {
            libc::ioctl(fd, libc::TIOCNOTTY);
            libc::close(fd);
        }
    }
}

/// The reaper: waits for `hook`, ends every process left below it, exits as the hook did.
unsafe fn reap(hook: libc::pid_t, outer_group: libc::pid_t) -> ! {
    // SAFETY: system calls only; this process runs nothing else and exits here.
    unsafe {
        // Out of the hook's group: killing the group ends the hook, not its reaper.
        libc::setpgid(0, outer_group);
        for signal in [
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGTSTP,
            libc::SIGTTIN,
            libc::SIGTTOU,
            libc::SIGHUP,
            libc::SIGPIPE,
        ] {
            libc::signal(signal, libc::SIG_IGN);
        }
        // Hold none of the hook's pipes (earshot reads them to their end) nor the spawn's
        // error pipe (earshot waits for it to close).
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            if null > 2 {
                libc::close(null);
            }
        }
        close_from(3);
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        // Unless the hook is seen to end, the reaper fails.
        let mut status = 1 << 8;
        loop {
            let mut this = 0;
            let pid = libc::waitpid(-1, &mut this, 0);
            if pid == hook {
                status = this;
                break;
            }
            if pid == -1 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break;
            }
        }
        end_descendants();
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            libc::signal(signal, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal);
        }
        libc::_exit(if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            1
        })
    }
}

/// Closes every descriptor from `first` up.
unsafe fn close_from(first: libc::c_uint) {
    // SAFETY: closing descriptors of this process, which uses none of them.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, 0) == 0 {
            return;
        }
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        let top = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 16) as libc::c_int
        } else {
            1024
        };
        for fd in first as libc::c_int..top {
            libc::close(fd);
        }
    }
}

/// How many rounds in a row may find children that cannot be killed (another user's, through
/// a setuid program) before the reaper gives up on them (about a second).
const STUCK_ROUNDS: u32 = 100;

/// Kills every child (the orphans of the hook's processes become this process's children) until
/// none is left: each killed process's own children become children here in turn.
unsafe fn end_descendants() {
    // SAFETY: waitpid, kill and the /proc reads of `each_child`.
    unsafe {
        let mut stuck = 0;
        loop {
            // Collect what has already exited; no child at all is the usual case.
            loop {
                let pid = libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG);
                if pid > 0 {
                    continue;
                }
                if pid == -1 {
                    return;
                }
                break;
            }
            let mut killed = 0u32;
            each_child(libc::getpid(), &mut |pid| {
                if libc::kill(pid, libc::SIGKILL) == 0 {
                    killed += 1;
                }
            });
            if killed > 0 {
                stuck = 0;
                // One at least is dying: wait for one, then look again.
                libc::waitpid(-1, std::ptr::null_mut(), 0);
                continue;
            }
            stuck += 1;
            if stuck > STUCK_ROUNDS {
                return;
            }
            let pause = libc::timespec {
                tv_sec: 0,
                tv_nsec: 10_000_000,
            };
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
    }
}

/// Calls `found` with each child of `parent`: from `/proc/thread-self/children` when the kernel
/// has it, else from every `/proc/PID/stat` whose parent is `parent`.
unsafe fn each_child(parent: libc::pid_t, found: &mut dyn FnMut(libc::pid_t)) {
    // SAFETY: reads into stack buffers through descriptors this function owns.
    unsafe {
        let mut buffer = [0u8; 4096];
        let fd = libc::open(
            c"/proc/thread-self/children".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd >= 0 {
            let read = libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len());
            libc::close(fd);
            if read >= 0 {
                let mut pid: libc::pid_t = 0;
                for &byte in &buffer[..read as usize] {
                    if byte.is_ascii_digit() {
                        pid = pid.saturating_mul(10).saturating_add((byte - b'0') as i32);
                    } else {
                        if pid > 0 {
                            found(pid);
                        }
                        pid = 0;
                    }
                }
                // A number the buffer cut is not a pid: the next round reads it whole.
                return;
            }
        }
        let proc_fd = libc::open(
            c"/proc".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if proc_fd < 0 {
            return;
        }
        loop {
            let read = libc::syscall(
                libc::SYS_getdents64,
                proc_fd,
                buffer.as_mut_ptr(),
                buffer.len(),
            );
            if read <= 0 {
                break;
            }
            let mut at = 0usize;
            while at + 19 < read as usize {
                // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
                let length = u16::from_ne_bytes([buffer[at + 16], buffer[at + 17]]) as usize;
                if length == 0 {
                    break;
                }
                let name = &buffer[at + 19..(at + length).min(read as usize)];
                let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
                if let Some(pid) = number(name)
                    && parent_of(proc_fd, name) == Some(parent)
                {
                    found(pid);
                }
                at += length;
            }
        }
        libc::close(proc_fd);
    }
}

/// `digits` as a pid.
fn number(digits: &[u8]) -> Option<libc::pid_t> {
    if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        digits
            .iter()
            .fold(0, |value, &digit| value * 10 + (digit - b'0') as i32),
    )
}

/// The parent pid in `/proc/NAME/stat` (the field after the command name's closing bracket and
/// the state).
unsafe fn parent_of(proc_fd: libc::c_int, name: &[u8]) -> Option<libc::pid_t> {
    // SAFETY: a path and a buffer on the stack, a descriptor this function owns.
    unsafe {
        let mut path = [0u8; 32];
        let suffix = b"/stat\0";
        if name.len() + suffix.len() > path.len() {
            return None;
        }
        path[..name.len()].copy_from_slice(name);
        path[name.len()..name.len() + suffix.len()].copy_from_slice(suffix);
        let fd = libc::openat(
            proc_fd,
            path.as_ptr().cast(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return None;
        }
        let mut stat = [0u8; 512];
        let read = libc::read(fd, stat.as_mut_ptr().cast(), stat.len());
        libc::close(fd);
        if read <= 0 {
            return None;
        }
        let stat = &stat[..read as usize];
        let close = stat.iter().rposition(|&b| b == b')')?;
        // ") S PPID ..."
        let rest = stat.get(close + 2..)?;
        let rest = &rest[rest.iter().position(|&b| b == b' ')? + 1..];
        let end = rest.iter().position(|&b| b == b' ')?;
        number(&rest[..end])
    }
}
