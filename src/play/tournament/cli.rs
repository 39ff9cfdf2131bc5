//! `xqtune tournament`: engines from a file, a gauntlet or a round robin, live standings, the
//! records of `match` (`games.pgn`, `summary.json`) with the rating list, the cross table and
//! `ratings.png`/`.svg`, and `--resume` after a kill without replaying a finished game.
//!
//! The run folder `results/<utc-timestamp>_tournament_<name>/` holds `config.json` (the
//! engines as validated, paths absolute, and every game flag: what `--resume` reads),
//! `games.jsonl` (the [journal](crate::play::journal) of finished games), and the records, rewritten
//! atomically at most every 10 s and at the end.

use super::{Format, Standings, TournamentProgress, pairings, run_tournament};
use crate::chart::{IntervalChart, IntervalRow, interval_chart};
use crate::play::journal::Journal;
use crate::play::pgn::{self, PgnHeader};
use crate::play::ratings::{Anchor, RatingList};
use crate::play::roster::{RosterEntry, load_roster, parse_roster};
use crate::play::runner::Engine;
use crate::play::{
    GameArgs, MatchConfig, affinity_warning, clock_warning, limits_text, result_lines,
};
use crate::util;
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// `xqtune tournament`.
#[derive(clap::Args, Debug, Clone)]
pub struct TournamentArgs {
    /// The engines: a JSON array of {"name", "command", "protocol", "options", "variants"} or
    /// {"name", "internal": true, "params", "net"} (docs/tournaments.md).
    #[arg(long)]
    pub engines: Option<PathBuf>,
    /// gauntlet (the first engine against each of the others) or round-robin (every pair).
    #[arg(long, value_enum, default_value = "round-robin")]
    pub format: Format,
    /// Games per pairing (pairs with colours swapped on one opening).
    #[arg(long, default_value_t = 100)]
    pub games: usize,
    #[command(flatten)]
    pub game: GameArgs,
    /// Fix the rating scale: `NAME=ELO` (default: the first engine at 0).
    #[arg(long)]
    pub anchor: Option<String>,
    /// Resamples of the bootstrap that gives the 95% intervals and the LOS.
    #[arg(long, default_value_t = 1000)]
    pub bootstrap: usize,
    /// Seconds between the standings tables printed while the tournament runs (0: none).
    #[arg(long, default_value_t = 60)]
    pub table_every: u64,
    /// Name of the run (`results/<timestamp>_tournament_<name>/`).
    #[arg(long, default_value = "tournament")]
    pub name: String,
    /// Folder for the run folders.
    #[arg(long, default_value = "results")]
    pub out_dir: PathBuf,
    /// Continue the tournament of this run folder: its config.json replaces every other flag
    /// but --concurrency, --affinity and --table-every; finished games are not played again.
    #[arg(long)]
    pub resume: Option<PathBuf>,
}

/// What `config.json` records: everything that decides the games, so that `--resume` plays
/// the same ones.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TournamentConfig {
    pub version: String,
    pub created: String,
    pub name: String,
    pub format: Format,
    pub games: usize,
    /// The engines in the engines file's format (absolute paths).
    pub engines: serde_json::Value,
    pub game: GameArgs,
    pub anchor: Option<String>,
    pub bootstrap: usize,
}

/// A tournament ready to play: its engines, configuration and anchor.
struct Setup {
    config: TournamentConfig,
    entries: Vec<RosterEntry>,
    engines: Vec<Engine>,
    cfg: MatchConfig,
    anchor: Anchor,
}

impl Setup {
    fn names(&self) -> Vec<String> {
        self.engines.iter().map(|e| e.name().to_string()).collect()
    }
}

/// `NAME=ELO` against the engine names.
fn parse_anchor(text: Option<&str>, names: &[String]) -> Result<Anchor> {
    let Some(t) = text else {
        return Ok(Anchor::Engine { index: 0, elo: 0.0 });
    };
    let (name, elo) = t
        .rsplit_once('=')
        .with_context(|| format!("--anchor '{t}' is not NAME=ELO"))?;
    let elo: f64 = elo
        .trim()
        .parse()
        .ok()
        .filter(|e: &f64| e.is_finite())
        .with_context(|| format!("--anchor '{t}': '{elo}' is not a number"))?;
    let name = name.trim();
    match names.iter().position(|n| n == name) {
        Some(index) => Ok(Anchor::Engine { index, elo }),
        None => bail!(
            "--anchor: no engine of the tournament is named '{name}' (engines: {})",
            names.join(", ")
        ),
    }
}

