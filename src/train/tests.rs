//! The trainer held to an f64 reference, to itself across thread counts and builds, and to a
//! task it must learn.

use super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::ops::ControlFlow;

fn arch(inputs: usize, hidden: usize, buckets: usize, activation: Activation) -> Architecture {
    Architecture {
        inputs,
        hidden,
        buckets,
        max_active: 12,
        activation,
    }
}

/// Samples with 1 to `max_active` random inputs per perspective and a target from a fixed
/// random linear "teacher": `sigmoid(Σ u[stm] - Σ u[other] + c[bucket])`, learnable by the
/// network.
fn synthetic(arch: &Architecture, n: usize, seed: u64) -> SampleSet {
    let mut teacher = ChaCha8Rng::seed_from_u64(99);
    let u: Vec<f64> = (0..arch.inputs)
        .map(|_| teacher.gen_range(-0.6..0.6))
        .collect();
    let c: Vec<f64> = (0..arch.buckets)
        .map(|_| teacher.gen_range(-0.5..0.5))
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut set = SampleSet::new(arch.sample_shape());
    for _ in 0..n {
        let feats = |rng: &mut ChaCha8Rng| -> Vec<u16> {
            let k = rng.gen_range(1..=arch.max_active);
            (0..k)
                .map(|_| rng.gen_range(0..arch.inputs) as u16)
                .collect()
        };
        let stm = feats(&mut rng);
        let other = feats(&mut rng);
        let bucket = rng.gen_range(0..arch.buckets) as u8;
        let z: f64 = stm.iter().map(|&i| u[i as usize]).sum::<f64>()
            - other.iter().map(|&i| u[i as usize]).sum::<f64>()
            + c[bucket as usize];
        let t = 1.0 / (1.0 + (-z).exp());
        set.push(&stm, &other, bucket, t as f32).unwrap();
    }
    set
}

/// The summed loss in f64, written plainly from the architecture's definition.
fn reference_loss(
    arch: &Architecture,
    params: &[f64],
    loss: &LossSettings,
    samples: &SampleSet,
    indices: &[u32],
) -> f64 {
    let l = arch.layout();
    let h = arch.hidden;
    let mut total = 0.0;
    for &i in indices {
        let s = samples.sample(i as usize);
        let b = s.bucket as usize;
        let mut out = params[l.out_bias.start + b];
        for (half, feats) in [s.stm, s.other].into_iter().enumerate() {
            for j in 0..h {
                let mut acc = params[l.ft_bias.start + j];
                for &f in feats {
                    acc += params[f as usize * h + j];
                }
                out += arch.activation.apply_f64(acc)
                    * params[l.out_weights.start + b * 2 * h + half * h + j];
            }
        }
        total += loss.loss_f64(out, s.target as f64);
    }
    total
}

