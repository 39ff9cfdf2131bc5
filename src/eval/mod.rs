//! Evaluation: a data-driven, tapered Xiangqi evaluation that reports its own coefficients.
//!
//! Modules, each importing only those listed before it:
//!
//! - [`score`]: the `S(mg, eg)` pair and the phase blend.
//! - [`tables`]: which squares each piece's position table stores, and the square lookups.
//! - [`layout`]: the term tables of Xiangqi and Jieqi, their ids, offsets and names, and the
//!   flat index space (Xiangqi values, then Jieqi values named `jieqi.*`).
//! - [`trace`](mod@trace): the tracers the evaluation reports its parameter uses to.
//! - [`params`]: the values of the terms, their bounds, the derived lookup tables and the params
//!   files (`params/xiangqi.json`, `params/jieqi.json`, embedded as the defaults).
//! - [`evaluate`](mod@evaluate): the Xiangqi evaluation, generic over a [`Tracer`].
//! - [`jieqi`](mod@jieqi): the Jieqi evaluation: Jieqi piece values, whole-board advisor,
//!   elephant and pawn tables, dark pieces worth their pool's average, plus the Xiangqi terms
//!   that keep their meaning.
//! - [`nnue`]: the neural-network evaluation (network files, features, accumulators,
//!   quantised inference); it uses none of the modules above.
//!
//! The variant is data in the position: [`evaluate()`] dispatches on it. Whether Jieqi
//! positions use the Jieqi terms at all is an option of the engine (`jieqi_eval`, off for the
//! `--b-xiangqi-eval-in-jieqi` baseline), not a parameter.

pub mod evaluate;
pub mod jieqi;
pub mod layout;
pub mod nnue;
pub mod params;
pub mod score;
pub mod tables;
pub mod trace;

pub use crate::tunable::ParamsError;
pub use evaluate::phase;
pub use jieqi::{dark_piece_value, pool_weights};
pub use layout::{JIEQI_TERMS, Shape, TERMS, TermDef};
pub use params::EvalParams;
pub use score::{DARK_SCALE, S};
pub use tables::pst_squares;
pub use trace::{CoeffTracer, NoTrace, Trace, Tracer};

use crate::core::{Color, Position, Variant};
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Whether `pos` is scored by the Jieqi evaluation (else by the Xiangqi one).
#[inline(always)]
fn jieqi_eval_applies(pos: &Position, jieqi_eval: bool) -> bool {
    pos.variant() == Variant::Jieqi && jieqi_eval
}

/// The evaluation from red's point of view, recording parameter uses into `tracer`.
/// `jieqi_eval`: whether Jieqi positions are scored with the Jieqi terms (`false`: the Xiangqi
/// terms over the visible kinds, dark pieces as the kind of their square; a match baseline).
#[inline]
pub fn evaluate_red_for<T: Tracer>(
    pos: &Position,
    params: &EvalParams,
    jieqi_eval: bool,
    tracer: &mut T,
) -> i32 {
    if jieqi_eval_applies(pos, jieqi_eval) {
        jieqi::eval_red_jieqi(pos, params, tracer)
    } else {
        evaluate::eval_red(pos, params, tracer)
    }
}

/// The evaluation from red's point of view, recording parameter uses into `tracer` (Jieqi
/// positions with the Jieqi terms, as everywhere below).
#[inline]
pub fn evaluate_red_with<T: Tracer>(pos: &Position, params: &EvalParams, tracer: &mut T) -> i32 {
    evaluate_red_for(pos, params, true, tracer)
}

/// Static evaluation in centipawns from the side to move's point of view, Jieqi positions
/// scored with (`jieqi_eval`) or without the Jieqi terms (see [`evaluate_red_for`]).
#[inline]
pub fn evaluate_for(pos: &Position, params: &EvalParams, jieqi_eval: bool) -> i32 {
    evaluate_red_for(pos, params, jieqi_eval, &mut NoTrace) * pos.side_to_move().sign()
}

/// Static evaluation in centipawns from the side to move's point of view, recording parameter
/// uses into `tracer` ([`NoTrace`] compiles to the plain evaluation).
#[inline]
pub fn evaluate_with<T: Tracer>(pos: &Position, params: &EvalParams, tracer: &mut T) -> i32 {
    evaluate_red_with(pos, params, tracer) * pos.side_to_move().sign()
}

/// Static evaluation in centipawns from the side to move's point of view.
#[inline]
pub fn evaluate(pos: &Position, params: &EvalParams) -> i32 {
    evaluate_with(pos, params, &mut NoTrace)
}

/// Static evaluation in centipawns from red's point of view.
#[inline]
pub fn evaluate_red(pos: &Position, params: &EvalParams) -> i32 {
    evaluate_red_with(pos, params, &mut NoTrace)
}

/// An evaluation in two steps, for lazy use by the search: [`Partial::lazy`] is material and
/// position tables alone (the terms that move most), [`Partial::finish`] adds the rest and
/// equals [`evaluate_for`] exactly. Only for positions the Xiangqi evaluation scores (`None`
/// when the Jieqi evaluation applies).
#[derive(Clone, Copy, Debug)]
pub struct Partial {
    acc: S,
}

