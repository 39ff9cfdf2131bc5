//! Evaluation: a data-driven, tapered Xiangqi evaluation that reports its own coefficients.
//!
//! - [`score`]: the `S(mg, eg)` pair and the phase blend.
//! - [`params`]: the parameter schema, the flat view used by the tuners and the JSON format of
//!   `params/xiangqi.json` (embedded as the default).
//! - [`evaluate`](mod@evaluate): the evaluation, generic over a [`Tracer`].
//! - [`trace`](mod@trace): the tracers; [`trace()`] gives the evaluation as a linear form.
//!
//! - [`jieqi`](mod@jieqi): the Jieqi terms (`params/jieqi.json`): piece values, whole-board
//!   advisor, elephant and pawn tables, dark pieces worth their pool's average.
//!
//! The variant is data in the position: [`evaluate()`] dispatches on it. Jieqi positions use
//! the Jieqi piece values and tables plus the Xiangqi terms that keep their meaning (see
//! [`jieqi`](mod@jieqi)). The flat view (`specs`/`to_vec`/`from_vec`) holds the Xiangqi values
//! then the Jieqi values, named `jieqi.*`.

pub mod evaluate;
pub mod jieqi;
pub mod params;
pub mod score;
pub mod trace;

pub use evaluate::phase;
pub use jieqi::{DARK_SCALE, JIEQI_TERMS, dark_piece_value, pool_weights};
pub use params::{Bounds, EvalParams, ParamSpec, ParamsError, Shape, TERMS, TermDef, pst_squares};
pub use score::S;
pub use trace::{CoeffTracer, NoTrace, Trace, Tracer};

use crate::core::{Color, Position, Variant};
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Whether `pos` is scored by the Jieqi evaluation (else by the Xiangqi one).
#[inline(always)]
fn jieqi_eval_applies(pos: &Position, params: &EvalParams) -> bool {
    pos.variant() == Variant::Jieqi && params.jieqi.enabled
}

/// The evaluation from red's point of view, recording parameter uses into `tracer`.
#[inline]
pub fn evaluate_red_with<T: Tracer>(pos: &Position, params: &EvalParams, tracer: &mut T) -> i32 {
    if jieqi_eval_applies(pos, params) {
        jieqi::eval_red_jieqi(pos, params, tracer)
    } else {
        evaluate::eval_red(pos, params, tracer)
    }
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
/// equals [`evaluate`] exactly. Only for positions the Xiangqi evaluation scores (`None` when
/// the Jieqi evaluation applies).
#[derive(Clone, Copy, Debug)]
pub struct Partial {
    acc: S,
}

impl Partial {
    #[inline]
    pub fn new(pos: &Position, params: &EvalParams) -> Option<Partial> {
        if jieqi_eval_applies(pos, params) {
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

    /// The full evaluation from the side to move's point of view (equal to [`evaluate`]).
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
        let xiangqi = TERMS
            .iter()
            .enumerate()
            .map(|(ti, term)| (term.name.to_string(), params::OFFSET[ti], term.shape.len()));
        let jieqi = JIEQI_TERMS.iter().enumerate().map(|(ti, term)| {
            (
                format!("jieqi.{}", term.name),
                params::NFLAT + jieqi::JOFFSET[ti],
                term.shape.len(),
            )
        });
        for (name, offset, len) in xiangqi.chain(jieqi) {
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
        println!("{:<34} {:>26.2}", "total", total);
        println!("{:<34} {:>26}", "phase (0 endgame .. 16 opening)", tr.phase);
    }
    println!("red {red} side_to_move {stm}");
    Ok(())
}

#[cfg(test)]
mod tests;
