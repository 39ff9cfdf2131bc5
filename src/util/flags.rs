//! Value parsers for command-line flags whose type alone admits values that mean nothing: a
//! count of game pairs given as an odd number, a rate that is not a finite positive number, a
//! probability outside [0, 1].
//! Clap reports a parser's message with the flag's name (`invalid value '3' for '--games
//! <GAMES>': ...`), so a bad value stops the command before anything runs, instead of being
//! rounded or carried into a run (an SPSA with `--lr nan` moved every parameter to NaN).

/// Games played as pairs with colours swapped: an even number, at least 2.
pub fn game_pairs(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number of games"))?;
    if n < 2 || !n.is_multiple_of(2) {
        return Err(format!(
            "{n}: the games are played in pairs with colours swapped, so the number must be \
             even and at least 2"
        ));
    }
    Ok(n)
}

/// A finite number greater than zero.
pub fn positive(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if v > 0.0 {
        Ok(v)
    } else {
        Err(format!("{v} must be greater than 0"))
    }
}

/// A finite number, zero or more.
pub fn non_negative(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("{v} must be 0 or more"))
    }
}

/// A probability: a number in [0, 1], refused otherwise (not clamped).
pub fn probability(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not a probability in [0, 1]"))
    }
}

fn number(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("'{s}' is not a finite number"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_pairs_takes_even_counts_only() {
        assert_eq!(game_pairs("2"), Ok(2));
        assert_eq!(game_pairs(" 28 "), Ok(28));
        for bad in ["0", "1", "3", "-2", "x", ""] {
            assert!(game_pairs(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rates_are_finite() {
        assert_eq!(positive("0.008"), Ok(0.008));
        assert_eq!(non_negative("0"), Ok(0.0));
        for bad in ["0", "-1", "nan", "inf", "-inf", "x"] {
            assert!(positive(bad).is_err(), "{bad}");
        }
        for bad in ["-0.1", "NaN", "infinity"] {
            assert!(non_negative(bad).is_err(), "{bad}");
        }
        assert_eq!(probability("1"), Ok(1.0));
        for bad in ["1.01", "-0.5", "nan", "x"] {
            assert!(probability(bad).is_err(), "{bad}");
        }
    }
}
