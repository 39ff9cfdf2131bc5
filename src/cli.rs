//! Command line: clap subcommands. With no subcommand the engine speaks UCI.

use crate::core::{Position, Variant, perft};
use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    name = "xqtune",
    version,
    about = "Xiangqi/Jieqi engine and evaluation tuner"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Without a subcommand: the engine's parameter files for UCI mode.
    #[command(flatten)]
    pub uci: crate::uci::UciArgs,
    /// Where tasks run: local threads, or the ranks of an MPI job (default: MPI when started
    /// by mpirun/srun with more than one rank; needs a build with `--features mpi`).
    #[arg(long, global = true, value_enum)]
    pub executor: Option<crate::exec::ExecutorKind>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Count leaf nodes of the legal move tree (move generator proof and speed test).
    Perft {
        /// Depth in plies (1-12).
        #[arg(long, short, value_parser = clap::value_parser!(u32).range(1..=12))]
        depth: u32,
        /// Start position (default: the start of the variant). A Jieqi FEN
        /// (`<board> <side> <pool> <halfmove> <fullmove>`) is recognised by its pool field.
        #[arg(long)]
        fen: Option<String>,
        /// xiangqi or jieqi: the start position without --fen, and how to read a FEN whose
        /// layout cannot tell (a Xiangqi FEN read as jieqi is bright Jieqi).
        #[arg(long)]
        variant: Option<Variant>,
        /// Print one line per root move with its node count.
        #[arg(long)]
        divide: bool,
    },
    /// Score a position with the static evaluation (`--trace`: term by term).
    Eval(crate::eval::EvalArgs),
    /// Import PGN games (Chinese, WXF or coordinate notation; UTF-8, GBK or Big5) into a
    /// labelled dataset.
    Import(crate::import::ImportArgs),
    /// Speak UCI (or UCCI when the first command is `ucci`) on stdin/stdout.
    Uci(crate::uci::UciArgs),
    /// Search the fixed bench positions to a fixed depth; prints `Nodes searched: N`.
    Bench(crate::bench::BenchArgs),
    /// Play engine A against engine B: parallel games, opening pairs, Elo, SPRT, records.
    Match(Box<crate::play::MatchArgs>),
    /// Compare two matches against the same opponent game by game (same openings and colours):
    /// the score difference with its 95 % interval over the openings.
    Compare(crate::play::compare::CompareArgs),
    /// Play a gauntlet or a round robin of engines from a file: ratings with intervals, cross
    /// table, records, resume.
    Tournament(Box<crate::play::tournament::cli::TournamentArgs>),
    /// Tune parameters: ga, spsa or texel (a run folder under results/).
    #[command(subcommand)]
    Tune(Box<crate::tune::TuneCommand>),
    /// Make an unbalanced opening suite: score each opening with the engine, keep those in a
    /// score window.
    Book(crate::play::book::BookArgs),
    /// Generate labelled quiet positions from self-play (for `tune texel`).
    Datagen(crate::tune::datagen::DatagenArgs),
    /// Score the positions of a dataset with an engine's search (for `tune texel --lambda`).
    Label(crate::tune::label::LabelArgs),
    /// The self-play learning loop: datagen with the best network, train, gate, repeat.
    Learn(Box<crate::tune::learn::LearnArgs>),
    /// Rebuild the plots of a run folder from its log.csv.
    Plot(crate::tune::PlotArgs),
    /// Export parameter tables as full 9x10 boards (json, csv, rust, markdown).
    Export(crate::tune::export::ExportArgs),
    /// Check an external engine's options: which of them change nothing through setoption.
    #[command(subcommand)]
    Options(crate::tune::check::OptionsCommand),
    /// Manage parameter files (promote a run's best.json into params/).
    #[command(subcommand)]
    Params(crate::tune::ParamsCommand),
}

pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    // Only the commands that hand out tasks join an MPI job: `xqtune uci` started as an
    // external engine by a rank inherits the launcher's environment and must stay an engine.
    let executor_command = matches!(
        cli.command,
        Some(
            Command::Match(_)
                | Command::Tournament(_)
                | Command::Tune(_)
                | Command::Datagen(_)
                | Command::Label(_)
                | Command::Book(_)
                | Command::Learn(_)
        )
    );
    if !executor_command {
        if !matches!(cli.command, Some(Command::Options(_))) {
            quit_when_stdout_closes();
        }
        return exit_code(run(cli));
    }
    let role = match crate::exec::init(cli.executor) {
        Ok(r) => r,
        Err(e) => return exit_code(Err(e)),
    };
    let result = if role == crate::exec::Role::Worker {
        // Another rank of an MPI job: serve rank 0's jobs with this command's threads, from
        // the folder a resumed match was started in (its engine commands may be relative).
        if let Some(Command::Match(a)) = &cli.command
            && let Some(dir) = &a.resume
            && let Err(e) = crate::play::resume::enter_cwd_of(dir)
        {
            return exit_code(Err(e));
        }
        crate::exec::serve(worker_threads(&cli), registry())
    } else {
        let r = run(cli);
        // The engines kept between games end with the command that played them.
        crate::exec::finish();
        r
    };
    exit_code(result)
}

