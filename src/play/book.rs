//! `xqtune book`: an unbalanced opening suite made from a suite of ordinary openings, as
//! fishtest's UHO books are made from human openings. Each opening's end position is searched
//! to a fixed number of nodes, and the openings whose score (in centipawns, for whichever side
//! is better) lies in a window are kept.
//!
//! Why: from a balanced opening, two engines of nearly equal strength draw most game pairs, and
//! a drawn pair says nothing about which engine is better. From an opening where one side is
//! clearly better but not lost, the pair is decided by whether each engine converts the better
//! side and holds the worse one, so fewer pairs are wasted on draws and an SPRT ends sooner
//! (the colour swap still gives both engines the same openings).
//!
//! The search is the engine's own (its embedded network unless `--eval classical` or `--net`),
//! one thread per opening with cleared tables, so the scores do not depend on the thread count
//! or on how the openings are split into jobs. Openings are scored in chunks, as executor jobs
//! (threads, and the ranks of an MPI job); the scores found so far are appended to
//! `<out>.scores`, so a killed run resumes where it stopped, and the suite appears only when
//! every opening is scored (an atomic rename). The scores file stays: the same command with
//! another `--window` (and `--force`) only filters again.

use super::openings::Opening;
use crate::core::Position;
use crate::eval::EvalParams;
use crate::eval::nnue::Network;
use crate::search::{SearchLimits, SearchParams, Searcher, mate_in};
use crate::uci::{EngineFlags, EvalChoice};
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Openings scored per executor job.
const CHUNK: usize = 32;

/// Transposition table of each scoring search, MB.
const HASH_MB: usize = 16;

/// The first line of a `.scores` file: the format, then the key of the settings.
const SCORES_TAG: &str = "xqtune book scores v1";

/// `xqtune book SUITE -o OUT [--window LO..HI] [--nodes N] ...`.
#[derive(clap::Args, Debug, Clone)]
pub struct BookArgs {
    /// The opening suite to score (any format `xqtune match --openings` reads).
    pub suite: PathBuf,
    /// The unbalanced suite to write: the kept lines as they were, each with its score.
    #[arg(long, short)]
    pub output: PathBuf,
    /// Keep the openings whose score for the better side, in centipawns, lies in LO..HI
    /// (both ends included).
    #[arg(long, default_value = "80..200", value_parser = parse_window)]
    pub window: Window,
    /// Nodes searched per opening.
    #[arg(long, default_value_t = 200_000)]
    pub nodes: u64,
    #[command(flatten)]
    pub engine: EngineFlags,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
}

/// A score window: the openings whose score for the better side is in `lo..=hi` centipawns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub lo: i32,
    pub hi: i32,
}

impl Window {
    /// Whether a score (either side's view) is in the window; mate scores never are.
    pub fn holds(&self, score: Score) -> bool {
        match score {
            Score::Cp(cp) => (self.lo..=self.hi).contains(&cp.abs()),
            Score::Mate(_) => false,
        }
    }
}

impl std::fmt::Display for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}..{}", self.lo, self.hi)
    }
}

/// Parses `LO..HI` (centipawns, 0 <= LO <= HI).
pub fn parse_window(text: &str) -> Result<Window, String> {
    let bad = || format!("'{text}': expected LO..HI in centipawns, e.g. 80..200");
    let (lo, hi) = text.split_once("..").ok_or_else(bad)?;
    let lo: i32 = lo.trim().parse().map_err(|_| bad())?;
    let hi: i32 = hi.trim().parse().map_err(|_| bad())?;
    if lo < 0 || hi < lo {
        return Err(format!(
            "'{text}': the window must have 0 <= LO <= HI (scores are for the better side)"
        ));
    }
    Ok(Window { lo, hi })
}

/// An opening's score, red's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Score {
    Cp(i32),
    /// Mate in this many moves (negative: red is mated).
    Mate(i32),
}

impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Score::Cp(cp) => write!(f, "{cp:+}"),
            Score::Mate(m) => write!(f, "mate {m:+}"),
        }
    }
}

impl std::str::FromStr for Score {
    type Err = String;
    fn from_str(s: &str) -> Result<Score, String> {
        let bad = |_| format!("bad score '{s}'");
        match s.strip_prefix("mate ") {
            Some(m) => m.parse().map(Score::Mate).map_err(bad),
            None => s.parse().map(Score::Cp).map_err(bad),
        }
    }
}

