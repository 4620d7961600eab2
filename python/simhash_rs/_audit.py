"""A precision audit of a run: :func:`audit` reads a ``--report`` page and the labels
exported from it, as ``simhash audit`` does (the same library function, the same numbers)."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Union

from . import _native


def audit(report_path: Union[str, "os.PathLike[str]"], labels_path: Union[str, "os.PathLike[str]"]) -> Dict[str, Any]:
    """The estimate of ``simhash audit REPORT LABELS --json``, as a dict.

    ``report_path`` is a page written by ``--report`` (``dedup`` or ``pairs``);
    ``labels_path`` the labels file exported from it (JSONL: ``run_id``, ``id_a``, ``id_b``,
    ``label`` one of ``DUP``, ``TEMPLATE``, ``DISTINCT``, ``UNSURE``). The dict holds, per
    similarity bucket (``buckets``), the pairs of the run, on the page and labelled, the
    weight of a labelled pair, and each label's ``shares`` (``count``, ``share``, ``low``,
    ``high``: a 95% Wilson interval; ``share`` is ``None`` in a bucket without labels, whose
    interval is 0 to 1); the same weighted over the buckets with labels (``weighted``,
    Wilson at Kish's effective sample size ``effective_n``); ``lost_as_distinct`` (the
    documents removed that were distinct, with its interval); and ``confusion`` (the tool's
    relation against the labels). Lines of the labels file that are not labels of the
    page's pairs are left out and listed in ``bad_lines`` (``FILE:LINE: what``).

    Raises ``ValueError`` when the labels are of another run (the message names both run
    ids), ``OSError`` when a file cannot be read (``FileNotFoundError`` when it is not there)
    or the report is not a page with labelling.
    See docs/audit.md.
    """
    return json.loads(_native.audit(os.fspath(report_path), os.fspath(labels_path)))
