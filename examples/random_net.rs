//! Writes a network with random weights (`Network::random`, SCReLU, XiangqiPlanes): a stand-in
//! of a trained network's size for speed measurements and for trying `--net` / `EvalFile`
//! before there is a trained one. It plays nonsense.
//!
//! `cargo run --release --example random_net -- OUT [HIDDEN] [BUCKETS] [SEED]`
//! (defaults: 256 hidden neurons, 8 output buckets, seed 1).

use xqtune::eval::nnue::{Activation, Network};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        return Err("usage: random_net OUT [HIDDEN] [BUCKETS] [SEED]".into());
    };
    let number = |i: usize, default: u64| -> Result<u64, Box<dyn std::error::Error>> {
        match args.get(i) {
            Some(v) => Ok(v.parse().map_err(|_| format!("'{v}' is not a number"))?),
            None => Ok(default),
        }
    };
    let (hidden, buckets, seed) = (number(1, 256)?, number(2, 8)?, number(3, 1)?);
    let net = Network::random(seed, hidden as usize, buckets as usize, Activation::SCReLU);
    net.save(std::path::Path::new(out))?;
    println!("{out}: {net:?}");
    Ok(())
}