/// What scores the openings: the engine's evaluation and search, and the node budget.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Scorer {
    pub eval: Arc<EvalParams>,
    pub search: SearchParams,
    pub evaluator: Evaluator,
    pub nodes: u64,
}

/// Which evaluation the scoring searches use.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Evaluator {
    /// The embedded network of the position's variant (the classical tables without one).
    Embedded,
    /// The classical tables.
    Classical,
    /// This network for the positions of its variant. It travels in jobs as its file's bytes.
    Network(Arc<Network>),
}

impl Scorer {
    /// The score of `pos` for red, after a search of `self.nodes` nodes with cleared tables.
    pub fn score(&self, searcher: &mut Searcher, pos: &Position) -> Score {
        let net = match &self.evaluator {
            Evaluator::Embedded => Network::embedded(pos.variant()),
            Evaluator::Classical => None,
            Evaluator::Network(n) => Some(n.clone()),
        };
        searcher.set_networks(&crate::eval::nnue::Networks::from(net));
        searcher.new_game();
        let limits = SearchLimits {
            nodes: Some(self.nodes),
            ..Default::default()
        };
        let r = searcher.search(pos, &limits, &mut |_| {});
        let red = pos.side_to_move() == crate::core::Color::Red;
        match mate_in(r.score) {
            Some(m) => Score::Mate(if red { m } else { -m }),
            None => Score::Cp(if red { r.score } else { -r.score }),
        }
    }

    fn searcher(&self) -> Searcher {
        Searcher::new(self.eval.clone(), self.search, HASH_MB)
    }

    /// The scores of `positions`, in order.
    pub fn score_all(&self, positions: &[Position]) -> Vec<Score> {
        let mut s = self.searcher();
        positions.iter().map(|p| self.score(&mut s, p)).collect()
    }
}

/// A chunk of openings to score, as an executor job.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BookJob {
    pub scorer: Arc<Scorer>,
    pub openings: Vec<Opening>,
}

impl crate::exec::Job for BookJob {
    type Output = Vec<Score>;
    type Context = ();
    const KIND: &'static str = "book";
    fn run(self, _: &()) -> Vec<Score> {
        let positions: Vec<Position> = self.openings.iter().map(Opening::position).collect();
        self.scorer.score_all(&positions)
    }
}

/// One opening line of the suite file: its text as written and the opening it gives.
struct SuiteLine {
    text: String,
    opening: Opening,
}

/// The suite's header (its leading comment lines, which carry the source and licence) and its
/// opening lines.
fn read_suite(path: &Path) -> Result<(Vec<String>, Vec<SuiteLine>)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read opening suite {}", path.display()))?;
    let mut header = Vec::new();
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let body = raw.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            if lines.is_empty() && raw.trim_start().starts_with('#') {
                header.push(raw.trim_end().to_string());
            }
            continue;
        }
        let opening =
            Opening::parse(body, i + 1).with_context(|| format!("in {}", path.display()))?;
        lines.push(SuiteLine {
            text: raw.trim_end().to_string(),
            opening,
        });
    }
    if lines.is_empty() {
        bail!("{}: the opening suite has no openings", path.display());
    }
    Ok((header, lines))
}

/// The key that a `.scores` file must carry to be used again: the suite's openings and
/// everything that decides a score.
fn settings_key(lines: &[SuiteLine], scorer: &Scorer) -> Result<String> {
    let evaluator = match &scorer.evaluator {
        Evaluator::Embedded => "embedded".to_string(),
        Evaluator::Classical => "classical".to_string(),
        Evaluator::Network(n) => format!("{:016x}", n.hash()),
    };
    let text = serde_json::to_string(&(
        lines
            .iter()
            .map(|l| (&l.opening.fen, &l.opening.moves))
            .collect::<Vec<_>>(),
        &*scorer.eval,
        scorer.search,
        evaluator,
        scorer.nodes,
    ))?;
    Ok(format!(
        "{:016x} {} openings {} nodes",
        crate::util::fnv1a(text.bytes()),
        lines.len(),
        scorer.nodes
    ))
}

fn scores_path(out: &Path) -> PathBuf {
    let mut p = out.as_os_str().to_owned();
    p.push(".scores");
    PathBuf::from(p)
}

