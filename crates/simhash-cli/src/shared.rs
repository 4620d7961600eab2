//! The parts of this binary that `simhash-dist` runs too, so that both read records, report
//! bad ones and write output files in exactly the same way. Not an API: no stability promise.

pub use crate::corpus::is_hash_header;
pub use crate::input::{LineReader, LineStatus, Source, compressed_error};
pub use crate::output::{
    Output, check_paths, commit_all, install_signal_handler, register_inputs, remove_pending,
    temp_file,
};
pub use crate::record::{Columns, IdValue, Problem, Reason, parse_hash, parse_json};
