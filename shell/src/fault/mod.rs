//! Faults told in one line: panics while serving (a hook that logs each as one line, and a
//! quiet catch for a library's panics), and messages with their build paths and line breaks
//! taken out. Used by the store and the host alike; depends on nothing of theirs.

pub mod panics;
pub mod tidy;
