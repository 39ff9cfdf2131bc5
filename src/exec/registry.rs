//! What a worker rank can run: the code of each job and resident kind, found by its name on the
//! wire. The binary (the one place that knows every command) builds it; the executor only looks
//! names up.

use super::{Job, Resident, Share, context, decode, encode};
use std::collections::HashMap;

/// Runs a job from its encoded input, giving its encoded output.
pub(crate) type JobFn = Box<dyn Fn(&[u8]) -> Result<Vec<u8>, String> + Send + Sync>;
/// Loads a resident share from its encoded spec.
pub(crate) type LoadFn =
    Box<dyn Fn(&[u8], Share) -> Result<Box<dyn AnyResident>, String> + Send + Sync>;

/// A loaded resident share whose type only its own code knows.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) trait AnyResident: Send + Sync {
    /// Answers an encoded query with an encoded answer.
    fn answer_bytes(&self, query: &[u8]) -> Result<Vec<u8>, String>;
}

impl<R: Resident> AnyResident for R {
    fn answer_bytes(&self, query: &[u8]) -> Result<Vec<u8>, String> {
        let q: R::Query = decode(query, R::KIND)?;
        Ok(encode(&self.answer(&q)))
    }
}

/// The kinds of work a worker rank serves.
#[derive(Default)]
pub struct Registry {
    pub(crate) jobs: HashMap<&'static str, JobFn>,
    pub(crate) residents: HashMap<&'static str, LoadFn>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Adds job kind `J`.
    pub fn job<J: Job>(mut self) -> Registry {
        let run: JobFn = Box::new(|bytes| {
            let job: J = decode(bytes, J::KIND)?;
            Ok(encode(&job.run(&context::<J>())))
        });
        if self.jobs.insert(J::KIND, run).is_some() {
            panic!("two job kinds are named {}", J::KIND);
        }
        self
    }

    /// Adds resident kind `R`.
    pub fn resident<R: Resident>(mut self) -> Registry {
        let load: LoadFn = Box::new(|bytes, share| {
            let spec: R::Spec = decode(bytes, R::KIND)?;
            match R::load(&spec, share) {
                Ok(r) => Ok(Box::new(r) as Box<dyn AnyResident>),
                Err(e) => Err(e.to_string()),
            }
        });
        if self.residents.insert(R::KIND, load).is_some() {
            panic!("two resident kinds are named {}", R::KIND);
        }
        self
    }

    /// The kinds it serves, sorted (for error messages and tests).
    pub fn kinds(&self) -> Vec<&'static str> {
        let mut k: Vec<&'static str> = self
            .jobs
            .keys()
            .chain(self.residents.keys())
            .copied()
            .collect();
        k.sort_unstable();
        k
    }

    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn run_job(&self, kind: &str, input: &[u8]) -> Result<Vec<u8>, String> {
        match self.jobs.get(kind) {
            Some(run) => run(input),
            None => Err(format!(
                "this rank has no job kind '{kind}' (it serves {:?})",
                self.kinds()
            )),
        }
    }

    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn load(
        &self,
        kind: &str,
        spec: &[u8],
        share: Share,
    ) -> Result<Box<dyn AnyResident>, String> {
        match self.residents.get(kind) {
            Some(load) => load(spec, share),
            None => Err(format!(
                "this rank has no resident kind '{kind}' (it serves {:?})",
                self.kinds()
            )),
        }
    }
}
