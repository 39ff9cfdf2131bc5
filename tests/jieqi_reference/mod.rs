//! An independent Jieqi move generator for tests: a plain mailbox board, moves found by walking
//! the board square by square, legality by copy-make and a full scan of the opponent's moves.
//! It shares no code with `xqtune::core` (not even the FEN reader), so agreeing perft counts
//! prove both.

/// Kinds: 0 king, 1 advisor, 2 elephant, 3 horse, 4 rook, 5 cannon, 6 pawn.
const LETTERS: &[u8; 7] = b"KABNRCP";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Cell {
    pub red: bool,
    pub kind: usize,
    pub dark: bool,
}

#[derive(Clone, Debug)]
pub struct Board {
    pub cells: [Option<Cell>; 90],
    pub red_to_move: bool,
    pub pool: [[u32; 7]; 2],
}

fn idx(f: i32, r: i32) -> Option<usize> {
    if (0..9).contains(&f) && (0..10).contains(&r) {
        Some((r * 9 + f) as usize)
    } else {
        None
    }
}

/// The kind whose Xiangqi start square (f, r) is for the given colour.
pub fn home(red: bool, f: i32, r: i32) -> Option<usize> {
    let rr = if red { r } else { 9 - r };
    match rr {
        0 => Some([4, 3, 2, 1, 0, 1, 2, 3, 4][f as usize]),
        2 if f == 1 || f == 7 => Some(5),
        3 if f % 2 == 0 => Some(6),
        _ => None,
    }
}

fn kind_of(c: u8) -> Option<usize> {
    let u = c.to_ascii_uppercase();
    match u {
        b'H' => Some(3),
        b'E' => Some(2),
        _ => LETTERS.iter().position(|&l| l == u),
    }
}

/// Reads `<board> <side> <pool> ...` (Jieqi layout) or a Xiangqi FEN (pool empty).
pub fn parse(fen: &str) -> Board {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    let mut cells = [None; 90];
    for (i, row) in fields[0].split('/').enumerate() {
        let r = 9 - i as i32;
        let mut f = 0;
        for c in row.bytes() {
            if c.is_ascii_digit() {
                f += (c - b'0') as i32;
                continue;
            }
            let red = c.is_ascii_uppercase();
            let cell = if c == b'X' || c == b'x' {
                Cell {
                    red,
                    kind: home(red, f, r).expect("dark piece on a home square"),
                    dark: true,
                }
            } else {
                Cell {
                    red,
                    kind: kind_of(c).expect("piece letter"),
                    dark: false,
                }
            };
            cells[idx(f, r).unwrap()] = Some(cell);
            f += 1;
        }
    }
    let mut pool = [[0; 7]; 2];
    let pf = fields.get(2).copied().unwrap_or("-");
    if pf != "-" {
        let b = pf.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            let side = if c.is_ascii_uppercase() { 0 } else { 1 };
            let k = kind_of(c).expect("pool letter");
            i += 1;
            let mut n = 0;
            let mut digits = false;
            while i < b.len() && b[i].is_ascii_digit() {
                n = n * 10 + (b[i] - b'0') as u32;
                i += 1;
                digits = true;
            }
            pool[side][k] = if digits { n } else { 1 };
        }
    }
    Board {
        cells,
        red_to_move: fields[1] == "w" || fields[1] == "r",
        pool,
    }
}

fn in_palace(red: bool, f: i32, r: i32) -> bool {
    (3..=5).contains(&f) && if red { r <= 2 } else { r >= 7 }
}

fn own_half(red: bool, r: i32) -> bool {
    if red { r <= 4 } else { r >= 5 }
}

impl Board {
    fn at(&self, f: i32, r: i32) -> Option<Cell> {
        idx(f, r).and_then(|i| self.cells[i])
    }