/// A command that starts no engine ends quietly when the reader of its output goes away
/// (`xqtune params signal RUN | head`), killed by SIGPIPE as `cat` is, where Rust's default (the
/// signal ignored) turns the next print into a panic. Commands that start engines keep that
/// default: an engine that dies mid-game must be an error on its pipe, not the end of xqtune;
/// their lines go through [`crate::outln!`], which ends them by SIGPIPE all the same.
fn quit_when_stdout_closes() {
    #[cfg(target_os = "linux")]
    // SAFETY: `signal` with the default disposition, before this process starts any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Every kind of work a worker rank can be sent: the one place that knows them all.
fn registry() -> crate::exec::Registry {
    crate::exec::Registry::new()
        .job::<crate::play::job::GameJob>()
        .job::<crate::tune::datagen::DatagenJob>()
        .job::<crate::tune::label::LabelJob>()
        .job::<crate::play::book::BookJob>()
        .resident::<crate::tune::texel::data::TexelShare>()
        .resident::<crate::tune::nnue::data::NnueShare>()
}

fn exit_code(result: Result<()>) -> i32 {
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e:#}");
            1
        }
    }
}

/// The threads a worker rank plays with: the command's `--concurrency`, else every core.
fn worker_threads(cli: &Cli) -> usize {
    let given = match &cli.command {
        Some(Command::Match(a)) => Some(a.game.concurrency).filter(|&n| n > 0),
        Some(Command::Tournament(a)) => Some(a.game.concurrency).filter(|&n| n > 0),
        Some(Command::Tune(t)) => match t.as_ref() {
            crate::tune::TuneCommand::Ga(a) => a.common.concurrency,
            crate::tune::TuneCommand::Spsa(a) => a.common.concurrency,
            crate::tune::TuneCommand::Texel(a) => a.common.concurrency,
            crate::tune::TuneCommand::Nnue(a) => a.common.concurrency,
        },
        Some(Command::Datagen(a)) => a.concurrency,
        Some(Command::Label(a)) => a.concurrency,
        Some(Command::Book(a)) => a.concurrency,
        Some(Command::Learn(a)) => a.common.concurrency,
        _ => None,
    };
    given.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The engine flags given before a subcommand, which only the engine without a subcommand
/// reads (`xqtune --search-params F bench` would otherwise bench the embedded constants).
fn engine_flags_given(a: &crate::uci::UciArgs) -> Vec<&'static str> {
    let mut given = a.engine.given();
    given.extend(
        [
            ("--tune-options", a.tune_options),
            ("--print-tune", a.print_tune),
        ]
        .iter()
        .filter(|g| g.1)
        .map(|g| g.0),
    );
    given
}

fn run(cli: Cli) -> Result<()> {
    if cli.command.is_some() {
        let given = engine_flags_given(&cli.uci);
        if !given.is_empty() {
            anyhow::bail!(
                "{} before the subcommand sets up the engine without a subcommand only; give \
                 it after the subcommand (for example `xqtune bench --search-params FILE`)",
                given.join(", ")
            );
        }
    }
    match cli.command {
        None => crate::uci::run_with_args(&cli.uci),
        Some(Command::Uci(args)) => crate::uci::run_with_args(&args),
        Some(Command::Bench(args)) => crate::bench::run_cli(&args),
        Some(Command::Book(args)) => crate::play::book::run_cli(&args),
        Some(Command::Perft {
            depth,
            fen,
            variant,
            divide,
        }) => run_perft(depth, fen.as_deref(), variant, divide),
        Some(Command::Eval(args)) => crate::eval::run_cli(&args),
        Some(Command::Import(args)) => crate::import::cli::run(&args),
        Some(Command::Match(args)) => crate::play::run_cli(&args),
        Some(Command::Tournament(args)) => crate::play::tournament::cli::run_cli(&args),
        Some(Command::Tune(c)) => crate::tune::run_tune(*c),
        Some(Command::Learn(a)) => crate::tune::learn::run_learn(&a)
            .map(|_| ())
            .map_err(Into::into),
        Some(Command::Datagen(a)) => crate::tune::datagen::run_datagen(&a)
            .map(|_| ())
            .map_err(Into::into),
        Some(Command::Label(a)) => crate::tune::label::run_label(&a)
            .map(|_| ())
            .map_err(Into::into),
        Some(Command::Compare(a)) => crate::play::compare::run_compare(&a).map(|_| ()),
        Some(Command::Plot(a)) => crate::tune::run_plot(a),
        Some(Command::Export(a)) => crate::tune::export::run_export(&a).map_err(Into::into),
        Some(Command::Params(c)) => crate::tune::run_params(c),
        Some(Command::Options(crate::tune::check::OptionsCommand::Check(a))) => {
            crate::tune::check::run_check(&a)
        }
    }
}

fn run_perft(depth: u32, fen: Option<&str>, variant: Option<Variant>, divide: bool) -> Result<()> {
    let mut pos = match (fen, variant) {
        (Some(f), None) => Position::from_fen(f).with_context(|| format!("invalid FEN '{f}'"))?,
        (Some(f), Some(v)) => {
            Position::from_fen_variant(f, v).with_context(|| format!("invalid {v} FEN '{f}'"))?
        }
        (None, v) => Position::startpos_of(v.unwrap_or_default()),
    };
    let start = Instant::now();
    let nodes = if divide {
        let mut total = 0;
        for (m, n) in perft::divide(&mut pos, depth) {
            println!("{}: {n}", pos.move_text(m));
            total += n;
        }
        total
    } else {
        perft::perft(&mut pos, depth)
    };
    let ms = start.elapsed().as_millis();
    let nps = (nodes as f64 / start.elapsed().as_secs_f64().max(1e-9)) as u64;
    println!("nodes {nodes} time_ms {ms} nps {nps}");
    Ok(())
}
