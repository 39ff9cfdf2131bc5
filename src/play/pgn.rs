//! PGN of match games: coordinate moves (`h2e2`, the UCI/ICCS lower-case form), the opening's
//! `[FEN]`, both engines' parameter hashes, the result and why the game ended.

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
