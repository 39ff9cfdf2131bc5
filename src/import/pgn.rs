//! PGN lexing: splits decoded text into games (tags and move texts), skipping comments (`{}`
//! and `;`), variations (`( )`, nested), NAGs (`$12`), move numbers (`12.`, `12...`, `12．`),
//! annotation marks (`!?`) and escape lines (`%`). Moves stay text here: the importer resolves
//! them against the rules core.

/// One game as it appears in the file, before any move is checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawGame {
    /// Tag pairs in file order.
    pub tags: Vec<(String, String)>,
    /// Move texts in order, stripped of numbers and annotation marks.
    pub moves: Vec<String>,
    /// The game termination marker (`1-0`, `0-1`, `1/2-1/2`, `*`), if one was found.
    pub termination: Option<String>,
    /// 1-based line where the game starts (for reports).
    pub line: usize,
    /// Problems of the text itself (an unterminated comment or tag), fatal for the game.
    pub malformed: Option<String>,
}

impl RawGame {
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn is_empty(&self) -> bool {
        self.tags.is_empty() && self.moves.is_empty() && self.termination.is_none()
    }
}

fn is_termination(t: &str) -> bool {
    matches!(t, "1-0" | "0-1" | "1/2-1/2" | "½-½" | "*")
}

/// Removes a leading move number (`1.`, `12...`, `3．`) and trailing annotation marks.
fn clean_move_token(token: &str) -> &str {
    let digits = token
        .char_indices()
        .find(|(_, c)| !c.is_ascii_digit())
        .map(|(i, _)| i)
        .unwrap_or(token.len());
    let rest = &token[digits..];
    let after_dots = rest.trim_start_matches(['.', '．', '…']);
    // `33.4` is a WXF move (middle pawn of file 3 to file 4), not move 33 then `4`.
    let wxf_pawn = after_dots.len() == 1 && after_dots.as_bytes()[0].is_ascii_digit();
    let t = if digits > 0 && after_dots.len() < rest.len() && !wxf_pawn {
        after_dots
    } else if digits == token.len() {
        // A bare number (`12` before `.` separated by a space) is a move number too.
        ""
    } else {
        token
    };
    t.trim_end_matches(['!', '?', '#'])
}

/// Parses a tag body (`Name "value"`), unescaping `\"` and `\\`.
fn parse_tag(body: &str) -> Option<(String, String)> {
    let body = body.trim();
    let name_end = body.find(|c: char| c.is_whitespace() || c == '"')?;
    let name = &body[..name_end];
    let rest = body[name_end..].trim();
    let inner = rest.strip_prefix('"')?;
    let mut value = String::new();
    let mut chars = inner.chars();
    loop {
        match chars.next()? {
            '\\' => value.push(chars.next()?),
            '"' => break,
            c => value.push(c),
        }
    }
    if name.is_empty() {
        return None;
    }
    Some((name.to_string(), value))
}

/// Reads `Name "value"` where the value may contain unescaped quotes: it runs from the first
/// to the last quote.
fn parse_tag_lenient(body: &str) -> Option<(String, String)> {
    let body = body.trim();
    let name_end = body.find(|c: char| c.is_whitespace() || c == '"')?;
    let name = &body[..name_end];
    let rest = body[name_end..].trim();
    if name.is_empty() || rest.len() < 2 || !rest.starts_with('"') || !rest.ends_with('"') {
        return None;
    }
    let value = rest[1..rest.len() - 1]
        .replace("\\\"", "\"")
        .replace("\\\\", "\\");
    Some((name.to_string(), value))
}

