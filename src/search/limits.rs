//! What bounds one search: the limits of a `go` command and the playing-strength caps that
//! narrow them.

/// What limits one search. Unset fields do not limit.
#[derive(Clone, Debug, Default)]
pub struct SearchLimits {
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    pub movetime_ms: Option<u64>,
    /// Clock of the side to move and increment, in ms (`go wtime/btime winc/binc`).
    pub time_ms: Option<u64>,
    pub inc_ms: Option<u64>,
    pub movestogo: Option<u32>,
    pub infinite: bool,
    /// Clock time kept back per move for the GUI's and the pipe's latency (UCI `Move
    /// Overhead`); `None`: [`super::time::MOVE_OVERHEAD_MS`].
    pub move_overhead_ms: Option<u64>,
}

/// Playing strength levels for human opponents: caps on depth and time per move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Skill {
    Easy,
    Medium,
    Hard,
    #[default]
    Expert,
}

impl Skill {
    pub const ALL: [Skill; 4] = [Skill::Easy, Skill::Medium, Skill::Hard, Skill::Expert];

    pub fn parse(s: &str) -> Option<Skill> {
        match s.trim().to_ascii_lowercase().as_str() {
            "easy" => Some(Skill::Easy),
            "medium" => Some(Skill::Medium),
            "hard" => Some(Skill::Hard),
            "expert" => Some(Skill::Expert),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Skill::Easy => "easy",
            Skill::Medium => "medium",
            Skill::Hard => "hard",
            Skill::Expert => "expert",
        }
    }

    /// (depth cap, time cap per move in ms). Easy sees two plies and answers at once, medium
    /// four plies (a club player's tactics), hard eight plies within two seconds, expert is
    /// uncapped.
    pub fn caps(self) -> (Option<u32>, Option<u64>) {
        match self {
            Skill::Easy => (Some(2), Some(200)),
            Skill::Medium => (Some(4), Some(1000)),
            Skill::Hard => (Some(8), Some(2000)),
            Skill::Expert => (None, None),
        }
    }

    /// `limits` with this level's caps applied (an infinite search stays infinite only at
    /// expert level).
    pub fn apply(self, limits: &SearchLimits) -> SearchLimits {
        let (d, t) = self.caps();
        let mut l = limits.clone();
        if let Some(d) = d {
            l.depth = Some(l.depth.map_or(d, |x| x.min(d)));
            l.infinite = false;
        }
        if let Some(t) = t {
            l.movetime_ms = Some(l.movetime_ms.map_or(t, |x| x.min(t)));
        }
        l
    }
}