/// The scores an earlier run of the same settings wrote to `path`, if any; a last line cut off
/// by a kill is dropped (and cut from the file).
fn resume_scores(path: &Path, key: &str) -> Result<Vec<Score>> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(Vec::new());
    };
    if !text.contains('\n') {
        // killed before its first line was complete: nothing was scored
        return Ok(Vec::new());
    }
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("").trim_end();
    if first != format!("{SCORES_TAG} {key}") {
        bail!(
            "{} belongs to a book run with other openings or settings; delete it or use them",
            path.display()
        );
    }
    let mut scores = Vec::new();
    let mut good = first.len() + 1;
    for l in lines {
        if !l.ends_with('\n') {
            break;
        }
        scores.push(
            l.trim_end()
                .parse()
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
        );
        good += l.len();
    }
    if good < text.len() {
        let f = std::fs::OpenOptions::new().write(true).open(path)?;
        f.set_len(good as u64)?;
    }
    Ok(scores)
}

/// How many scores fall in each band of centipawns for the better side.
pub fn histogram(scores: &[Score]) -> Vec<(String, usize)> {
    const BANDS: [i32; 8] = [0, 30, 60, 80, 120, 200, 300, 500];
    let mut out: Vec<(String, usize)> = BANDS
        .iter()
        .enumerate()
        .map(|(i, lo)| match BANDS.get(i + 1) {
            Some(hi) => (format!("{lo}..{}", hi - 1), 0),
            None => (format!("{lo}+"), 0),
        })
        .collect();
    out.push(("mate".into(), 0));
    for s in scores {
        let i = match s {
            Score::Cp(cp) => BANDS.iter().rposition(|&lo| cp.abs() >= lo).unwrap_or(0),
            Score::Mate(_) => BANDS.len(),
        };
        out[i].1 += 1;
    }
    out
}

/// Runs `xqtune book`.
pub fn run_cli(args: &BookArgs) -> Result<()> {
    // Ctrl-C stops after the chunks in progress (their scores are kept); as in `xqtune match`,
    // a handler already installed by another command in this process is left in place.
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    if args.nodes == 0 {
        bail!("--nodes must be at least 1");
    }
    let out = &args.output;
    let scores_file = scores_path(out);
    if out.exists() && !args.force {
        bail!("{} exists (use --force to replace it)", out.display());
    }
    let (header, lines) = read_suite(&args.suite)?;
    let (eval, search) = args.engine.load_params()?;
    let evaluator = match (args.engine.eval, args.engine.load_net()?) {
        (Some(EvalChoice::Classical), Some(_)) => {
            bail!("--eval classical scores with the tables; leave out --net")
        }
        (Some(EvalChoice::Classical), None) => Evaluator::Classical,
        (_, Some(net)) => Evaluator::Network(net),
        (_, None) => Evaluator::Embedded,
    };
    let scorer = Arc::new(Scorer {
        eval: Arc::new(eval),
        search,
        evaluator,
        nodes: args.nodes,
    });
    let key = settings_key(&lines, &scorer)?;
    let mut scores = resume_scores(&scores_file, &key)?;
    if scores.len() > lines.len() {
        bail!(
            "{} has more scores than the suite has openings",
            scores_file.display()
        );
    }
    if let Some(parent) = scores_file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&scores_file)
        .with_context(|| format!("cannot write {}", scores_file.display()))?;
    if scores.is_empty() {
        file.set_len(0)?;
        writeln!(file, "{SCORES_TAG} {key}")?;
    } else if scores.len() == lines.len() {
        crate::outln!(
            "book: the {} openings were scored before ({}); filtering again",
            lines.len(),
            scores_file.display()
        );
    } else {
        crate::outln!(
            "book: resuming after {} of {} openings",
            scores.len(),
            lines.len()
        );
    }
    let first = scores.len();
    let jobs: Vec<BookJob> = lines[first..]
        .chunks(CHUNK)
        .map(|c| BookJob {
            scorer: scorer.clone(),
            openings: c.iter().map(|l| l.opening.clone()).collect(),
        })
        .collect();
    let threads = args
        .concurrency
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let bar = crate::progress::Progress::new(
        lines.len() as u64,
        first as u64,
        "book {bar:30} {pos}/{len} [{elapsed_precise} < {eta}] {msg}",
        "book",
    );
    // Chunks come back in any order; they are written in suite order.
    let mut ready = std::collections::BTreeMap::new();
    let mut next = 0;
    let mut synced = Instant::now();
    let mut error = None;
    crate::exec::map(jobs, threads, &mut |i, chunk| {
        ready.insert(i, chunk);
        while let Some(chunk) = ready.remove(&next) {
            let mut text = String::new();
            for s in &chunk {
                text.push_str(&format!("{s}\n"));
            }
            if let Err(e) = file.write_all(text.as_bytes()) {
                error = Some(e);
                return false;
            }
            scores.extend(chunk);
            next += 1;
        }
        if synced.elapsed() > Duration::from_secs(2) {
            let _ = file.sync_data();
            synced = Instant::now();
        }
        let kept = scores.iter().filter(|&&s| args.window.holds(s)).count();
        bar.set(scores.len() as u64, format!("{kept} in {}", args.window));
        !stop.load(Ordering::SeqCst)
    });
    if let Some(e) = error {
        bar.abandon();
        return Err(e).with_context(|| format!("cannot write {}", scores_file.display()));
    }
    file.sync_data()?;
    if scores.len() < lines.len() {
        bar.abandon();
        crate::outln!(
            "stopped after {} of {} openings; run the same command again to continue",
            scores.len(),
            lines.len()
        );
        return Ok(());
    }
    bar.finish();
    crate::outln!("scores for the better side (centipawns): openings");
    for (band, n) in histogram(&scores) {
        crate::outln!("  {band:>9}: {n}");
    }
    let text = suite_text(&header, &lines, &scores, args, &scorer.evaluator);
    let kept = text.lines().filter(|l| !l.starts_with('#')).count();
    if kept == 0 {
        bail!(
            "no opening scored in {}; nothing written (the scores are kept: run again with \
             another --window)",
            args.window
        );
    }
    crate::util::write_atomic(out, text.as_bytes())
        .with_context(|| format!("cannot write {}", out.display()))?;
    crate::outln!(
        "{kept} of {} openings in {} written to {}",
        lines.len(),
        args.window,
        out.display()
    );
    Ok(())
}