    /// Pseudo-legal moves of one colour, as (from, to).
    pub fn pseudo(&self, red: bool) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for from in 0..90 {
            let Some(c) = self.cells[from] else { continue };
            if c.red != red {
                continue;
            }
            let (f, r) = ((from % 9) as i32, (from / 9) as i32);
            let push = |tf: i32, tr: i32, out: &mut Vec<(usize, usize)>| {
                if let Some(t) = idx(tf, tr) {
                    match self.cells[t] {
                        Some(o) if o.red == red => {}
                        _ => out.push((from, t)),
                    }
                }
            };
            match c.kind {
                0 => {
                    for (df, dr) in [(0, 1), (0, -1), (1, 0), (-1, 0)] {
                        if in_palace(red, f + df, r + dr) {
                            push(f + df, r + dr, &mut out);
                        }
                    }
                }
                1 => {
                    for (df, dr) in [(1, 1), (1, -1), (-1, 1), (-1, -1)] {
                        if !c.dark || in_palace(red, f + df, r + dr) {
                            push(f + df, r + dr, &mut out);
                        }
                    }
                }
                2 => {
                    for (df, dr) in [(1, 1), (1, -1), (-1, 1), (-1, -1)] {
                        let (tf, tr) = (f + 2 * df, r + 2 * dr);
                        if idx(tf, tr).is_none() || self.at(f + df, r + dr).is_some() {
                            continue;
                        }
                        if !c.dark || own_half(red, tr) {
                            push(tf, tr, &mut out);
                        }
                    }
                }
                3 => {
                    for (df, dr) in [(0, 1), (0, -1), (1, 0), (-1, 0)] {
                        if idx(f + df, r + dr).is_none() || self.at(f + df, r + dr).is_some() {
                            continue;
                        }
                        if df == 0 {
                            push(f - 1, r + 2 * dr, &mut out);
                            push(f + 1, r + 2 * dr, &mut out);
                        } else {
                            push(f + 2 * df, r - 1, &mut out);
                            push(f + 2 * df, r + 1, &mut out);
                        }
                    }
                }
                4 | 5 => {
                    for (df, dr) in [(0, 1), (0, -1), (1, 0), (-1, 0)] {
                        let (mut tf, mut tr) = (f + df, r + dr);
                        let mut screen = false;
                        while idx(tf, tr).is_some() {
                            let occ = self.at(tf, tr);
                            if c.kind == 4 {
                                push(tf, tr, &mut out);
                                if occ.is_some() {
                                    break;
                                }
                            } else if !screen {
                                if occ.is_some() {
                                    screen = true;
                                } else {
                                    push(tf, tr, &mut out);
                                }
                            } else if occ.is_some() {
                                push(tf, tr, &mut out);
                                break;
                            }
                            tf += df;
                            tr += dr;
                        }
                    }
                }
                _ => {
                    let fwd = if red { 1 } else { -1 };
                    push(f, r + fwd, &mut out);
                    if !own_half(red, r) {
                        push(f - 1, r, &mut out);
                        push(f + 1, r, &mut out);
                    }
                }
            }
        }
        out
    }

    fn king(&self, red: bool) -> usize {
        (0..90)
            .find(|&s| self.cells[s].is_some_and(|c| c.red == red && c.kind == 0 && !c.dark))
            .expect("king on board")
    }

    /// Whether `red`'s king is attacked, counting the kings facing each other on a file.
    fn king_in_danger(&self, red: bool) -> bool {
        let k = self.king(red);
        let ok = self.king(!red);
        if k % 9 == ok % 9 {
            let (lo, hi) = (k.min(ok), k.max(ok));
            if ((lo + 9)..hi).step_by(9).all(|s| self.cells[s].is_none()) {
                return true;
            }
        }
        self.pseudo(!red).iter().any(|&(_, t)| t == k)
    }

    /// Legal moves of the side to move, as (from, to).
    pub fn legal(&self) -> Vec<(usize, usize)> {
        let red = self.red_to_move;
        self.pseudo(red)
            .into_iter()
            .filter(|&(f, t)| {
                let mut b = self.clone();
                b.cells[t] = b.cells[f];
                b.cells[f] = None;
                !b.king_in_danger(red)
            })
            .collect()
    }

    /// The child after (from, to), the mover revealed as `kind` if it was dark.
    pub fn child(&self, from: usize, to: usize, kind: Option<usize>) -> Board {
        let mut b = self.clone();
        let mut c = b.cells[from].expect("mover");
        if c.dark {
            let k = kind.expect("reveal kind");
            b.pool[if c.red { 0 } else { 1 }][k] -= 1;
            c = Cell {
                red: c.red,
                kind: k,
                dark: false,
            };
        }
        b.cells[to] = Some(c);
        b.cells[from] = None;
        b.red_to_move = !b.red_to_move;
        b
    }

    /// Jieqi perft by copy-make: a dark move branches once per kind in the mover's pool.
    pub fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let us = if self.red_to_move { 0 } else { 1 };
        let kinds: Vec<usize> = (1..7).filter(|&k| self.pool[us][k] > 0).collect();
        let moves = self.legal();
        if depth == 1 {
            return moves
                .iter()
                .map(|&(f, _)| {
                    if self.cells[f].unwrap().dark {
                        kinds.len() as u64
                    } else {
                        1
                    }
                })
                .sum();
        }
        let mut n = 0;
        for (f, t) in moves {
            if self.cells[f].unwrap().dark {
                for &k in &kinds {
                    n += self.child(f, t, Some(k)).perft(depth - 1);
                }
            } else {
                n += self.child(f, t, None).perft(depth - 1);
            }
        }
        n
    }
}