/// The engines that play the tournament's variant, built; the others sit out with a note.
fn setup(config: TournamentConfig, entries: Vec<RosterEntry>) -> Result<Setup> {
    let cfg = config.game.match_config(config.games)?;
    let variant = cfg.variant;
    let mut playing = Vec::new();
    for (i, e) in entries.into_iter().enumerate() {
        if e.plays(variant) {
            playing.push(e);
        } else if i == 0 && config.format == Format::Gauntlet {
            bail!(
                "the gauntlet's engine '{}' (the first of the file) does not play {variant} \
                 (its \"variants\" are {:?})",
                e.name,
                e.variants
            );
        } else {
            eprintln!("note: {} sits out: it does not play {variant}", e.name);
        }
    }
    if playing.len() < 2 {
        bail!("a tournament needs at least two engines that play {variant}");
    }
    let engines = playing
        .iter()
        .map(|e| e.engine(variant))
        .collect::<Result<Vec<_>>>()?;
    let names: Vec<String> = engines.iter().map(|e| e.name().to_string()).collect();
    let anchor = parse_anchor(config.anchor.as_deref(), &names)?;
    // Last, once everything else is known to be right: each engine starts.
    for e in &engines {
        e.check_starts()?;
    }
    Ok(Setup {
        config,
        entries: playing,
        engines,
        cfg,
        anchor,
    })
}

/// A new run: the engines file read and checked, the folder and its `config.json`.
fn create(args: &TournamentArgs) -> Result<(PathBuf, Setup)> {
    let Some(file) = &args.engines else {
        bail!("give the engines (--engines FILE), or --resume a tournament's run folder");
    };
    let entries = load_roster(file)?;
    let mut game = args.game.clone();
    if let Some(o) = &game.openings {
        // so that --resume from another folder reads the same suite
        game.openings = Some(o.canonicalize().unwrap_or_else(|_| o.clone()));
    }
    let config = TournamentConfig {
        version: env!("CARGO_PKG_VERSION").to_string(),
        created: chrono::Utc::now().to_rfc3339(),
        name: args.name.clone(),
        format: args.format,
        games: args.games,
        engines: serde_json::Value::Array(entries.iter().map(RosterEntry::to_json).collect()),
        game,
        anchor: args.anchor.clone(),
        bootstrap: args.bootstrap,
    };
    // Everything is checked (engines, flags, anchor, and that each engine starts) before a
    // folder is made.
    let setup = setup(config, entries)?;
    let dir = util::create_run_dir(&args.out_dir, "tournament", &args.name, '_', &[])
        .with_context(|| format!("creating a run folder in {}", args.out_dir.display()))?;
    let json = serde_json::to_string_pretty(&setup.config).context("serialising the config")?;
    util::write_atomic(&dir.join("config.json"), (json + "\n").as_bytes())
        .with_context(|| format!("writing {}", dir.join("config.json").display()))?;
    Ok((dir, setup))
}

