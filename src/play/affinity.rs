//! Players pinned to cores (`--affinity`, fastchess's `-use-affinity`): with every engine on a
//! core of its own, two engines of one game, or of two games played at once, never take turns
//! on one core while their clocks run, and the operating system does not move a search from
//! core to core in the middle of a move.
//!
//! The players of the `k`-th concurrent game (the executor's job thread `k`, see
//! [`crate::exec::slot`]) take cores `2k` and `2k + 1` of the cores this process may use (its
//! own affinity mask, so `taskset` or a batch system's allocation is respected), wrapping round
//! when there are more players than cores. An external engine process is pinned with all of its
//! threads (a new process before it runs, by `sched_setaffinity` between fork and exec, so the
//! threads it starts inherit the mask; a running one task by task through `/proc/PID/task`); an
//! in-process player is pinned by pinning the thread its game runs on.
//!
//! Linux only: elsewhere [`cores`] is empty and nothing is pinned.

/// The cores of the `slot`-th concurrent game: A's and B's, from `cores` (the cores this
/// process may use). `None` when there are none.
pub fn game_cores(slot: usize, cores: &[usize]) -> Option<[usize; 2]> {
    if cores.is_empty() {
        return None;
    }
    let n = cores.len();
    Some([cores[(2 * slot) % n], cores[(2 * slot + 1) % n]])
}

/// The cores this process may run on, ascending (empty where that cannot be known).
pub fn cores() -> Vec<usize> {
    imp::cores()
}

/// Pins the calling thread to `core`.
pub fn pin_thread(core: usize) -> std::io::Result<()> {
    imp::pin_task(0, core)
}

/// Pins every thread of process `pid` to `core`.
pub fn pin_process(pid: u32, core: usize) -> std::io::Result<()> {
    imp::pin_process(pid, core)
}

/// Makes `command`'s process start on `core` (all the threads it creates inherit the mask).
pub fn pin_command(command: &mut std::process::Command, core: usize) {
    imp::pin_command(command, core)
}

#[cfg(target_os = "linux")]
mod imp {
    use std::io;

    fn set_of(core: usize) -> io::Result<libc::cpu_set_t> {
        if core >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::other(format!(
                "core {core} is beyond the CPU set"
            )));
        }
        // SAFETY: cpu_set_t is a plain bit array; all zeros is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `core` is below CPU_SETSIZE, checked above.
        unsafe { libc::CPU_SET(core, &mut set) };
        Ok(set)
    }

    pub fn cores() -> Vec<usize> {
        // SAFETY: as in `set_of`; sched_getaffinity writes at most the size given.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let r =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if r != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: every index is below CPU_SETSIZE.
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect()
    }

    /// Pins one task (a thread id; 0 for the calling thread).
    pub fn pin_task(tid: i32, core: usize) -> io::Result<()> {
        let set = set_of(core)?;
        // SAFETY: `set` is a valid cpu_set_t of the size given.
        let r =
            unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    pub fn pin_process(pid: u32, core: usize) -> io::Result<()> {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))?;
        let mut pinned = 0;
        for t in tasks.flatten() {
            if let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) {
                // A thread may end between the listing and the call: only the others count.
                if pin_task(tid, core).is_ok() {
                    pinned += 1;
                }
            }
        }
        if pinned == 0 {
            return Err(io::Error::other(format!(
                "no thread of process {pid} could be pinned"
            )));
        }
        Ok(())
    }

    pub fn pin_command(command: &mut std::process::Command, core: usize) {
        use std::os::unix::process::CommandExt;
        let Ok(set) = set_of(core) else { return };
        // SAFETY: between fork and exec the closure only makes one system call (no allocation,
        // no lock); a failure leaves the process unpinned rather than not started.
        unsafe {
            command.pre_exec(move || {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                Ok(())
            });
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::io;

    pub fn cores() -> Vec<usize> {
        Vec::new()
    }

    pub fn pin_task(_tid: i32, _core: usize) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "core affinity is only set on Linux",
        ))
    }

    pub fn pin_process(_pid: u32, core: usize) -> io::Result<()> {
        pin_task(0, core)
    }

    pub fn pin_command(_command: &mut std::process::Command, _core: usize) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn games_take_two_cores_each_and_wrap_round() {
        let cores = [0, 1, 2, 3];
        assert_eq!(game_cores(0, &cores), Some([0, 1]));
        assert_eq!(game_cores(1, &cores), Some([2, 3]));
        assert_eq!(game_cores(2, &cores), Some([0, 1]));
        // a machine (or a mask) with odd cores: the players spread over all of them
        assert_eq!(game_cores(1, &[4, 6, 7]), Some([7, 4]));
        assert_eq!(game_cores(0, &[5]), Some([5, 5]));
        assert_eq!(game_cores(0, &[]), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_and_a_process_are_pinned() {
        let cores = cores();
        assert!(!cores.is_empty());
        let last = *cores.last().unwrap();
        std::thread::spawn(move || {
            pin_thread(last).unwrap();
            assert_eq!(super::cores(), [last]);
        })
        .join()
        .unwrap();
        let mut c = std::process::Command::new("sleep");
        c.arg("5");
        pin_command(&mut c, cores[0]);
        let mut child = c.spawn().unwrap();
        let allowed = |pid: u32| -> String {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
            status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .unwrap()
                .trim()
                .to_string()
        };
        assert_eq!(allowed(child.id()), cores[0].to_string());
        pin_process(child.id(), last).unwrap();
        assert_eq!(allowed(child.id()), last.to_string());
        let _ = child.kill();
        let _ = child.wait();
    }
}
