//! Python's keyword arguments mapped onto the one settings contract
//! ([`simhash_index::settings`]): `auto` resolved, defaults filled in, every combination and
//! value checked, and asked settings laid over a stored index, as the `simhash` command does
//! with its flags. The Python side passes each argument as given (`None` when not given) and
//! fills in nothing itself. The contract's messages name the command's flags; here they name
//! the arguments.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use simhash_index::Blocks;
use simhash_index::settings::{Asked, Matching, Method, Setting, SettingsError};

/// What the arguments ask, each `None` when not given: `method` (`"auto"`, `"minhash"` or
/// `"simhash"`; `None` is `"auto"`), `preset` (its name), the settings, and `templates`
/// (`"remove"` or `"keep"`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn asked(
    method: Option<&str>,
    preset: Option<&str>,
    jaccard: Option<f64>,
    lsh_threshold: Option<f64>,
    num_perm: Option<usize>,
    k: Option<u32>,
    blocks: Option<usize>,
    templates: Option<&str>,
) -> PyResult<Asked> {
    let method = match method {
        None | Some("auto") => Method::Auto,
        Some("minhash") => Method::Minhash,
        Some("simhash") => Method::Simhash,
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "method must be \"minhash\", \"simhash\" or \"auto\", not {other:?}"
            )));
        }
    };
    let preset = match preset {
        Some(name) => Some(name.parse().map_err(crate::errors::value)?),
        None => None,
    };
    let templates = match templates {
        Some(name) => Some(name.parse().map_err(PyValueError::new_err)?),
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
        templates,
        ..Asked::default()
    })
}

/// The contract's resolve: the method and its settings, defaults filled in and checked.
pub(crate) fn resolve(asked: &Asked) -> PyResult<Matching> {
    asked.resolve().map_err(|e| error(&e))
}

/// Resolved settings as a dict: `method`, then `jaccard`, `lsh_threshold`, `num_perm` and
/// `templates` (minhash), or `k` and `blocks` (simhash; `None`: the planner's choice).
pub(crate) fn matching_dict<'py>(
    py: Python<'py>,
    matching: &Matching,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("method", matching.method())?;
    match *matching {
        Matching::Minhash { jaccard, lsh_threshold, num_perm, templates, .. } => {
            dict.set_item("jaccard", jaccard)?;
            dict.set_item("lsh_threshold", lsh_threshold)?;
            dict.set_item("num_perm", num_perm)?;
            dict.set_item("templates", templates.name())?;
        }
        Matching::Simhash { distance, blocks } => {
            dict.set_item("k", distance)?;
            dict.set_item(
                "blocks",
                match blocks {
                    Blocks::Fixed(n) => Some(n),
                    Blocks::Auto => None,
                },
            )?;
        }
    }
    Ok(dict)
}

/// A refusal of the contract as a `ValueError`, naming the arguments: `--jaccard` is
/// `jaccard`, `--method minhash` is `method='minhash'`, and so on ([`argument`]).
pub(crate) fn error(e: &SettingsError) -> PyErr {
    let mut text = e.message(&argument);
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    PyValueError::new_err(text)
}

/// A setting as this module's arguments name it.
fn argument(setting: Setting) -> String {
    match setting {
        Setting::Method(Some(Method::Auto)) => "method='auto'".to_string(),
        Setting::Method(Some(Method::Minhash)) => "method='minhash'".to_string(),
        Setting::Method(Some(Method::Simhash)) => "method='simhash'".to_string(),
        Setting::Method(None) => "method".to_string(),
        Setting::Distance => "k".to_string(),
        Setting::Blocks => "blocks".to_string(),
        Setting::Jaccard => "jaccard".to_string(),
        Setting::LshThreshold => "lsh_threshold".to_string(),
        Setting::NumPerm => "num_perm".to_string(),
        Setting::Templates => "templates".to_string(),
        // No argument of this module: its command-line name.
        other => other.flag(),
    }
}

/// The contract's resolve of the arguments as given (each `None` when not given): a dict
/// of the method and its settings ([`matching_dict`]). With nothing given, the contract's
/// defaults.
#[pyfunction]
#[pyo3(signature = (
    method=None, preset=None, jaccard=None, lsh_threshold=None, num_perm=None, k=None,
    blocks=None, templates=None
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn resolve_settings<'py>(
    py: Python<'py>,
    method: Option<&str>,
    preset: Option<&str>,
    jaccard: Option<f64>,
    lsh_threshold: Option<f64>,
    num_perm: Option<usize>,
    k: Option<u32>,
    blocks: Option<usize>,
    templates: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let asked = asked(method, preset, jaccard, lsh_threshold, num_perm, k, blocks, templates)?;
    matching_dict(py, &resolve(&asked)?)
}
