//! What the self-hosting test binaries (`harness = false`) share: they re-run themselves as a
//! fake engine, so they run their own tests, and their fake engines read `position` alike.

use xqtune::core::Position;

/// Runs the tests whose names contain any free argument (all when none) on `workers` threads,
/// printing libtest's lines, and exits with 101 when one panicked. `--list` lists them.
pub fn run_tests(tests: &[(&str, fn())], workers: usize) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filters: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .map(String::as_str)
        .collect();
    let selected: Vec<&(&str, fn())> = tests
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f)))
        .collect();
    if args.iter().any(|a| a == "--list") {
        for (name, _) in &selected {
            println!("{name}: test");
        }
        return;
    }
    println!("\nrunning {} tests", selected.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, selected.len().max(1)) {
            scope.spawn(|| {
                while let Some((name, test)) =
                    selected.get(next.fetch_add(1, std::sync::atomic::Ordering::SeqCst))
                {
                    let ok = std::thread::Builder::new()
                        .name((*name).to_string())
                        .spawn(*test)
                        .is_ok_and(|h| h.join().is_ok());
                    println!("test {name} ... {}", if ok { "ok" } else { "FAILED" });
                    if !ok {
                        failed.lock().unwrap_or_else(|e| e.into_inner()).push(*name);
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap_or_else(|e| e.into_inner());
    println!(
        "\ntest result: {}. {} passed; {} failed",
        if failed.is_empty() { "ok" } else { "FAILED" },
        selected.len() - failed.len(),
        failed.len()
    );
    if !failed.is_empty() {
        println!("failures: {}", failed.join(", "));
        std::process::exit(101);
    }
}

/// The position of a fake engine's `position fen FEN [moves ...]` line (split into words):
/// `Err(7)` for a FEN it cannot read, `Err(8)` for a move that is not legal (the exit codes the
/// tests look for).
pub fn read_position(words: &[&str]) -> Result<Position, i32> {
    let m = words
        .iter()
        .position(|&w| w == "moves")
        .unwrap_or(words.len());
    let mut p = Position::from_fen(&words[2.min(m)..m].join(" ")).map_err(|_| 7)?;
    for w in words.iter().skip(m + 1) {
        let mv = p.parse_move(w).map_err(|_| 8)?;
        p.make_move(mv);
    }
    Ok(p)
}
