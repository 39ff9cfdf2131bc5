//! Reading the arguments of `position` and `go` into a position and search limits. Errors are
//! messages for the `info string error: ...` line; the session keeps its previous state on one.

use crate::core::{Position, Variant};
use crate::search::SearchLimits;

/// The setup words of a `position` command's arguments and its moves (after `moves`).
pub(super) fn split_moves<'t, 's>(tokens: &'t [&'s str]) -> (&'t [&'s str], &'t [&'s str]) {
    match tokens.iter().position(|&t| t == "moves") {
        Some(i) => (&tokens[..i], &tokens[i + 1..]),
        None => (tokens, &[]),
    }
}

/// Parses the arguments of `position`, `startpos | fen <FEN> [moves m1 m2 ...]`, for `variant`
/// (`UCI_Variant`): `startpos` is that variant's start and a FEN that cannot tell (fully
/// revealed) is read as that variant. Jieqi FENs and moves with reveal suffixes (`h2e2N`) are
/// accepted either way. The result is a new position; the caller keeps the old one on error.
pub fn parse_position_variant(rest: &str, variant: Variant) -> Result<Position, String> {
    let tokens: Vec<&str> = rest.split_whitespace().collect();
    let (setup, moves) = split_moves(&tokens);
    let mut pos = match setup.first() {
        Some(&"startpos") if setup.len() == 1 => Position::startpos_of(variant),
        Some(&"startpos") => {
            return Err(format!(
                "unexpected '{}' after 'position startpos'",
                setup[1..].join(" ")
            ));
        }
        Some(&"fen") => {
            let fen = setup[1..].join(" ");
            if fen.is_empty() {
                return Err("'position fen' needs a FEN".into());
            }
            match variant {
                Variant::Xiangqi => Position::from_fen(&fen),
                Variant::Jieqi => Position::from_fen_variant(&fen, Variant::Jieqi),
            }
            .map_err(|e| format!("invalid FEN '{fen}': {e}"))?
        }
        Some(other) => {
            return Err(format!(
                "position needs 'startpos' or 'fen', found '{other}'"
            ));
        }
        None => return Err("position needs 'startpos' or 'fen'".into()),
    };
    play_moves(&mut pos, moves, 0)?;
    Ok(pos)
}

/// Plays `moves[from..]` on `pos`; the error names the move by its number in `moves`.
pub(super) fn play_moves(pos: &mut Position, moves: &[&str], from: usize) -> Result<(), String> {
    for (i, m) in moves.iter().enumerate().skip(from) {
        let mv = pos
            .parse_move(m)
            .map_err(|e| format!("move {} '{m}' refused: {e}", i + 1))?;
        pos.make_move(mv);
    }
    Ok(())
}

fn number<T: std::str::FromStr>(key: &str, v: Option<&&str>) -> Result<T, String> {
    let v = v.ok_or_else(|| format!("go {key} needs a value"))?;
    v.parse()
        .map_err(|_| format!("go {key}: '{v}' is not a valid number"))
}

/// Parses UCI `go` arguments; the clock of the side to move becomes `time_ms`.
pub fn parse_go_uci(rest: &str, pos: &Position) -> Result<SearchLimits, String> {
    let t: Vec<&str> = rest.split_whitespace().collect();
    let mut l = SearchLimits::default();
    let red = pos.side_to_move() == crate::core::Color::Red;
    let mut i = 0;
    while i < t.len() {
        let key = t[i];
        let v = t.get(i + 1);
        match key {
            "depth" => l.depth = Some(number(key, v)?),
            "nodes" => l.nodes = Some(number(key, v)?),
            "movetime" => l.movetime_ms = Some(number(key, v)?),
            "wtime" | "btime" => {
                // Clocks can go negative in some GUIs; treat that as no time left.
                let ms: i64 = number(key, v)?;
                if (key == "wtime") == red {
                    l.time_ms = Some(ms.max(1) as u64);
                }
            }
            "winc" | "binc" => {
                let ms: i64 = number(key, v)?;
                if (key == "winc") == red {
                    l.inc_ms = Some(ms.max(0) as u64);
                }
            }
            "movestogo" => l.movestogo = Some(number(key, v)?),
            "infinite" => {
                l.infinite = true;
                i += 1;
                continue;
            }
            "ponder" => {
                i += 1;
                continue;
            }
            "mate" => {
                let _: u32 = number(key, v)?;
            }
            _ => return Err(format!("go: unknown or unsupported parameter '{key}'")),
        }
        i += 2;
    }
    Ok(l)
}

/// Parses UCCI `go [ponder|draw] depth D | nodes N | time T [movestogo M | increment I]
/// [opptime ..]`. Times are seconds (Fairy-Stockfish's reading of UCCI) unless
/// `usemillisec` is on.
pub fn parse_go_ucci(rest: &str, millisec: bool) -> Result<SearchLimits, String> {
    let t: Vec<&str> = rest.split_whitespace().collect();
    let mut l = SearchLimits::default();
    let scale = if millisec { 1.0 } else { 1000.0 };
    let ms = |key: &str, v: Option<&&str>| -> Result<u64, String> {
        let x: f64 = number(key, v)?;
        if !x.is_finite() || x < 0.0 {
            return Err(format!(
                "go {key}: '{}' is not a valid time",
                v.unwrap_or(&"")
            ));
        }
        Ok((x * scale) as u64)
    };
    let mut i = 0;
    while i < t.len() {
        let key = t[i];
        let v = t.get(i + 1);
        match key {
            "ponder" | "draw" | "infinite" => {
                l.infinite |= key == "infinite";
                i += 1;
                continue;
            }
            "depth" if v == Some(&"infinite") => l.infinite = true,
            "depth" => l.depth = Some(number(key, v)?),
            "nodes" => l.nodes = Some(number(key, v)?),
            "time" => l.time_ms = Some(ms(key, v)?.max(1)),
            "increment" => l.inc_ms = Some(ms(key, v)?),
            "movestogo" => l.movestogo = Some(number(key, v)?),
            "opptime" | "oppincrement" | "oppmovestogo" => {
                let _: f64 = number(key, v)?;
            }
            _ => return Err(format!("go: unknown or unsupported parameter '{key}'")),
        }
        i += 2;
    }
    Ok(l)
}
