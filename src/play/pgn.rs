//! PGN of match games: coordinate moves (`h2e2`, the UCI/ICCS lower-case form), the opening's
//! `[FEN]`, both engines' parameter hashes, the result and why the game ended. Each engine move
//! carries cutechess's comment, `{+0.31/14 0.153s}`: the mover's score in pawns (`+M3` and `-M2`
//! for mates, in moves), the search depth and, under a time control, the time the move took.

use super::game::GameRecord;
use crate::core::Position;
use std::fmt::Write;

/// Tags shared by every game of a match.
#[derive(Clone, Debug, Default)]
pub struct PgnHeader {
    pub event: String,
    pub date: String,
    pub time_control: String,
    pub variant: String,
}

/// One game as PGN text (ends with a blank line).
pub fn game_pgn(h: &PgnHeader, g: &GameRecord) -> String {
    let mut s = String::new();
    let tag = |s: &mut String, k: &str, v: &str| {
        let v = v.replace('\\', "\\\\").replace('"', "\\\"");
        let _ = writeln!(s, "[{k} \"{v}\"]");
    };
    tag(&mut s, "Event", &h.event);
    tag(&mut s, "Site", "xqtune");
    tag(&mut s, "Date", &h.date);
    tag(
        &mut s,
        "Round",
        &format!("{}.{}", g.index / 2 + 1, g.index % 2 + 1),
    );
    tag(&mut s, "Red", &g.red);
    tag(&mut s, "Black", &g.black);
    tag(&mut s, "Result", g.result.pgn());
    tag(&mut s, "Variant", &h.variant);
    tag(&mut s, "FEN", &g.opening_fen);
    tag(&mut s, "SetUp", "1");
    if let Some(seed) = g.deal_seed {
        tag(&mut s, "DealSeed", &seed.to_string());
    }
    if let Some(x) = &g.red_hash {
        tag(&mut s, "RedParams", x);
    }
    if let Some(x) = &g.black_hash {
        tag(&mut s, "BlackParams", x);
    }
    tag(&mut s, "TimeControl", &h.time_control);
    tag(&mut s, "BookPlies", &g.opening_moves.len().to_string());
    tag(
        &mut s,
        "PlyCount",
        &(g.opening_moves.len() + g.moves.len()).to_string(),
    );
    let secs = g.duration_ms / 1000;
    tag(
        &mut s,
        "GameDuration",
        &format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60),
    );
    tag(&mut s, "Termination", g.termination.pgn_tag());
    tag(&mut s, "TerminationDetails", &g.termination.to_string());
    s.push('\n');

    // Movetext from the opening FEN: book moves, then engine moves.
    let (red_first, mut number) = match Position::from_fen(&g.opening_fen) {
        Ok(p) => (
            p.side_to_move() == crate::core::Color::Red,
            p.fullmove() as usize,
        ),
        Err(_) => (true, 1),
    };
    let mut line = String::new();
    let mut ply_red = red_first;
    let mut first = true;
    let all = g.opening_moves.iter().chain(g.moves.iter()).enumerate();
    let book = g.opening_moves.len();
    for (i, m) in all {
        let mut tok = String::new();
        if ply_red {
            let _ = write!(tok, "{number}. ");
        } else if first {
            let _ = write!(tok, "{number}... ");
        }
        // Jieqi suffixes: the reveal of a dark mover in the mover's case (`h2e2N`), the learned
        // kind of a captured dark piece in the victim's (`e2e6p`, `h2h9Cr`); Xiangqi moves have
        // none.
        let mover = if ply_red {
            crate::core::Color::Red
        } else {
            crate::core::Color::Black
        };
        tok.push_str(&crate::core::jieqi::format_move(*m, mover));
        if book > 0 && i + 1 == book {
            tok.push_str(" {book}");
        }
        if let Some(note) = i.checked_sub(book).and_then(|j| move_comment(g, j)) {
            let _ = write!(tok, " {{{note}}}");
        }
        push_wrapped(&mut s, &mut line, &tok);
        if !ply_red {
            number += 1;
        }
        ply_red = !ply_red;
        first = false;
    }
    push_wrapped(
        &mut s,
        &mut line,
        &format!("{{{}}} {}", g.termination, g.result.pgn()),
    );
    s.push_str(&line);
    s.push_str("\n\n");
    s
}

