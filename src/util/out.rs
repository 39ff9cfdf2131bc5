//! Lines to stdout that end the process as `cat` ends when the reader goes away. The commands
//! that start engines keep SIGPIPE ignored (an engine that dies mid-game must be an error on
//! its pipe, not the end of xqtune), so a closed stdout (`xqtune match … | head -1`) shows
//! only as an error on the next write, where `println!` panics. [`outln!`] ends the process
//! by SIGPIPE there instead; what a run keeps is written atomically, so it resumes as it does
//! after kill -9.

use std::io::Write;

/// Writes one line to stdout; see [`outln!`].
pub fn line(args: std::fmt::Arguments) {
    let mut out = std::io::stdout().lock();
    let written = out.write_fmt(args).and_then(|()| out.write_all(b"\n"));
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => end_by_sigpipe(),
        Err(e) => {
            eprintln!("error: cannot write to stdout: {e}");
            std::process::exit(1)
        }
    }
}

/// Ends the process as the default SIGPIPE disposition would have.
fn end_by_sigpipe() -> ! {
    #[cfg(target_os = "linux")]
    // SAFETY: restoring the default disposition and raising the signal touch no Rust state.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(128 + 13)
}

/// `println!` for the commands that may start engines: a closed stdout ends the process by
/// SIGPIPE, never with a panic.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::util::out::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::util::out::line(format_args!($($arg)*))
    };
}
