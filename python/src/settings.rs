//! Python's keyword arguments mapped onto the one settings contract
//! ([`simhash_index::settings`]): `auto` resolved, every combination and value checked, and
//! asked settings laid over a stored index, as the `simhash` command does with its flags.
//! The contract's messages name the command's flags; here they name the arguments.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use simhash_index::Blocks;
use simhash_index::settings::{Asked, Method, SettingsError};

/// What the arguments ask: `method` (`"auto"`, `"minhash"` or `"simhash"`), `preset` (its
/// name), and each setting `None` when not given.
#[allow(clippy::too_many_arguments)]
pub(crate) fn asked(
    method: &str,
    preset: Option<&str>,
    jaccard: Option<f64>,
    lsh_threshold: Option<f64>,
    num_perm: Option<usize>,
    k: Option<u32>,
    blocks: Option<usize>,
) -> PyResult<Asked> {
    let method = match method {
        "auto" => Method::Auto,
        "minhash" => Method::Minhash,
        "simhash" => Method::Simhash,
        other => {
            return Err(PyValueError::new_err(format!(
                "method must be \"minhash\", \"simhash\" or \"auto\", not {other:?}"
            )));
        }
    };
    let preset = match preset {
        Some(name) => Some(name.parse().map_err(crate::errors::value)?),
        None => None,
    };
    Ok(Asked {
        method,
        preset,
        distance: k,
        blocks: blocks.map(Blocks::Fixed),
        jaccard,
        lsh_threshold,
        num_perm,
        ..Asked::default()
    })
}

/// A refusal of the contract as a `ValueError`, naming the arguments: `--jaccard` is
/// `jaccard`, `--method minhash` is `method='minhash'`, and so on.
pub(crate) fn error(e: &SettingsError) -> PyErr {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    PyValueError::new_err(python_names(&text))
}

/// The command's flags in a message, as Python's argument names.
fn python_names(message: &str) -> String {
    const NAMES: [(&str, &str); 11] = [
        ("--method minhash", "method='minhash'"),
        ("--method simhash", "method='simhash'"),
        ("-k/--distance and --blocks", "k and blocks"),
        (
            "--jaccard, --lsh-threshold, --num-perm and --templates",
            "jaccard, lsh_threshold, num_perm and templates",
        ),
        ("--blocks/--distance", "blocks/k"),
        ("--lsh-threshold", "lsh_threshold"),
        ("--num-perm", "num_perm"),
        ("--jaccard", "jaccard"),
        ("--distance", "k"),
        ("--blocks", "blocks"),
        ("--method", "method"),
    ];
    NAMES.iter().fold(message.to_owned(), |text, (flag, name)| text.replace(flag, name))
}

/// `method` resolved (`"minhash"` or `"simhash"`) with every setting checked, as the
/// command resolves and checks its flags; the settings are `None` when not given.
#[pyfunction]
#[pyo3(signature = (method, preset, jaccard, lsh_threshold, num_perm, k, blocks))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn resolve_method(
    method: &str,
    preset: &str,
    jaccard: Option<f64>,
    lsh_threshold: Option<f64>,
    num_perm: Option<usize>,
    k: Option<u32>,
    blocks: Option<usize>,
) -> PyResult<&'static str> {
    let asked = asked(method, Some(preset), jaccard, lsh_threshold, num_perm, k, blocks)?;
    Ok(asked.resolve().map_err(|e| error(&e))?.method())
}
