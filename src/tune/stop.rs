//! Ctrl-C for the long commands (tuners, datagen): the first one asks for a clean stop after
//! the current step, which then checkpoints; a second one exits at once.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by Ctrl-C: tuners finish the current step, checkpoint and stop.
static STOP: AtomicBool = AtomicBool::new(false);

/// Installs the Ctrl-C handler once: the first Ctrl-C asks for a clean stop after the current
/// step, a second one exits at once (the last checkpoint is still valid).
pub fn install_ctrlc() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if STOP.swap(true, Ordering::SeqCst) {
                eprintln!("\nsecond Ctrl-C: exiting now (resume from the last checkpoint)");
                std::process::exit(130);
            }
            eprintln!("\nCtrl-C: stopping after the current step (Ctrl-C again to exit now)");
        });
    });
}

/// Whether a Ctrl-C has asked for a stop.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}