/// The comment of engine move `j`: score/depth and time, as far as the record has them.
fn move_comment(g: &GameRecord, j: usize) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(&Some(score)) = g.scores.get(j) {
        let mut eval = score_text(score);
        if let Some(&Some(d)) = g.depths.get(j) {
            let _ = write!(eval, "/{d}");
        }
        parts.push(eval);
    }
    if let Some(&ms) = g.times_ms.get(j) {
        parts.push(format!("{}.{:03}s", ms / 1000, ms % 1000));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// A score from the mover's view as cutechess writes it: pawns with a sign (`+0.31`, `-1.20`,
/// `0.00`), or mate in moves (`+M3`, `-M2`).
fn score_text(score: i32) -> String {
    match crate::search::mate_in(score) {
        Some(n) if score > 0 => format!("+M{n}"),
        Some(n) => format!("-M{}", n.abs()),
        None => {
            let sign = match score.signum() {
                1 => "+",
                -1 => "-",
                _ => "",
            };
            let a = score.unsigned_abs();
            format!("{sign}{}.{:02}", a / 100, a % 100)
        }
    }
}

fn push_wrapped(out: &mut String, line: &mut String, tok: &str) {
    if !line.is_empty() && line.len() + 1 + tok.len() > 79 {
        out.push_str(line);
        out.push('\n');
        line.clear();
    }
    if !line.is_empty() {
        line.push(' ');
    }
    line.push_str(tok);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{GameResult, Move, START_FEN};
    use crate::play::game::Termination;

    fn record(moves: &[&str], book: usize) -> GameRecord {
        let mut pos = Position::from_fen(START_FEN).unwrap();
        let all: Vec<Move> = moves
            .iter()
            .map(|t| {
                let m = pos.parse_move(t).unwrap();
                pos.make_move(m);
                m
            })
            .collect();
        GameRecord {
            index: 0,
            red: "a".into(),
            black: "b".into(),
            red_hash: None,
            black_hash: None,
            a_is_red: true,
            opening_fen: START_FEN.into(),
            opening_moves: all[..book].to_vec(),
            start_fen: String::new(),
            moves: all[book..].to_vec(),
            scores: vec![],
            depths: vec![],
            times_ms: vec![],
            result: GameResult::Draw,
            termination: Termination::MaxPlies,
            duration_ms: 0,
            deal_seed: None,
        }
    }

    /// The movetext on one line.
    fn moves(g: &GameRecord) -> String {
        let text = game_pgn(&PgnHeader::default(), g);
        let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('[')).collect();
        body.join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn engine_moves_carry_score_depth_and_time() {
        let mut g = record(&["h2e2", "h9g7", "h0g2", "i9h9", "i0h0"], 1);
        g.scores = vec![Some(-31), Some(120), Some(0), Some(crate::search::MATE - 5)];
        g.depths = vec![Some(14), None, Some(3), Some(9)];
        g.times_ms = vec![153, 2_048, 7, 0];
        assert_eq!(
            moves(&g),
            "1. h2e2 {book} h9g7 {-0.31/14 0.153s} 2. h0g2 {+1.20 2.048s} i9h9 {0.00/3 0.007s} \
             3. i0h0 {+M3/9 0.000s} {maximum game length} 1/2-1/2"
        );
        // without a clock there is no time; a record without notes (older journals) has no
        // comments
        g.times_ms.clear();
        assert_eq!(
            moves(&g),
            "1. h2e2 {book} h9g7 {-0.31/14} 2. h0g2 {+1.20} i9h9 {0.00/3} 3. i0h0 {+M3/9} \
             {maximum game length} 1/2-1/2"
        );
        assert_eq!(
            moves(&record(&["h2e2", "h9g7"], 0)),
            "1. h2e2 h9g7 {maximum game length} 1/2-1/2"
        );
        assert_eq!(score_text(-(crate::search::MATE - 4)), "-M2");
        assert_eq!(score_text(-7), "-0.07");
        assert_eq!(score_text(1234), "+12.34");
    }
}