/// Splits PGN text into games.
pub fn split_games(text: &str) -> Vec<RawGame> {
    // The lexer walks bytes: every delimiter is ASCII, so slicing at them keeps UTF-8 valid
    // (and costs a quarter of the memory of a `Vec<char>` on a 30 MB collection).
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let b = text.as_bytes();
    let mut games = Vec::new();
    let mut cur = RawGame {
        line: 1,
        ..RawGame::default()
    };
    let mut in_movetext = false;
    let mut i = 0;
    let mut line = 1usize;
    let mut at_line_start = true;
    let finish = |cur: &mut RawGame, games: &mut Vec<RawGame>, line: usize| {
        let done = std::mem::replace(
            cur,
            RawGame {
                line,
                ..RawGame::default()
            },
        );
        if !done.is_empty() {
            games.push(done);
        }
    };
    // Index of the next `byte` at or after `from` (or the end), counting newlines passed.
    let skip_to = |from: usize, byte: u8, line: &mut usize| -> usize {
        let mut j = from;
        while j < b.len() && b[j] != byte {
            if b[j] == b'\n' {
                *line += 1;
            }
            j += 1;
        }
        j
    };
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            at_line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let line_start = at_line_start;
        at_line_start = false;
        match c {
            b'%' if line_start => {
                i = skip_to(i, b'\n', &mut line);
            }
            b'[' => {
                if in_movetext {
                    finish(&mut cur, &mut games, line);
                    in_movetext = false;
                }
                if cur.is_empty() {
                    cur.line = line;
                }
                let start = i + 1;
                let mut j = start;
                let mut in_quotes = false;
                while j < b.len() {
                    match b[j] {
                        b'\\' if in_quotes => j += 1,
                        b'"' => in_quotes = !in_quotes,
                        b']' if !in_quotes => break,
                        b'\n' => break,
                        _ => {}
                    }
                    j += 1;
                }
                let j = j.min(b.len());
                let closed = j < b.len() && b[j] == b']';
                let rest_of_line_ok = || {
                    b[(j + 1).min(b.len())..]
                        .iter()
                        .find(|c| !matches!(c, b' ' | b'\t' | b'\r'))
                        .is_none_or(|&c| c == b'\n' || c == b'[')
                };
                let body = &text[start..j];
                match parse_tag(body) {
                    Some(tag) if closed && rest_of_line_ok() => {
                        cur.tags.push(tag);
                        i = j + 1;
                    }
                    _ => {
                        // Real files have unescaped quotes in values (`[Event ""A杯"B"]`): take
                        // the text between the first and the last quote before the line's last `]`.
                        let line_end = b[i..]
                            .iter()
                            .position(|&c| c == b'\n')
                            .map_or(b.len(), |p| i + p);
                        let last = b[i..line_end].iter().rposition(|&c| c == b']');
                        let lenient = last.and_then(|p| {
                            parse_tag_lenient(&text[start..i + p]).map(|t| (t, i + p))
                        });
                        match lenient {
                            Some((tag, end)) => {
                                cur.tags.push(tag);
                                i = end + 1;
                            }
                            None => {
                                cur.malformed.get_or_insert_with(|| {
                                    format!("malformed tag on line {line}: [{body}")
                                });
                                i = j + 1;
                            }
                        }
                    }
                }
            }
            b'{' => {
                let open_line = line;
                i = skip_to(i + 1, b'}', &mut line);
                if i >= b.len() {
                    cur.malformed.get_or_insert_with(|| {
                        format!("comment opened on line {open_line} is never closed")
                    });
                }
                i += 1;
            }
            b';' => {
                i = skip_to(i, b'\n', &mut line);
            }
            b'(' => {
                let open_line = line;
                let mut depth = 0usize;
                while i < b.len() {
                    match b[i] {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        b'{' => i = skip_to(i, b'}', &mut line),
                        b'\n' => line += 1,
                        _ => {}
                    }
                    i += 1;
                }
                if i >= b.len() {
                    cur.malformed.get_or_insert_with(|| {
                        format!("variation opened on line {open_line} is never closed")
                    });
                }
                i += 1;
            }
            b')' | b'}' => {
                cur.malformed
                    .get_or_insert_with(|| format!("unmatched '{}' on line {line}", c as char));
                i += 1;
            }
            _ => {
                let start = i;
                while i < b.len()
                    && !b[i].is_ascii_whitespace()
                    && !matches!(b[i], b'{' | b'}' | b'(' | b')' | b'[' | b']' | b';')
                {
                    i += 1;
                }
                in_movetext = true;
                // Unicode spaces (U+3000 in Chinese text) separate tokens too.
                for token in text[start..i].split_whitespace() {
                    if token.starts_with('$') {
                        continue;
                    }
                    if is_termination(token) {
                        cur.termination = Some(token.to_string());
                        finish(&mut cur, &mut games, line);
                        in_movetext = false;
                        continue;
                    }
                    let mv = clean_move_token(token);
                    if !mv.is_empty() {
                        cur.moves.push(mv.to_string());
                    }
                }
            }
        }
    }
    finish(&mut cur, &mut games, line);
    games
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_tags_moves_and_results() {
        let text = "[Event \"a \\\"b\\\"\"]\n[FEN \"x\"]\n\n1. 炮二平五 {comment\n two lines} 馬８進７ ; rest\n\
                    2.馬二進三 $1 (2. h0g2 {x} (2. c3c4)) 車９平８!? 3... h2e2\n1-0\n\n\
                    [Event \"second\"]\n1. h2e2 *\n[Event \"third\"]\n1. h2e2\n";
        let games = split_games(text);
        assert_eq!(games.len(), 3);
        assert_eq!(games[0].tag("event"), Some("a \"b\""));
        assert_eq!(games[0].tag("FEN"), Some("x"));
        assert_eq!(
            games[0].moves,
            ["炮二平五", "馬８進７", "馬二進三", "車９平８", "h2e2"]
        );
        assert_eq!(games[0].termination.as_deref(), Some("1-0"));
        assert_eq!(games[0].malformed, None);
        assert_eq!(games[1].termination.as_deref(), Some("*"));
        assert_eq!(games[1].line, 9);
        assert_eq!(games[2].termination, None);
        assert_eq!(games[2].moves, ["h2e2"]);
    }

    #[test]
    fn tolerates_unescaped_quotes_in_tag_values() {
        let text =
            "[Event \"\"A杯“B 1995\"]\n[Round \"1\"] [Site \"x\"]\n[Red \"a\"b\"]\n1. h2e2 1-0";
        let games = split_games(text);
        assert_eq!(games.len(), 1);
        assert_eq!(games[0].malformed, None);
        assert_eq!(games[0].tag("Event"), Some("\"A杯“B 1995"));
        assert_eq!(games[0].tag("Round"), Some("1"));
        assert_eq!(games[0].tag("Site"), Some("x"));
        assert_eq!(games[0].tag("Red"), Some("a\"b"));
        assert_eq!(games[0].moves, ["h2e2"]);
    }

    #[test]
    fn reports_unclosed_comment() {
        let games = split_games("[Event \"x\"]\n1. h2e2 { never closed\n");
        assert_eq!(games.len(), 1);
        assert!(
            games[0]
                .malformed
                .as_deref()
                .unwrap()
                .contains("never closed")
        );
    }

    #[test]
    fn wxf_moves_keep_their_signs() {
        let games = split_games("1. C2.5 H8+7 2. R+=3 -R-1 3. 33.4 7+.6 1/2-1/2");
        assert_eq!(
            games[0].moves,
            ["C2.5", "H8+7", "R+=3", "-R-1", "33.4", "7+.6"]
        );
        assert_eq!(games[0].termination.as_deref(), Some("1/2-1/2"));
    }
}