/// The unbalanced suite: the source's header, a note on how it was made, the kept lines.
fn suite_text(
    header: &[String],
    lines: &[SuiteLine],
    scores: &[Score],
    args: &BookArgs,
    evaluator: &Evaluator,
) -> String {
    let source = args.suite.display();
    let eval = match evaluator {
        Evaluator::Classical => "the classical evaluation".to_string(),
        Evaluator::Network(n) => format!("the network {:016x}", n.hash()),
        Evaluator::Embedded => "the embedded network".to_string(),
    };
    let mut text = String::new();
    for h in header {
        text.push_str(h);
        text.push('\n');
    }
    text.push_str(&format!(
        "# Unbalanced: made by `xqtune book {source} --window {} --nodes {}`:\n\
         # the openings whose end position scores {} centipawns for either side\n\
         # after a {}-node search with {eval}. Each line ends with that score, red's view.\n",
        args.window, args.nodes, args.window, args.nodes
    ));
    for (l, s) in lines.iter().zip(scores) {
        if args.window.holds(*s) {
            let sep = if l.text.contains('#') { " | " } else { " # " };
            text.push_str(&format!("{}{sep}score {s}\n", l.text));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_parse_and_hold_either_sides_scores() {
        let w = parse_window("80..200").unwrap();
        assert_eq!(w, Window { lo: 80, hi: 200 });
        assert!(w.holds(Score::Cp(80)) && w.holds(Score::Cp(-200)) && w.holds(Score::Cp(-95)));
        assert!(!w.holds(Score::Cp(79)) && !w.holds(Score::Cp(-201)));
        assert!(!w.holds(Score::Mate(3)));
        for bad in ["80", "a..3", "200..80", "-10..20", "80..x"] {
            assert!(parse_window(bad).unwrap_err().contains(bad), "{bad}");
        }
    }

    #[test]
    fn scores_read_back_as_written() {
        for s in [
            Score::Cp(0),
            Score::Cp(-35),
            Score::Cp(120),
            Score::Mate(-4),
        ] {
            assert_eq!(s.to_string().parse::<Score>(), Ok(s));
        }
        assert!("mate x".parse::<Score>().is_err());
    }

    #[test]
    fn histogram_counts_each_band() {
        let h = histogram(&[
            Score::Cp(0),
            Score::Cp(-29),
            Score::Cp(30),
            Score::Cp(-150),
            Score::Cp(700),
            Score::Mate(2),
        ]);
        let counts: Vec<usize> = h.iter().map(|b| b.1).collect();
        assert_eq!(counts, [2, 1, 0, 0, 1, 0, 0, 1, 1]);
        assert_eq!(h[0].0, "0..29");
        assert_eq!(h[7].0, "500+");
    }

    /// Red a chariot up scores well for red, black a chariot up well for black (whoever is to
    /// move), and a scorer gives each position the same score whatever came
    /// before it (the tables are cleared), so jobs of any size agree.
    #[test]
    fn scores_are_reds_view_and_independent_of_order() {
        let scorer = Scorer {
            eval: Arc::new(EvalParams::default()),
            search: SearchParams::default(),
            evaluator: Evaluator::Classical,
            nodes: 3000,
        };
        let up = Position::from_fen(
            "1nbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
        )
        .unwrap();
        let down = Position::from_fen(
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/1NBAKABNR b - - 0 1",
        )
        .unwrap();
        let start = Position::startpos();
        let all = scorer.score_all(&[up.clone(), start.clone(), down.clone()]);
        let Score::Cp(a) = all[0] else { panic!() };
        let Score::Cp(c) = all[2] else { panic!() };
        assert!(a > 400 && c < -400, "{a} {c}");
        assert_eq!(
            scorer.score_all(&[down, start, up]),
            [all[2], all[1], all[0]]
        );
    }

    fn args(suite: &Path, output: &Path) -> BookArgs {
        BookArgs {
            suite: suite.to_path_buf(),
            output: output.to_path_buf(),
            window: Window { lo: 0, hi: 100_000 },
            nodes: 500,
            engine: EngineFlags {
                eval: Some(EvalChoice::Classical),
                ..EngineFlags::default()
            },
            concurrency: Some(1),
            force: false,
        }
    }

    /// A run killed midway leaves its scores in `.scores`, a last line maybe cut off; the next
    /// run with the same settings keeps those scores (here a planted one, to tell it from a
    /// recomputed one) and scores only the rest. A finished run's scores serve another window.
    /// Other settings are refused.
    #[test]
    fn a_killed_run_resumes_from_its_scores() {
        let dir = std::env::temp_dir().join(format!("xqtune-book-resume-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let suite = dir.join("suite.txt");
        std::fs::write(
            &suite,
            "# a header\nstartpos moves h2e2 # first\nstartpos moves b0c2\nh0g2 h9g7\n",
        )
        .unwrap();
        let out = dir.join("book.txt");
        let a = args(&suite, &out);
        run_cli(&a).unwrap();
        let whole = std::fs::read_to_string(&out).unwrap();
        assert!(whole.starts_with("# a header\n# Unbalanced: made by `xqtune book "));
        let scores: Vec<&str> = whole
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.rsplit("score ").next().unwrap())
            .collect();
        assert_eq!(scores.len(), 3);
        let kept = std::fs::read_to_string(scores_path(&out)).unwrap();
        assert_eq!(kept.lines().skip(1).collect::<Vec<_>>(), scores);
        // the same again needs --force
        assert!(run_cli(&a).unwrap_err().to_string().contains("--force"));

        let (_, lines) = read_suite(&suite).unwrap();
        let scorer = Scorer {
            eval: Arc::new(EvalParams::default()),
            search: SearchParams::default(),
            evaluator: Evaluator::Classical,
            nodes: 500,
        };
        let key = settings_key(&lines, &scorer).unwrap();
        std::fs::write(
            scores_path(&out),
            format!("{SCORES_TAG} {key}\n+777\n{}\n-1", scores[1]),
        )
        .unwrap();
        let a = BookArgs { force: true, ..a };
        run_cli(&a).unwrap();
        let resumed = std::fs::read_to_string(&out).unwrap();
        let mut expected: Vec<String> = whole.lines().map(str::to_string).collect();
        let first = expected.iter().position(|l| !l.starts_with('#')).unwrap();
        expected[first] = "startpos moves h2e2 # first | score +777".to_string();
        assert_eq!(resumed.lines().collect::<Vec<_>>(), expected);
        // another window filters the kept scores again: only the planted one is in 700..800
        let narrow = BookArgs {
            window: Window { lo: 700, hi: 800 },
            ..a.clone()
        };
        run_cli(&narrow).unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines, ["startpos moves h2e2 # first | score +777"]);

        // a scores file cut within its first line holds nothing: all is scored again
        std::fs::write(scores_path(&out), &SCORES_TAG[..5]).unwrap();
        run_cli(&a).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), whole);

        // a scores file of other settings is not used
        std::fs::remove_file(&out).unwrap();
        std::fs::write(scores_path(&out), format!("{SCORES_TAG} other\n+5\n")).unwrap();
        let e = run_cli(&a).unwrap_err().to_string();
        assert!(e.contains("other openings or settings"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
