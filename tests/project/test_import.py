"""`import truereward` stays light."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from truereward.util.moved import MOVED

HEAVY = ("prefect", "fsspec", "s3fs", "botocore", "boto3", "pydantic", "defusedxml")


def test_import_pulls_in_no_heavy_dependency():
    script = f"import sys, truereward\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_public_names_load_on_first_use():
    script = (
        "import sys, truereward\n"
        "truereward.fold\n"
        "assert 'pydantic' in sys.modules\n"
        "assert not any(m in sys.modules for m in ('prefect', 'fsspec', 's3fs', 'botocore'))\n"
        "truereward.publish\n"
        "assert not any(m in sys.modules for m in ('prefect', 'fsspec', 's3fs', 'botocore'))\n"
        "print(sorted(truereward.__all__) == sorted(set(truereward.__all__)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


def test_every_public_name_resolves():
    import truereward

    for name in truereward.__all__:
        assert getattr(truereward, name) is not None


def test_all_lists_exactly_the_lazy_names():
    import truereward

    assert set(truereward.__all__) == {*truereward._LAZY, "__version__"}


@pytest.mark.parametrize(
    ("package", "old", "new"),
    [
        ("truereward.publishing", "Decision", "PublishDecision"),
        ("truereward.evaluate", "Case", "EvaluationCase"),
        ("truereward.evaluate", "CaseOutcome", "EvaluationOutcome"),
        ("truereward.evaluate", "Comparison", "ExperimentComparison"),
        ("truereward.checks", "Scored", "ScoredCase"),
        ("truereward.checks", "Tally", "SuiteTally"),
        ("truereward.calibrate", "Case", "LabelledCase"),
    ],
)
def test_a_renamed_public_name_still_works_with_a_deprecation_warning(package, old, new):
    module = importlib.import_module(package)
    with pytest.warns(
        DeprecationWarning, match=f"{package}.{old} is deprecated; use {package}.{new}"
    ):
        value = getattr(module, old)
    assert value is getattr(module, new)
    assert old not in module.__all__ and new in module.__all__


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_moved_module_path_still_imports_with_a_deprecation_warning(old, monkeypatch):
    new = f"truereward.{MOVED[old]}"
    monkeypatch.delitem(sys.modules, f"truereward.{old}", raising=False)
    with pytest.warns(
        DeprecationWarning, match=f"truereward.{old} is deprecated; import {new}"
    ) as caught:
        module = importlib.import_module(f"truereward.{old}")
    assert caught[0].filename == __file__  # the importer's line, not importlib's
    assert module is importlib.import_module(new)
    assert module.__spec__.name == new


def test_an_old_pickle_of_a_moved_class_loads():
    script = (
        "import pickle, warnings\n"
        "warnings.simplefilter('ignore', DeprecationWarning)\n"
        "from truereward.record.cases import CaseResult\n"
        "print(pickle.loads(b'ctruereward.cases\\nCaseResult\\n.') is CaseResult)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
