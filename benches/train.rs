//! Network-training speed: one slice of an epoch (`SLICE` samples in batches of `BATCH`, each
//! batch a gradient and an AdamW step, as `Trainer::train_epoch` runs them) at hidden widths
//! 256 and 512, on 1 and 2 threads. The samples are synthetic: 1260 inputs, 28 to 32 active per
//! perspective, 8 output buckets, about what a Xiangqi position gives. They are drawn in a
//! shuffled order from a set of `SET` samples, larger than the processor's caches, as an epoch
//! over millions of samples reads them. Criterion reports samples per second.
//! `cargo bench --bench train`; issue 28 asks for an epoch of 10M samples in 60 s on 2 cores.
//! On a machine shared with other work, `TRAIN_BENCH_CLOCK=cpu` times the processor time the
//! process used (all its threads, from `/proc/self/stat`) instead of the wall clock: samples per
//! processor-second, what the loops cost whoever else is running.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};
use xqtune::train::{
    Activation, AdamWSettings, Architecture, Gradient, LossSettings, Network, Optimiser, SampleSet,
    TrainConfig, Workspace,
};

const INPUTS: usize = 1260;
const BUCKETS: usize = 8;
const SET: usize = 1 << 20;
const SLICE: usize = 1 << 16;
const BATCH: usize = 16384;

fn arch(hidden: usize) -> Architecture {
    Architecture {
        inputs: INPUTS,
        hidden,
        buckets: BUCKETS,
        max_active: 32,
        activation: Activation::Screlu,
    }
}

fn samples() -> SampleSet {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut set = SampleSet::with_capacity(arch(256).sample_shape(), SET, 60);
    for _ in 0..SET {
        let mut feats = || -> Vec<u16> {
            let k = rng.gen_range(28..=32);
            (0..k).map(|_| rng.gen_range(0..INPUTS as u16)).collect()
        };
        let (stm, other) = (feats(), feats());
        let bucket = rng.gen_range(0..BUCKETS as u8);
        let target = rng.gen_range(0.0..1.0);
        set.push(&stm, &other, bucket, target)
            .expect("a valid sample");
    }
    set
}

/// Processor seconds this process has used, all threads (Linux; clock ticks of 1/100 s).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
    let rest = &stat[stat.rfind(')').expect("stat format") + 1..];
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|x| x.parse().expect("ticks"))
        .collect();
    (f[0] + f[1]) as f64 / 100.0
}

fn bench(c: &mut Criterion) {
    let cpu_clock = std::env::var("TRAIN_BENCH_CLOCK").is_ok_and(|v| v == "cpu");
    let set = samples();
    let mut order: Vec<u32> = (0..SET as u32).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(2));
    let mut g = c.benchmark_group("train");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8))
        .throughput(Throughput::Elements(SLICE as u64));
    let loss = LossSettings::default();
    for hidden in [256, 512] {
        let arch = arch(hidden);
        let mut net = Network::new(arch, 1).expect("network");
        let mut optimiser =
            Optimiser::new(AdamWSettings::default(), arch.parameters()).expect("optimiser");
        let mut workspace = Workspace::new(&arch, TrainConfig::DEFAULT_CHUNK).expect("workspace");
        let mut gradient = Gradient::zeros(&arch);
        let mut at = 0;
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            g.bench_function(format!("epoch_slice_h{hidden}_t{threads}"), |b| {
                b.iter_custom(|iters| {
                    let (wall, cpu) = (Instant::now(), cpu_seconds());
                    for _ in 0..iters * (SLICE / BATCH) as u64 {
                        let batch = &order[at..at + BATCH];
                        at = (at + BATCH) % (SET - SET % BATCH);
                        pool.install(|| {
                            workspace
                                .gradient(&net, &loss, &set, batch, &mut gradient)
                                .expect("gradient");
                            optimiser
                                .step(&mut net, &gradient, BATCH, 0.001)
                                .expect("step");
                        })
                    }
                    if cpu_clock {
                        Duration::from_secs_f64(cpu_seconds() - cpu)
                    } else {
                        wall.elapsed()
                    }
                })
            });
        }
        // The dense AdamW update alone, once per batch whatever the batch size.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool");
        g.throughput(Throughput::Elements(arch.parameters() as u64));
        g.bench_function(format!("adamw_step_h{hidden}_t1"), |b| {
            b.iter(|| {
                pool.install(|| {
                    optimiser
                        .step(&mut net, &gradient, BATCH, 0.001)
                        .expect("step")
                })
            })
        });
        g.throughput(Throughput::Elements(SLICE as u64));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
