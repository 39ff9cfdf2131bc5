//! Input features: which of the network's sparse inputs a position switches on, seen from one
//! side (a *perspective*).
//!
//! The inputs are a small trait, after bullet's `SparseInputType`: a feature set names its input
//! count, the most inputs a position can switch on, and how a piece on a square maps to an
//! input. Everything else (the file format, the accumulators, the trainer's data) is written
//! once against the trait, so a Jieqi set with dark-piece planes, or a king-bucketed set, is
//! one more type here and one more [`FeatureSetId`], not a fork.
//!
//! A *bucket* is whatever, besides the piece itself, the mapping of a perspective depends on: a
//! king-bucketed set (Stockfish's HalfKA, bullet's `ChessBucketsMirrored`) picks a slice of
//! the input weights by the square of the perspective's own king. While the bucket stays, an
//! accumulator is updated piece by piece; when a move changes it, the perspective is rebuilt.

use super::delta::{FeatureDelta, Placement};
use crate::core::attacks::Squares;
use crate::core::{Color, PieceType, Position, Square, Variant};

/// The most inputs any feature set switches on for one perspective: the bound of the
/// fixed-size lists that carry active features on the stack.
pub const MAX_ACTIVE: usize = 64;

/// The feature sets a network file can name (the header's feature-set id).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[repr(u32)]
pub enum FeatureSetId {
    /// [`XiangqiPlanes`]: 14 piece planes of 90 squares.
    XiangqiPlanes = 1,
    /// [`XiangqiKingBuckets`]: the planes once per palace square of the perspective's king.
    XiangqiKingBuckets = 2,
    /// [`JieqiPlanes`]: the 14 planes of face-up pieces, 2 planes of dark pieces and the pools.
    JieqiPlanes = 3,
}

/// Runs `$body` with the type alias `$F` bound to the feature set of `$id`: the one place
/// where an id becomes a type (a new feature set adds its arm here), so the code above it is
/// monomorphised per set while networks name their set at run time.
macro_rules! with_feature_set {
    ($id:expr, $F:ident => $body:expr) => {
        match $id {
            $crate::eval::nnue::FeatureSetId::XiangqiPlanes => {
                type $F = $crate::eval::nnue::XiangqiPlanes;
                $body
            }
            $crate::eval::nnue::FeatureSetId::XiangqiKingBuckets => {
                type $F = $crate::eval::nnue::XiangqiKingBuckets;
                $body
            }
            $crate::eval::nnue::FeatureSetId::JieqiPlanes => {
                type $F = $crate::eval::nnue::JieqiPlanes;
                $body
            }
        }
    };
}
pub(crate) use with_feature_set;

impl FeatureSetId {
    pub const ALL: [FeatureSetId; 3] = [
        FeatureSetId::XiangqiPlanes,
        FeatureSetId::XiangqiKingBuckets,
        FeatureSetId::JieqiPlanes,
    ];

    /// The id as stored in the file.
    pub const fn to_u32(self) -> u32 {
        self as u32
    }

    pub const fn from_u32(v: u32) -> Option<FeatureSetId> {
        match v {
            1 => Some(FeatureSetId::XiangqiPlanes),
            2 => Some(FeatureSetId::XiangqiKingBuckets),
            3 => Some(FeatureSetId::JieqiPlanes),
            _ => None,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            FeatureSetId::XiangqiPlanes => "xiangqi-planes",
            FeatureSetId::XiangqiKingBuckets => "xiangqi-king-buckets",
            FeatureSetId::JieqiPlanes => "jieqi-planes",
        }
    }

    /// The game whose positions the set describes: a network evaluates only positions of its
    /// set's variant (a Xiangqi set has no inputs for dark pieces or pools).
    pub const fn variant(self) -> Variant {
        match self {
            FeatureSetId::XiangqiPlanes | FeatureSetId::XiangqiKingBuckets => Variant::Xiangqi,
            FeatureSetId::JieqiPlanes => Variant::Jieqi,
        }
    }

    /// The set's input count ([`FeatureSet::inputs`]).
    pub fn inputs(self) -> usize {
        with_feature_set!(self, F => F::inputs())
    }

    /// The most inputs the set switches on per perspective ([`FeatureSet::max_active`]).
    pub fn max_active(self) -> usize {
        with_feature_set!(self, F => F::max_active())
    }