impl Partial {
    #[inline]
    pub fn new(pos: &Position, params: &EvalParams, jieqi_eval: bool) -> Option<Partial> {
        if jieqi_eval_applies(pos, jieqi_eval) {
            return None;
        }
        Some(Partial {
            acc: evaluate::psq_red(pos, params, &mut NoTrace),
        })
    }

    /// Material and position tables, tapered, from the side to move's point of view.
    #[inline]
    pub fn lazy(&self, pos: &Position) -> i32 {
        self.acc.taper(phase(pos)) * pos.side_to_move().sign()
    }

    /// The full evaluation from the side to move's point of view (equal to [`evaluate_for`]).
    #[inline]
    pub fn finish(self, pos: &Position, params: &EvalParams) -> i32 {
        evaluate::finish_red(pos, params, self.acc, &mut NoTrace) * pos.side_to_move().sign()
    }
}

/// The trace of `pos` (see [`Trace`]): red's point of view.
pub fn trace(pos: &Position, params: &EvalParams) -> Trace {
    let mut t = CoeffTracer::default();
    evaluate_red_with(pos, params, &mut t);
    t.finish()
}

/// `xqtune eval`: scores one position.
#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    /// The position (default: the start position).
    #[arg(long)]
    pub fen: Option<String>,
    /// Parameter file (default: the embedded params/xiangqi.json).
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Also print each term's contribution.
    #[arg(long)]
    pub trace: bool,
    /// Print the parameters in the file format (to start a new params file).
    #[arg(long)]
    pub print_params: bool,
    /// Jieqi parameter file (default: the embedded params/jieqi.json).
    #[arg(long, value_name = "FILE")]
    pub jieqi_params: Option<PathBuf>,
    /// Print the Jieqi parameters in the file format (to start a new jieqi.json).
    #[arg(long)]
    pub print_jieqi_params: bool,
    /// Also print this network's evaluation (`nnue red R side_to_move S`).
    #[arg(long, value_name = "FILE")]
    pub net: Option<PathBuf>,
}

/// Runs `xqtune eval`.
pub fn run_cli(args: &EvalArgs) -> Result<()> {
    let mut params = match &args.params {
        Some(path) => EvalParams::load(path)
            .with_context(|| format!("invalid params file {}", path.display()))?,
        None => EvalParams::default(),
    };
    if let Some(path) = &args.jieqi_params {
        params
            .load_jieqi(path)
            .with_context(|| format!("invalid Jieqi params file {}", path.display()))?;
    }
    if args.print_params {
        print!("{}", params.to_json_string());
        return Ok(());
    }
    if args.print_jieqi_params {
        print!("{}", params.jieqi_to_json_string());
        return Ok(());
    }
    let pos = match &args.fen {
        Some(f) => Position::from_fen(f).with_context(|| format!("invalid FEN '{f}'"))?,
        None => Position::startpos(),
    };
    let red = evaluate_red(&pos, &params);
    let stm = evaluate(&pos, &params);
    if args.trace {
        let mut tr = trace::SideTracer::default();
        evaluate_red_with(&pos, &params, &mut tr);
        let values = params.to_vec();
        println!(
            "{:<34} {:>8} {:>8} {:>8}",
            "term (cp after tapering, own view)", "red", "black", "net"
        );
        let mut total = 0.0;
        for (name, offset, len) in layout::term_spans() {
            let mut side = [0f64; 2];
            for i in offset..offset + len {
                for color in Color::ALL {
                    side[color.index()] += tr.uses(color.index(), i)
                        * trace::phase_weight(i, tr.phase)
                        * values[i] as f64;
                }
            }
            if side != [0.0, 0.0] {
                println!(
                    "{:<34} {:>8.1} {:>8.1} {:>8.1}",
                    name,
                    side[0],
                    -side[1] + 0.0,
                    side[0] + side[1]
                );
                total += side[0] + side[1];
            }
        }
        let danger = [tr.danger_cp(0, &values), tr.danger_cp(1, &values)];
        if danger != [0.0, 0.0] {
            println!(
                "{:<34} {:>8.1} {:>8.1} {:>8.1}",
                "king.danger (non-linear)",
                danger[0],
                danger[1],
                danger[0] - danger[1]
            );
            total += danger[0] - danger[1];
        }
        if let Some(i) = tr.scale_down {
            let i = i as usize;
            println!("{:<34} {:>26.2}", "total before the endgame scale", total);
            println!(
                "{:<34} {:>26}",
                format!("{} (64ths off)", layout::flat_names()[i]),
                values[i]
            );
            total *= trace::scale_keep(values[i] as f64);
        }
        println!("{:<34} {:>26.2}", "total", total);
        println!("{:<34} {:>26}", "phase (0 endgame .. 16 opening)", tr.phase);
    }
    println!("red {red} side_to_move {stm}");
    if let Some(path) = &args.net {
        let net = nnue::Network::load_named(path, pos.variant())
            .with_context(|| format!("invalid network file {}", path.display()))?;
        let stm = net.evaluate_position(&pos);
        println!(
            "nnue red {} side_to_move {stm}",
            stm * pos.side_to_move().sign()
        );
    }
    Ok(())
}

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
