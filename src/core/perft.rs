//! Perft: counts the leaf nodes of the legal move tree, the standard proof of move generation
//! (<https://www.chessprogramming.org/Perft>). It walks [`Position::children`], so a Jieqi dark
//! move counts once per reveal outcome. The last ply is counted in bulk, without making the
//! moves.

use super::position::Position;
use super::types::Move;

pub fn perft(pos: &mut Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_children(),
        _ => {
            let mut nodes = 0;
            for (child, _) in pos.children() {
                pos.make_move(child);
                nodes += perft(pos, depth - 1);
                pos.unmake_move();
            }
            nodes
        }
    }
}

/// Node count under each child of the root, in generation order.
pub fn divide(pos: &mut Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (child, _) in pos.children() {
        pos.make_move(child);
        let n = perft(pos, depth - 1);
        pos.unmake_move();
        out.push((child, n));
    }
    out
}

/// Perft that checks at every node that the incremental state (bitboards, key, check flag)
/// equals a full recompute, and that unmake restores the position exactly. Slow; for tests.
pub fn perft_checked(pos: &mut Position, depth: u32) -> Result<u64, String> {
    pos.debug_validate()?;
    if depth == 0 {
        return Ok(1);
    }
    let before = pos.to_fen();
    let key = pos.key();
    let mut nodes = 0;
    for (child, _) in pos.children() {
        pos.make_move(child);
        nodes += perft_checked(pos, depth - 1).map_err(|e| format!("after {child:?}: {e}"))?;
        pos.unmake_move();
        if pos.key() != key || pos.to_fen() != before {
            return Err(format!("unmake of {child:?} did not restore {before}"));
        }
    }
    Ok(nodes)
}