    /// The active inputs of `pos` seen by `perspective`, each passed to `f`.
    pub fn active_features(self, pos: &Position, perspective: Color, f: &mut impl FnMut(usize)) {
        with_feature_set!(self, F => F::active_features(pos, perspective, f))
    }
}

impl std::fmt::Display for FeatureSetId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of sparse binary inputs, seen from a perspective (bullet's `SparseInputType`).
///
/// Contract: [`active_features`](FeatureSet::active_features) yields exactly
/// `index(perspective, bucket(pos, perspective), p)` for every piece `p` of `pos` (plus any
/// inputs that are not pieces, for sets that have them), each index below
/// [`inputs`](FeatureSet::inputs) and at most [`max_active`](FeatureSet::max_active) of them,
/// and [`bucket_after`](FeatureSet::bucket_after) predicts the bucket of the position after a
/// move from its [`FeatureDelta`]. The accumulators rely on it: they add and remove `index`
/// rows while the bucket stays and rebuild the perspective from `active_features` when it
/// changes.
pub trait FeatureSet {
    /// The id written in network files.
    const ID: FeatureSetId;

    /// Whether the set has inputs for Jieqi pools: [`active_features`](Self::active_features)
    /// then also yields `index` of every pool entry (`Placement::pool_entry(color, kind, n)`
    /// for `n` in `1..=` the pool's count), and a set without them skips the pool entries of a
    /// [`FeatureDelta`] (a Xiangqi set reading a Jieqi position sees its pieces only).
    const READS_POOLS: bool = false;

    /// Number of inputs (rows of the feature-transformer weights).
    fn inputs() -> usize;

    /// The most inputs switched on for one perspective (at most [`MAX_ACTIVE`]).
    fn max_active() -> usize;

    /// The bucket of `perspective` in `pos`: what the mapping depends on besides the piece.
    /// Sets without buckets keep the default, 0.
    #[inline(always)]
    fn bucket(_pos: &Position, _perspective: Color) -> usize {
        0
    }

    /// The bucket of `perspective` after a move with `delta` from a position where it was
    /// `bucket`.
    #[inline(always)]
    fn bucket_after(_perspective: Color, bucket: usize, _delta: &FeatureDelta) -> usize {
        bucket
    }

    /// The input of `piece` seen by `perspective` in bucket `bucket`.
    fn index(perspective: Color, bucket: usize, piece: Placement) -> usize;

    /// Passes every active input of `pos` seen by `perspective` to `f`: its pieces, and its
    /// pool entries for a set that [reads pools](Self::READS_POOLS).
    #[inline]
    fn active_features(pos: &Position, perspective: Color, f: &mut impl FnMut(usize)) {
        let bucket = Self::bucket(pos, perspective);
        let dark = pos.dark();
        for color in Color::ALL {
            for kind in PieceType::ALL {
                for sq in Squares(pos.pieces_of(color, kind)) {
                    let piece = Placement::on_board(
                        color,
                        kind,
                        Square(sq as u8),
                        dark & (1u128 << sq) != 0,
                    );
                    f(Self::index(perspective, bucket, piece));
                }
                if Self::READS_POOLS && kind != PieceType::King {
                    // A legal FEN keeps every pool within the kind's initial count.
                    let count = pos.pool_count(color, kind).min(kind.initial_count()) as u8;
                    for n in 1..=count {
                        let entry = Placement::pool_entry(color, kind, n);
                        f(Self::index(perspective, bucket, entry));
                    }
                }
            }
        }
    }
}

/// The square as `perspective` sees it: black's view is mirrored vertically (rank `r` becomes
/// `9 - r`, files unchanged), so both perspectives see their own side at the bottom and one set
/// of weights serves both (the "flipped perspective" of Stockfish's HalfKP and bullet's
/// `Chess768`).
#[inline(always)]
pub const fn relative_square(perspective: Color, sq: Square) -> Square {
    match perspective {
        Color::Red => sq,
        Color::Black => Square(FLIPPED_RANK[sq.index()]),
    }
}

/// [`Square::flip_rank`] of every square: a load instead of a division by 9 in the updates.
const FLIPPED_RANK: [u8; Square::COUNT] = {
    let mut t = [0; Square::COUNT];
    let mut i = 0;
    while i < Square::COUNT {
        t[i] = Square(i as u8).flip_rank().0;
        i += 1;
    }
    t
};

/// The plane of `piece` seen by `perspective`: the perspective's own pieces take planes 0-6,
/// the other side's 7-13, each in [`PieceType`] order.
#[inline(always)]
pub const fn plane(perspective: Color, piece: Placement) -> usize {
    let theirs = (piece.color as usize != perspective as usize) as usize;
    theirs * 7 + piece.kind as usize
}

/// The v1 inputs: 14 piece planes × 90 squares = 1260 per perspective, input
/// `plane * 90 + relative square` (see [`plane`] and [`relative_square`]). Dark Jieqi pieces
/// count as the kind they move as.
#[derive(Clone, Copy, Debug)]
pub struct XiangqiPlanes;

impl XiangqiPlanes {
    pub const INPUTS: usize = 14 * Square::COUNT;
}

impl FeatureSet for XiangqiPlanes {
    const ID: FeatureSetId = FeatureSetId::XiangqiPlanes;

    #[inline(always)]
    fn inputs() -> usize {
        Self::INPUTS
    }

    /// 16 pieces a side.
    #[inline(always)]
    fn max_active() -> usize {
        32
    }

    #[inline(always)]
    fn index(perspective: Color, _bucket: usize, piece: Placement) -> usize {
        plane(perspective, piece) * Square::COUNT
            + relative_square(perspective, piece.square).index()
    }
}

/// [`XiangqiPlanes`] once per palace square of the perspective's own king: 9 buckets × 1260
/// inputs, bucket `3 * rank + (file - 3)` of the king's relative square (the king bucketing of
/// Stockfish's HalfKP, cut down to the nine squares a Xiangqi king can stand on). Not mirrored
/// horizontally: the palace is small and the two wings of a Xiangqi position differ little.
#[derive(Clone, Copy, Debug)]
pub struct XiangqiKingBuckets;

impl XiangqiKingBuckets {
    pub const BUCKETS: usize = 9;
    pub const INPUTS: usize = Self::BUCKETS * XiangqiPlanes::INPUTS;

    /// The bucket of a king of `perspective` on `king`. A king off the palace (only a position
    /// that breaks the rules) takes the nearest palace square's bucket.
    #[inline(always)]
    pub const fn king_bucket(perspective: Color, king: Square) -> usize {
        let sq = relative_square(perspective, king);
        let rank = if sq.rank() > 2 { 2 } else { sq.rank() as usize };
        let file = if sq.file() < 3 {
            3
        } else if sq.file() > 5 {
            5
        } else {
            sq.file() as usize
        };
        3 * rank + (file - 3)
    }
}

impl FeatureSet for XiangqiKingBuckets {
    const ID: FeatureSetId = FeatureSetId::XiangqiKingBuckets;

    #[inline(always)]
    fn inputs() -> usize {
        Self::INPUTS
    }

    #[inline(always)]
    fn max_active() -> usize {
        32
    }

    #[inline(always)]
    fn bucket(pos: &Position, perspective: Color) -> usize {
        Self::king_bucket(perspective, pos.king_square(perspective))
    }

    #[inline(always)]
    fn bucket_after(perspective: Color, bucket: usize, delta: &FeatureDelta) -> usize {
        match delta
            .added()
            .iter()
            .find(|p| p.kind == PieceType::King && p.color == perspective)
        {
            Some(king) => Self::king_bucket(perspective, king.square),
            None => bucket,
        }
    }

    #[inline(always)]
    fn index(perspective: Color, bucket: usize, piece: Placement) -> usize {
        bucket * XiangqiPlanes::INPUTS + XiangqiPlanes::index(perspective, 0, piece)
    }
}

/// The Jieqi inputs, 1470 per perspective: the 1260 inputs of [`XiangqiPlanes`] for face-up
/// pieces; two planes of dark pieces (the perspective's own, then the other side's), input
/// `1260 + 90 * theirs + relative square` (a dark piece stands on its home square, which tells
/// the kind it moves as); and the pools, 15 inputs a side, input `1440 + 15 * theirs +
/// POOL_OFFSET[kind] + n - 1` for "the pool holds at least `n` of `kind`" (a thermometer: a
/// reveal of the last of `n` switches off one input). The pool is the viewer's: identities not
/// yet seen, on the board face down or captured unseen.
#[derive(Clone, Copy, Debug)]
pub struct JieqiPlanes;

impl JieqiPlanes {
    pub const DARK: usize = XiangqiPlanes::INPUTS;
    pub const POOL: usize = Self::DARK + 2 * Square::COUNT;
    /// Pool inputs per side: two each of advisor, elephant, horse, rook, cannon, five pawns.
    pub const POOL_PER_SIDE: usize = 15;
    pub const INPUTS: usize = Self::POOL + 2 * Self::POOL_PER_SIDE;
    /// Where each kind's pool inputs start, in [`PieceType`] order: a side's advisors, then
    /// its elephants, ..., its pawns, [`PieceType::initial_count`] inputs each (the king is
    /// never dark and has none).
    const POOL_OFFSET: [usize; 7] = {
        let mut t = [0; 7];
        let mut k = 2;
        while k < 7 {
            t[k] = t[k - 1] + PieceType::ALL[k - 1].initial_count() as usize;
            k += 1;
        }
        t
    };
}

impl FeatureSet for JieqiPlanes {
    const ID: FeatureSetId = FeatureSetId::JieqiPlanes;
    const READS_POOLS: bool = true;

    #[inline(always)]
    fn inputs() -> usize {
        Self::INPUTS
    }

    /// 32 pieces and 30 pool entries.
    #[inline(always)]
    fn max_active() -> usize {
        62
    }

    #[inline(always)]
    fn index(perspective: Color, _bucket: usize, piece: Placement) -> usize {
        let theirs = (piece.color as usize != perspective as usize) as usize;
        if piece.pool != 0 {
            let k = piece.kind.index();
            // A legal FEN keeps every count within the kind's initial count.
            let n = piece.pool.clamp(1, piece.kind.initial_count() as u8) as usize;
            Self::POOL + theirs * Self::POOL_PER_SIDE + Self::POOL_OFFSET[k] + n - 1
        } else if piece.dark {
            Self::DARK + theirs * Square::COUNT + relative_square(perspective, piece.square).index()
        } else {
            XiangqiPlanes::index(perspective, 0, piece)
        }
    }
}

const _: () = assert!(32 <= MAX_ACTIVE && 62 <= MAX_ACTIVE);
const _: () = assert!(JieqiPlanes::INPUTS == 1470);
const _: () = assert!(
    JieqiPlanes::POOL_OFFSET[6] + PieceType::Pawn.initial_count() as usize
        == JieqiPlanes::POOL_PER_SIDE
);

#[cfg(test)]
mod tests {
    use super::*;

    fn features<F: FeatureSet>(pos: &Position, perspective: Color) -> Vec<usize> {
        let mut v = Vec::new();
        F::active_features(pos, perspective, &mut |i| v.push(i));
        v.sort_unstable();
        v
    }

    #[test]
    fn start_position_features_are_mirror_images() {
        let pos = Position::startpos();
        let red = features::<XiangqiPlanes>(&pos, Color::Red);
        let black = features::<XiangqiPlanes>(&pos, Color::Black);
        assert_eq!(red.len(), 32);
        // The start position is symmetric: each side sees the same inputs from its own seat.
        assert_eq!(red, black);
        // Red's king on e0 is "our king" (plane 0) on square 4, black's king on e9 "their
        // king" (plane 7) on square 85; black sees the same from its seat, mirrored.
        assert!(red.contains(&4));
        assert!(red.contains(&(7 * 90 + 85)));
        assert!(red.iter().all(|&i| i < XiangqiPlanes::INPUTS));
    }

    #[test]
    fn index_follows_the_documented_formula() {
        let p = Placement::new(Color::Black, PieceType::Cannon, Square::new(7, 7));
        // Red sees a "their cannon" (plane 7 + 5) on h7 = 7 * 9 + 7.
        assert_eq!(XiangqiPlanes::index(Color::Red, 0, p), 12 * 90 + 70);
        // Black sees "our cannon" (plane 5) on h2 = 2 * 9 + 7.
        assert_eq!(XiangqiPlanes::index(Color::Black, 0, p), 5 * 90 + 25);
        assert_eq!(
            XiangqiKingBuckets::index(Color::Black, 4, p),
            4 * 1260 + 5 * 90 + 25
        );
    }

    #[test]
    fn king_buckets_cover_the_palace() {
        let buckets: Vec<usize> = (0..3)
            .flat_map(|r| (3..6).map(move |f| Square::new(f, r)))
            .map(|s| XiangqiKingBuckets::king_bucket(Color::Red, s))
            .collect();
        assert_eq!(buckets, (0..9).collect::<Vec<_>>());
        // Black's e9 is its own back-rank centre, like red's e0.
        assert_eq!(
            XiangqiKingBuckets::king_bucket(Color::Black, Square::new(4, 9)),
            1
        );
        let pos = Position::startpos();
        assert_eq!(XiangqiKingBuckets::bucket(&pos, Color::Red), 1);
        assert_eq!(XiangqiKingBuckets::bucket(&pos, Color::Black), 1);
    }

    /// The contract the accumulators rely on, for every move of some Jieqi positions (each
    /// reveal outcome of a dark move, dark captures among them): the inputs after the move are
    /// those before it, less the delta's removed ones, plus its added ones.
    #[test]
    fn jieqi_deltas_match_the_features_of_the_position_after() {
        use crate::eval::nnue::delta_of;
        let fens = [
            "1x1xk1xxx/1Pb1c4/4p4/1nN1x4/8p/1R7/r3X2aX/B3P2X1/4A4/1X2KX1XX b R1C1P3N1B1r1a1c1p2n1b1 9 15",
            "1x2kx3/P3p4/1r1nb3p/c1BR5/4b3a/3p2r1A/4X4/5C2P/2N1P4/3XK1BR1 w A1N1c1p1 3 22",
        ];
        let mut positions = vec![Position::jieqi_startpos()];
        positions.extend(fens.iter().map(|f| Position::from_fen(f).unwrap()));
        let (mut moves, mut reveals, mut pool_changes) = (0, 0, 0);
        for pos in positions {
            for m in pos.legal_moves() {
                let outcomes: Vec<_> = if pos.is_dark(m.from()) {
                    pos.reveal_outcomes(m).map(|o| o.0).collect()
                } else {
                    vec![m]
                };
                for m in outcomes {
                    let d = delta_of(&pos, m);
                    let mut after = pos.clone();
                    after.make_move(m);
                    moves += 1;
                    reveals += pos.is_dark(m.from()) as u32;
                    pool_changes += d.removed().iter().filter(|p| p.is_pool()).count();
                    for persp in Color::ALL {
                        let mut want = features::<JieqiPlanes>(&pos, persp);
                        for p in d.removed() {
                            let i = JieqiPlanes::index(persp, 0, *p);
                            let at = want.iter().position(|&x| x == i);
                            let at = at.unwrap_or_else(|| panic!("{m}: {p:?} was not on"));
                            want.remove(at);
                        }
                        want.extend(d.added().iter().map(|p| JieqiPlanes::index(persp, 0, *p)));
                        want.sort_unstable();
                        assert_eq!(
                            want,
                            features::<JieqiPlanes>(&after, persp),
                            "{m} {persp:?}"
                        );
                    }
                }
            }
        }
        assert!(
            moves > 100 && reveals > 50 && pool_changes >= reveals as usize,
            "{moves} {reveals}"
        );
    }

    #[test]
    fn jieqi_start_inputs() {
        let pos = Position::jieqi_startpos();
        let red = features::<JieqiPlanes>(&pos, Color::Red);
        // 32 pieces (30 dark, 2 kings) and the full pools, 15 entries a side.
        assert_eq!(red.len(), 62);
        assert_eq!(red, features::<JieqiPlanes>(&pos, Color::Black));
        assert!(red.iter().all(|&i| i < JieqiPlanes::INPUTS));
        // Red's own dark piece on a0, the other side's on a9 (relative a9), and the kings.
        assert!(red.contains(&JieqiPlanes::DARK));
        assert!(red.contains(&(JieqiPlanes::DARK + 90 + 81)));
        assert!(red.contains(&4));
        // "Our pool holds 5 pawns" and "theirs holds 2 rooks".
        assert!(red.contains(&(JieqiPlanes::POOL + 14)));
        assert!(red.contains(&(JieqiPlanes::POOL + 15 + 7)));
        assert_eq!(FeatureSetId::JieqiPlanes.variant(), Variant::Jieqi);
        assert_eq!(FeatureSetId::XiangqiPlanes.variant(), Variant::Xiangqi);
    }

    #[test]
    fn ids_round_trip() {
        for id in FeatureSetId::ALL {
            assert_eq!(FeatureSetId::from_u32(id.to_u32()), Some(id));
            assert!(id.max_active() <= MAX_ACTIVE);
        }
        assert_eq!(FeatureSetId::from_u32(0), None);
        assert_eq!(FeatureSetId::from_u32(4), None);
    }
}
