//! Plumbing shared by `play`, `tune` and `import`: atomic file writes, run folders, seeding and
//! stable hashing. One copy of each, so a match, a tuning run and an import write, name and seed
//! things the same way. [`cpu`] picks the build of the inner loops that the inference and the
//! trainer run; [`flags`] refuses flag values that their types admit but that mean nothing;
//! [`out`] prints the lines of the commands that start engines.

pub mod cpu;
pub mod flags;
pub mod out;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes `path` through a temporary file in the same folder (created if missing): fill, fsync,
/// rename, then fsync the folder where the platform allows it, so a reader or a run killed
/// mid-write sees the old content or the new, never half of it. The temporary file is removed
/// on failure.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| std::io::Error::other("the path has no file name"))?;
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| {
        let mut w = BufWriter::new(File::create(&tmp)?);
        fill(&mut w)?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result?;
    // The rename is durable only once the folder is: best effort (not every platform can
    // open a folder for syncing).
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// [`write_atomic_with`] for bytes already in memory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Creates `out/<utc-timestamp>_<kind>_<name>/` (`-2`, `-3`, .. when taken) with the given
/// sub-folders; characters of `name` that do not belong in a file name become `replace`.
pub fn create_run_dir(
    out: &Path,
    kind: &str,
    name: &str,
    replace: char,
    subdirs: &[&str],
) -> std::io::Result<PathBuf> {
    let ts = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                replace
            }
        })
        .collect();
    let mut dir = out.join(format!("{ts}_{kind}_{clean}"));
    let mut k = 1;
    while dir.exists() {
        k += 1;
        dir = out.join(format!("{ts}_{kind}_{clean}-{k}"));
    }
    std::fs::create_dir_all(&dir)?;
    for sub in subdirs {
        std::fs::create_dir_all(dir.join(sub))?;
    }
    Ok(dir)
}

/// SplitMix64's increment (the golden ratio in 64 bits).
pub const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function (Steele, Lea & Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014; Vigna's constants): a bijection that spreads every input bit.
pub const fn splitmix_finalise(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One SplitMix64 step from `state`: the next state and its output.
pub const fn splitmix_next(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(GOLDEN_GAMMA);
    (s, splitmix_finalise(s))
}

/// The first SplitMix64 output from state `z`: decorrelates seeds derived from (run seed,
/// step, index).
pub const fn splitmix(z: u64) -> u64 {
    splitmix_next(z).1
}

/// A seed for one sub-stream: the same (seed, parts) always gives the same value, so every
/// step's randomness is a function of the run seed and the step number alone (a resumed run
/// replays exactly what an uninterrupted one would have).
pub fn mix(seed: u64, parts: &[u64]) -> u64 {
    parts
        .iter()
        .fold(splitmix(seed), |h, &p| splitmix(h ^ splitmix(p)))
}

/// FNV-1a over bytes: a stable hash for seeds and records (std's hasher may change between
/// releases).
pub fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    bytes.into_iter().fold(OFFSET, fnv1a_step)
}

/// One byte of FNV-1a, for callers that hash a stream in pieces.
pub fn fnv1a_step(h: u64, byte: u8) -> u64 {
    (h ^ byte as u64).wrapping_mul(0x0000_0100_0000_01b3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_is_stable_and_spreads() {
        assert_eq!(mix(1, &[2, 3]), mix(1, &[2, 3]));
        assert_ne!(mix(1, &[2, 3]), mix(1, &[3, 2]));
        assert_ne!(mix(1, &[0]), mix(2, &[0]));
    }

    #[test]
    fn splitmix_matches_the_reference_stream() {
        // Vigna's splitmix64.c seeded with 0 starts with these outputs.
        let (s, a) = splitmix_next(0);
        let (_, b) = splitmix_next(s);
        assert_eq!(a, 0xe220_a839_7b1d_cdaf);
        assert_eq!(b, 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn fnv1a_known_values() {
        assert_eq!(fnv1a(*b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(*b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn atomic_write_replaces_whole_files() {
        let dir = std::env::temp_dir().join(format!("xqtune-util-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.txt");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left behind");
        let a = create_run_dir(&dir, "t", "a b", '-', &["plots"]).unwrap();
        let b = create_run_dir(&dir, "t", "a b", '-', &["plots"]).unwrap();
        assert_ne!(a, b);
        assert!(a.to_string_lossy().ends_with("_t_a-b") && a.join("plots").is_dir());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
