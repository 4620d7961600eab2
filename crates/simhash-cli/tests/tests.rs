//! Integration tests of the `simhash` binaries.