fn config(arch: Architecture, batch_size: usize, chunk_size: usize, epochs: u32) -> TrainConfig {
    TrainConfig {
        arch,
        loss: LossSettings::default(),
        optimiser: AdamWSettings::default(),
        schedule: Schedule {
            epochs,
            batch_size,
            lr: LrSchedule::Cosine {
                lr: 0.01,
                final_lr: 0.001,
                epochs,
            },
        },
        chunk_size,
        seed: 5,
    }
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

fn check_gradient(activation: Activation, loss: LossSettings) {
    let arch = arch(10, 16, 3, activation);
    let samples = synthetic(&arch, 24, 1);
    let mut net = Network::new(arch, 11).unwrap();
    // Non-zero biases so every parameter has a gradient to check.
    let l = arch.layout();
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for w in &mut net.params_mut()[l.ft_bias.start..l.ft_bias.end] {
        *w = rng.gen_range(0.0..0.6);
    }
    for w in &mut net.params_mut()[l.out_bias.start..l.out_bias.end] {
        *w = rng.gen_range(-0.5..0.5);
    }
    let indices: Vec<u32> = (0..samples.len() as u32).rev().collect();
    let g = pool(3).install(|| gradient(&net, &loss, &samples, &indices, 5).unwrap());
    let base: Vec<f64> = net.params().iter().map(|&x| x as f64).collect();
    let f0 = reference_loss(&arch, &base, &loss, &samples, &indices);
    assert!(
        (g.loss_sum - f0).abs() < 1e-5 * f0.max(1.0),
        "{} vs {f0}",
        g.loss_sum
    );
    assert_eq!(g.samples, 24);
    let eps = 1e-6;
    let mut worst = (0.0f64, 0usize);
    for p in 0..base.len() {
        let mut plus = base.clone();
        plus[p] += eps;
        let mut minus = base.clone();
        minus[p] -= eps;
        let fd = (reference_loss(&arch, &plus, &loss, &samples, &indices)
            - reference_loss(&arch, &minus, &loss, &samples, &indices))
            / (2.0 * eps);
        let err = (g.values[p] as f64 - fd).abs() / (1e-3 + fd.abs());
        if err > worst.0 {
            worst = (err, p);
        }
    }
    let (err, p) = worst;
    assert!(
        err < 2e-3,
        "{activation:?}: parameter {p}: {} against finite difference, relative error {err}",
        g.values[p]
    );
}

#[test]
fn gradient_matches_finite_differences_crelu() {
    check_gradient(Activation::Crelu, LossSettings::default());
}

#[test]
fn gradient_matches_finite_differences_screlu() {
    check_gradient(Activation::Screlu, LossSettings::default());
}

#[test]
fn gradient_matches_finite_differences_other_loss() {
    check_gradient(
        Activation::Screlu,
        LossSettings {
            scale: 600.0,
            eval_scale: 400.0,
            power: 2.6,
        },
    );
}

#[test]
fn loss_matches_reference_and_forward() {
    let arch = arch(40, 32, 2, Activation::Screlu);
    let samples = synthetic(&arch, 300, 2);
    let net = Network::new(arch, 3).unwrap();
    let loss = LossSettings::default();
    let all: Vec<u32> = (0..300).collect();
    let params: Vec<f64> = net.params().iter().map(|&x| x as f64).collect();
    let expect = reference_loss(&arch, &params, &loss, &samples, &all) / 300.0;
    let got = super::loss(&net, &loss, &samples, 64).unwrap();
    assert!((got - expect).abs() < 1e-6, "{got} vs {expect}");
    let s = samples.sample(7);
    let y = net.forward(s.stm, s.other, s.bucket).unwrap() as f64;
    let p = 1.0 / (1.0 + (-y).exp());
    let l7 = reference_loss(&arch, &params, &loss, &samples, &[7]);
    assert!(((p - s.target as f64).powi(2) - l7).abs() < 1e-6);
}

/// Trains a few hundred steps in `threads` threads with `simd`, returning the checkpoint.
fn train_bytes(threads: usize, simd: Simd, activation: Activation) -> Vec<u8> {
    let arch = arch(50, 32, 2, activation);
    let samples = synthetic(&arch, 2000, 3);
    let mut t = Trainer::new(config(arch, 300, 64, 2)).unwrap();
    t.set_simd(simd).unwrap();
    pool(threads).install(|| {
        while !t.finished() {
            t.train_epoch(&samples, |_| ControlFlow::Continue(()))
                .unwrap();
        }
    });
    t.to_bytes()
}

#[test]
fn same_bits_on_1_and_4_threads() {
    for activation in [Activation::Crelu, Activation::Screlu] {
        let simd = Simd::detect();
        let one = train_bytes(1, simd, activation);
        let four = train_bytes(4, simd, activation);
        assert!(
            one == four,
            "{activation:?} {simd:?}: 1 and 4 threads differ"
        );
    }
}

/// Not promised (FMA may round differently on other code), but true of these loops: the
/// AVX2 build computes the same bits as the plain one.
#[test]
fn same_bits_with_and_without_avx2() {
    if !Simd::Avx2.available() {
        return;
    }
    for activation in [Activation::Crelu, Activation::Screlu] {
        let base = train_bytes(2, Simd::Plain, activation);
        let avx2 = train_bytes(2, Simd::Avx2, activation);
        assert!(base == avx2, "{activation:?}: the builds differ");
    }
}

/// Every build and block width gives the same gradient bits.
#[test]
fn same_gradient_for_every_build_and_width() {
    if !Simd::Avx2.available() {
        return;
    }
    for (hidden, activation) in [
        (16, Activation::Crelu),
        (48, Activation::Screlu),
        (64, Activation::Crelu),
        (128, Activation::Screlu),
    ] {
        let arch = arch(40, hidden, 3, activation);
        let samples = synthetic(&arch, 500, 9);
        let net = Network::new(arch, 2).unwrap();
        let indices: Vec<u32> = (0..500).rev().collect();
        let mut grads = [Simd::Plain, Simd::Avx2].map(|simd| {
            let mut ws = Workspace::new(&arch, 64).unwrap();
            ws.set_simd(simd).unwrap();
            let mut g = Gradient::zeros(&arch);
            pool(2).install(|| {
                ws.gradient(&net, &LossSettings::default(), &samples, &indices, &mut g)
                    .unwrap()
            });
            g
        });
        let [base, avx2] = &mut grads;
        assert!(base == avx2, "hidden {hidden}: the builds differ");
        assert!(base.values.iter().any(|&x| x != 0.0));
    }
}

#[test]
fn learns_a_linear_teacher() {
    let arch = arch(64, 32, 2, Activation::Screlu);
    let train = synthetic(&arch, 6000, 4);
    let valid = synthetic(&arch, 1000, 5);
    let mut cfg = config(arch, 128, 64, 12);
    cfg.schedule.lr = LrSchedule::Step {
        lr: 0.01,
        gamma: 0.3,
        every: 5,
    };
    let mut t = Trainer::new(cfg).unwrap();
    pool(2).install(|| {
        let start = t.validation_loss(&valid).unwrap();
        let mut last = f64::MAX;
        while !t.finished() {
            let r = t
                .train_epoch(&train, |b| {
                    assert!(b.loss.is_finite());
                    ControlFlow::Continue(())
                })
                .unwrap();
            assert!(r.completed);
            assert_eq!(r.batches, 47);
            last = r.loss;
        }
        let end = t.validation_loss(&valid).unwrap();
        assert!(
            end < 0.1 * start,
            "validation loss {start} -> {end} (last epoch's training loss {last})"
        );
    });
}

#[test]
fn checkpoint_round_trip_and_resume() {
    let arch = arch(30, 16, 2, Activation::Crelu);
    let samples = synthetic(&arch, 900, 6);
    let cfg = config(arch, 100, 32, 3);
    let p = pool(2);
    let mut straight = Trainer::new(cfg.clone()).unwrap();
    p.install(|| {
        while !straight.finished() {
            straight
                .train_epoch(&samples, |_| ControlFlow::Continue(()))
                .unwrap();
        }
    });

    let mut t = Trainer::new(cfg).unwrap();
    p.install(|| {
        t.train_epoch(&samples, |_| ControlFlow::Continue(()))
            .unwrap();
        let r = t
            .train_epoch(&samples, |b| {
                if b.batch == 3 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .unwrap();
        assert!(!r.completed);
        assert_eq!((r.epoch, r.batches), (1, 4));
    });
    assert_eq!((t.epoch(), t.batch()), (1, 4));
    let bytes = t.to_bytes();
    let mut resumed = Trainer::from_bytes(&bytes).unwrap();
    assert_eq!(resumed.to_bytes(), bytes, "exact round trip");
    assert_eq!(resumed.network(), t.network());
    assert_eq!(resumed.optimiser().moments(), t.optimiser().moments());
    assert_eq!(resumed.config(), t.config());
    // A different training set cannot continue the epoch.
    let fewer = synthetic(&arch, 800, 6);
    assert!(matches!(
        resumed.train_epoch(&fewer, |_| ControlFlow::Continue(())),
        Err(TrainError::DataChanged { .. })
    ));
    p.install(|| {
        let r = resumed
            .train_epoch(&samples, |_| ControlFlow::Continue(()))
            .unwrap();
        assert_eq!((r.epoch, r.batches, r.completed), (1, 5, true));
        while !resumed.finished() {
            resumed
                .train_epoch(&samples, |_| ControlFlow::Continue(()))
                .unwrap();
        }
    });
    assert!(
        resumed.to_bytes() == straight.to_bytes(),
        "a resumed run continues bit for bit"
    );
}

#[test]
fn bad_checkpoints_are_named_errors() {
    let arch = arch(20, 16, 1, Activation::Screlu);
    let bytes = Trainer::new(config(arch, 10, 10, 1)).unwrap().to_bytes();
    for len in (0..bytes.len()).step_by(7).chain([bytes.len() - 1]) {
        assert!(Trainer::from_bytes(&bytes[..len]).is_err(), "prefix {len}");
    }
    let mut flipped = bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 4;
    assert_eq!(
        Trainer::from_bytes(&flipped).err(),
        Some(CheckpointError::Checksum)
    );
    let mut magic = bytes.clone();
    magic[0] = b'Y';
    assert_eq!(
        Trainer::from_bytes(&magic).err(),
        Some(CheckpointError::Magic)
    );
    let mut version = bytes.clone();
    version[8] = 9;
    assert_eq!(
        Trainer::from_bytes(&version).err(),
        Some(CheckpointError::Version(9))
    );
    // A consistent checksum over a wrong parameter count.
    let mut count = bytes[..bytes.len() - 8].to_vec();
    let config_len = u32::from_le_bytes(count[12..16].try_into().unwrap()) as usize;
    let at = 16 + config_len + 4 + 8 + 8 + 8;
    count[at] ^= 1;
    let sum = crate::util::fnv1a(count.iter().copied());
    count.extend_from_slice(&sum.to_le_bytes());
    assert!(matches!(
        Trainer::from_bytes(&count),
        Err(CheckpointError::Size { .. })
    ));
    assert!(Trainer::from_bytes(&[]).is_err());
}

#[test]
fn gradients_travel_exactly() {
    let arch = arch(12, 16, 2, Activation::Crelu);
    let samples = synthetic(&arch, 40, 8);
    let net = Network::new(arch, 1).unwrap();
    let loss = LossSettings::default();
    let first: Vec<u32> = (0..20).collect();
    let second: Vec<u32> = (20..40).collect();
    let mut g = gradient(&net, &loss, &samples, &first, 8).unwrap();
    let h = gradient(&net, &loss, &samples, &second, 8).unwrap();
    let json = serde_json::to_string(&h).unwrap();
    assert_eq!(serde_json::from_str::<Gradient>(&json).unwrap(), h);
    assert_eq!(Gradient::from_le_bytes(&h.to_le_bytes()), Some(h.clone()));
    assert_eq!(Gradient::from_le_bytes(&h.to_le_bytes()[..30]), None);
    // Two shards summed in order: the gradient of all 40 up to rounding.
    g.add(&h).unwrap();
    let all: Vec<u32> = (0..40).collect();
    let whole = gradient(&net, &loss, &samples, &all, 8).unwrap();
    assert_eq!(g.samples, 40);
    for (a, b) in g.values.iter().zip(&whole.values) {
        assert!((a - b).abs() <= 1e-6 * (1.0 + b.abs()));
    }
}

#[test]
fn refuses_samples_that_do_not_fit() {
    let small = arch(12, 16, 2, Activation::Crelu);
    let big = arch(13, 16, 2, Activation::Crelu);
    let samples = synthetic(&big, 10, 1);
    let net = Network::new(small, 1).unwrap();
    assert!(matches!(
        gradient(&net, &LossSettings::default(), &samples, &[0, 1], 4),
        Err(TrainError::Shape { .. })
    ));
    let ok = synthetic(&small, 10, 1);
    assert!(gradient(&net, &LossSettings::default(), &ok, &[0, 10], 4).is_err());
    let mut t = Trainer::new(config(small, 4, 4, 1)).unwrap();
    assert!(matches!(
        t.train_epoch(&SampleSet::new(small.sample_shape()), |_| {
            ControlFlow::Continue(())
        }),
        Err(TrainError::NoSamples)
    ));
}

/// The trainer knows nothing of chess: its sources name no module of the crate but
/// `crate::util` (seeding, hashing) and its own. `tests/layering.rs` holds the crate-wide
/// rules; this one keeps the contract next to the code it binds.
#[test]
fn train_uses_no_chess() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/train");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("tests.rs") {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        // Test modules may use anything (as in tests/layering.rs).
        let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '{')
                .collect();
            assert!(
                name == "util" || name == "train",
                "{} uses crate::{name}",
                path.display()
            );
        }
    }
    assert!(files >= 8, "read {files} files of {}", dir.display());
}
