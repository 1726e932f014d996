//! Acceptance layers 2–5, after the node joined: read what the acceptance workloads
//! printed (nccl-tests, DCGM diagnostics, the AMD test runner's events, perftest,
//! nvbandwidth, the framework job), judge it against thresholds from the blueprint's
//! topology and against the node's previous record, and fill the acceptance record.
//!
//! One parser per tool format, each a pure function of the text that reports problems by
//! line; [`input`] reads files, recognises their format and adds the file name.

pub mod amd_copy;
pub mod cluster;
pub mod complete;
pub mod dcgm;
pub mod dcgm_exporter;
pub mod fio;
pub mod ibstat;
pub mod input;
pub mod judge;
pub mod lines;
pub mod matrix;
pub mod nccl;
pub mod nvbandwidth;
pub mod p2p;
pub mod perftest;
pub mod power;
pub mod probe;
pub mod proftester;
pub mod rails;
pub mod recognise;
pub mod regression;
pub mod report;
pub mod rocm_bandwidth;
pub mod storage;
pub mod test_runner;
pub mod threshold;
pub mod topo;