/// A resumed run: the recorded settings, with the command line's concurrency and affinity.
fn open(dir: &Path, args: &TournamentArgs) -> Result<Setup> {
    let path = dir.join("config.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("{} is not a tournament's run folder", dir.display()))?;
    let mut config: TournamentConfig =
        serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
    if args.game.concurrency > 0 {
        config.game.concurrency = args.game.concurrency;
    }
    config.game.affinity |= args.game.affinity;
    let label = path.display().to_string();
    let entries = parse_roster(&label, &config.engines.to_string(), Path::new("/"))?;
    setup(config, entries)
}

/// The finished games of the journal, checked against the tournament's plan.
fn check_journal(
    standings: &mut Standings,
    games: Vec<(usize, crate::play::GameRecord)>,
) -> Result<()> {
    let total = standings.games.len();
    for (id, rec) in games {
        if id >= total {
            bail!("the journal has game {id}, but the tournament has {total} games");
        }
        let (p, g) = standings.locate(id);
        let pr = standings.pairings[p];
        let (red, black) = if g.is_multiple_of(2) {
            (pr.a, pr.b)
        } else {
            (pr.b, pr.a)
        };
        let (red, black) = (&standings.names[red], &standings.names[black]);
        if &rec.red != red || &rec.black != black || rec.index != g {
            bail!(
                "game {id} of the journal ({} vs {}, game {}) is not this tournament's ({red} vs \
                 {black}, game {g})",
                rec.red,
                rec.black,
                rec.index
            );
        }
        standings.games[id] = Some(rec);
    }
    Ok(())
}

/// `xqtune tournament`.
pub fn run_cli(args: &TournamentArgs) -> Result<()> {
    let (dir, mut setup) = match &args.resume {
        Some(d) => (d.clone(), open(d, args)?),
        None => create(args)?,
    };
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // (A second handler in one process is not worth stopping for: Ctrl-C then kills.)
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    setup.cfg.stop = Some(stop.clone());
    let names = setup.names();
    let plan = pairings(setup.config.format, names.len());
    let mut standings = Standings::new(names.clone(), plan.clone(), setup.config.games);
    let (mut journal, done) = Journal::open(&dir.join("games.jsonl"))?;
    check_journal(&mut standings, done)?;
    let total = standings.games.len();
    let before = standings.finished();
    let cfg = &setup.cfg;
    eprintln!(
        "{} of {} engines ({}), {} games per pairing, {} games, {}, concurrency {}{}",
        match setup.config.format {
            Format::Gauntlet => "gauntlet",
            Format::RoundRobin => "round robin",
        },
        names.len(),
        names.join(", "),
        setup.config.games,
        total,
        limits_text(cfg),
        crate::play::runner::threads(cfg.concurrency, usize::MAX),
        if before > 0 {
            format!(", {before} games already played")
        } else {
            String::new()
        }
    );
    let engine_pairs = plan
        .iter()
        .map(|p| (&setup.engines[p.a], &setup.engines[p.b]));
    for w in [clock_warning(cfg, engine_pairs), affinity_warning(cfg)]
        .into_iter()
        .flatten()
    {
        eprintln!("{w}");
    }
    let bar = crate::progress::Progress::new(
        total as u64,
        before as u64,
        "{elapsed_precise} [{bar:30}] {pos}/{len} games  {msg}",
        "tournament",
    );
    let started = Instant::now();
    let mut last_save = Instant::now();
    let mut last_table = Instant::now();
    let table_every = Duration::from_secs(args.table_every);
    let report = run_tournament(
        &setup.engines,
        standings,
        cfg,
        &mut |p: &TournamentProgress| {
            let id = p.pairing * p.state.games_per_pairing + p.game.index;
            journal.record(id, p.game, &stop);
            let r = p.state.result(p.pairing);
            let pr = p.state.pairings[p.pairing];
            bar.set(
                p.finished as u64,
                format!(
                    "{} vs {}: {}-{}-{}",
                    p.state.names[pr.a], p.state.names[pr.b], r.wins, r.losses, r.draws
                ),
            );
            if args.table_every > 0 && last_table.elapsed() >= table_every {
                last_table = Instant::now();
                let list = p.state.ratings(&setup.anchor, 0, setup.config.game.seed);
                for l in standings_lines(p.state, list.as_ref(), false) {
                    bar.println(l);
                }
            }
            if last_save.elapsed().as_secs() >= 10 {
                last_save = Instant::now();
                if let Err(e) = save_records(&dir, &setup, p.state, started.elapsed(), false) {
                    bar.println(format!("warning: cannot write partial records: {e:#}"));
                }
            }
        },
    )?;
    bar.finish_and_clear();
    if let Some(e) = journal.failure() {
        bail!(
            "cannot record a finished game ({e}); the games recorded so far are kept: fix the \
             cause and continue with xqtune tournament --resume {}",
            dir.display()
        );
    }
    let st = &report.standings;
    for (p, pr) in st.pairings.iter().enumerate() {
        let r = st.result(p);
        if r.games() > 0 {
            for l in result_lines(&st.names[pr.a], &st.names[pr.b], &r, None) {
                crate::outln!("{l}");
            }
            crate::outln!();
        }
    }
    let list = st.ratings(
        &setup.anchor,
        setup.config.bootstrap,
        setup.config.game.seed,
    );
    for l in standings_lines(st, list.as_ref(), true) {
        crate::outln!("{l}");
    }
    crate::outln!(
        "{} games in {:.1} s: {:.1} games/minute{}",
        report.played_now,
        report.elapsed.as_secs_f64(),
        report.games_per_minute(),
        if report.stopped_early {
            " (stopped early)"
        } else {
            ""
        }
    );
    save_records(&dir, &setup, st, report.elapsed, !report.stopped_early)?;
    if let Some(list) = &list {
        plot_ratings(&dir, &setup, list)?;
    }
    crate::outln!("Records: {}", dir.display());
    if report.stopped_early {
        crate::outln!(
            "stopped after {} of {} games; continue with: xqtune tournament --resume {}",
            st.finished(),
            total,
            dir.display()
        );
    }
    Ok(())
}

/// The rating list as a table, best first, and (with `cross`) the cross table.
pub fn standings_lines(st: &Standings, list: Option<&RatingList>, cross: bool) -> Vec<String> {
    let mut out = Vec::new();
    let Some(list) = list else {
        out.push(format!(
            "{} of {} games played; ratings once the engines that have played form one pool",
            st.finished(),
            st.games.len()
        ));
        return out;
    };
    let width = st
        .names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let intervals = list.bootstrap > 0;
    out.push(format!(
        "{:>4}  {:<width$}  {:>7}  {:>17}  {:>6}  {:>7}  {:>6}  {:>6}",
        "Rank",
        "Name",
        "Elo",
        if intervals { "95% interval" } else { "" },
        "Games",
        "Points",
        "Score",
        if intervals { "LOS" } else { "" },
    ));
    for (k, e) in list.engines.iter().enumerate() {
        out.push(format!(
            "{:>4}  {:<width$}  {:>7.1}  {:>17}  {:>6}  {:>7.1}  {:>5.1}%  {:>6}",
            k + 1,
            e.name,
            e.rating,
            if intervals {
                format!("[{:.1}, {:.1}]", e.lower, e.upper)
            } else {
                String::new()
            },
            e.games,
            e.points,
            e.score() * 100.0,
            match (intervals, e.los_next) {
                (true, Some(l)) => format!("{:.1}%", l * 100.0),
                _ => String::new(),
            }
        ));
    }
    let mut notes = vec![format!("anchor {}", list.anchor)];
    if intervals {
        notes.push(format!(
            "95% intervals from {} bootstrap resamples of game pairs, LOS over the next engine",
            list.bootstrap
        ));
    }
    if list.prior {
        notes.push("a perfect score: one virtual draw added to every pairing".into());
    }
    if !list.unrated.is_empty() {
        notes.push(format!("no games yet: {}", list.unrated.join(", ")));
    }
    out.push(format!("({})", notes.join("; ")));
    if cross {
        let cells = st.cross_table();
        let order: Vec<usize> = list.engines.iter().map(|e| e.index).collect();
        out.push(String::new());
        out.push("Cross table (points of the row's engine against the column's / games):".into());
        let mut head = format!("{:>4}  {:<width$}", "", "");
        for k in 0..order.len() {
            head.push_str(&format!("  {:>11}", k + 1));
        }
        out.push(head);
        for (k, &i) in order.iter().enumerate() {
            let mut line = format!("{:>4}  {:<width$}", k + 1, st.names[i]);
            for &j in &order {
                let cell = match cells[i][j] {
                    _ if i == j => "-".to_string(),
                    Some((pts, g)) => format!("{pts:.1}/{g}"),
                    None => String::new(),
                };
                line.push_str(&format!("  {cell:>11}"));
            }
            out.push(line);
        }
    }
    out
}

/// `summary.json`: the table, the ratings, the cross table, each pairing's statistics.
fn summary_json(
    setup: &Setup,
    st: &Standings,
    list: Option<&RatingList>,
    elapsed: Duration,
) -> serde_json::Value {
    let num = crate::play::stats::json_number;
    let mut terminations = std::collections::BTreeMap::<String, u32>::new();
    for g in st.games.iter().flatten() {
        *terminations.entry(g.termination.to_string()).or_default() += 1;
    }
    let pairings: Vec<serde_json::Value> = st
        .pairings
        .iter()
        .enumerate()
        .map(|(p, pr)| {
            let mut fields = st.result(p).summary_fields();
            fields.insert("a".into(), st.names[pr.a].clone().into());
            fields.insert("b".into(), st.names[pr.b].clone().into());
            serde_json::Value::Object(fields)
        })
        .collect();
    let ratings = list.map(|l| {
        serde_json::json!({
            "anchor": l.anchor,
            "bootstrap": l.bootstrap,
            "prior": l.prior,
            "unrated": l.unrated,
            "list": l.engines.iter().enumerate().map(|(k, e)| serde_json::json!({
                "rank": k + 1,
                "name": e.name,
                "elo": num(e.rating),
                "lower": num(e.lower),
                "upper": num(e.upper),
                "games": e.games,
                "points": e.points,
                "score": num(e.score()),
                "los_next": e.los_next.map(num),
            })).collect::<Vec<_>>(),
        })
    });
    let cells = st.cross_table();
    let cross: Vec<Vec<serde_json::Value>> = cells
        .iter()
        .map(|row| {
            row.iter()
                .map(|c| match c {
                    Some((pts, g)) => serde_json::json!({ "points": pts, "games": g }),
                    None => serde_json::Value::Null,
                })
                .collect()
        })
        .collect();
    let finished = st.finished();
    let game_time: u64 = st.games.iter().flatten().map(|g| g.duration_ms).sum();
    serde_json::json!({
        "name": setup.config.name,
        "format": setup.config.format,
        "variant": setup.cfg.variant.to_string(),
        "limits": limits_text(&setup.cfg),
        "seed": setup.cfg.seed,
        "games_per_pairing": setup.config.games,
        "games_planned": st.games.len(),
        "games": finished,
        "engines": setup.engines.iter().zip(&setup.entries).map(|(e, r)| serde_json::json!({
            "name": e.name(),
            "internal": r.is_internal(),
            "params_hash": e.params_hash(),
        })).collect::<Vec<_>>(),
        "ratings": ratings,
        "cross_table": { "engines": st.names, "cells": cross },
        "pairings": pairings,
        "terminations": terminations,
        "elapsed_s": elapsed.as_secs_f64(),
        "games_seconds": game_time as f64 / 1000.0,
    })
}

/// Writes `games.pgn` and `summary.json` (atomically; `complete` is recorded).
fn save_records(
    dir: &Path,
    setup: &Setup,
    st: &Standings,
    elapsed: Duration,
    complete: bool,
) -> Result<()> {
    let header = PgnHeader {
        event: format!("xqtune tournament {}", setup.config.name),
        date: chrono::Utc::now().format("%Y.%m.%d").to_string(),
        time_control: limits_text(&setup.cfg),
        variant: setup.cfg.variant.to_string(),
    };
    let text: String = st
        .games
        .iter()
        .flatten()
        .map(|g| pgn::game_pgn(&header, g))
        .collect();
    util::write_atomic(&dir.join("games.pgn"), text.as_bytes())
        .with_context(|| format!("writing {}", dir.join("games.pgn").display()))?;
    let list = st.ratings(
        &setup.anchor,
        setup.config.bootstrap,
        setup.config.game.seed,
    );
    let mut summary = summary_json(setup, st, list.as_ref(), elapsed);
    summary["complete"] = serde_json::json!(complete);
    let json = serde_json::to_string_pretty(&summary).context("serialising the summary")?;
    util::write_atomic(&dir.join("summary.json"), (json + "\n").as_bytes())
        .with_context(|| format!("writing {}", dir.join("summary.json").display()))?;
    Ok(())
}

/// `ratings.png` and `ratings.svg`: each engine's rating with its 95 % interval.
fn plot_ratings(dir: &Path, setup: &Setup, list: &RatingList) -> Result<()> {
    let rows = list
        .engines
        .iter()
        .map(|e| IntervalRow {
            label: e.name.clone(),
            value: e.rating,
            lower: e.lower,
            upper: e.upper,
        })
        .collect();
    let chart = IntervalChart {
        title: format!("{}: ratings with 95% intervals", setup.config.name),
        note: Some(format!(
            "{} {}, {} games per pairing, anchor {}{}",
            setup.cfg.variant,
            limits_text(&setup.cfg),
            setup.config.games,
            list.anchor,
            if list.prior {
                " (a perfect score: one virtual draw per pairing)"
            } else {
                ""
            }
        )),
        x_label: "Elo".into(),
        rows,
    };
    interval_chart(&dir.join("ratings"), &chart)
        .map_err(|e| anyhow::anyhow!("ratings plot: {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_name_an_engine() {
        let names = vec!["a".to_string(), "b=x".to_string()];
        assert_eq!(
            parse_anchor(None, &names).unwrap(),
            Anchor::Engine { index: 0, elo: 0.0 }
        );
        assert_eq!(
            parse_anchor(Some("b=x=2400"), &names).unwrap(),
            Anchor::Engine {
                index: 1,
                elo: 2400.0
            }
        );
        let e = parse_anchor(Some("c=1"), &names).unwrap_err().to_string();
        assert!(e.contains("'c'") && e.contains("a, b=x"), "{e}");
        assert!(parse_anchor(Some("a"), &names).is_err());
        assert!(parse_anchor(Some("a=x"), &names).is_err());
    }
}
